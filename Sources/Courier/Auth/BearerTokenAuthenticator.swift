import Foundation

/// NitroConnection's OAuth 2 flow: trades the user's name and password (sent as Basic) for a
/// token at a token endpoint, then sends `Authorization: Bearer <token>` on every covered request.
///
/// The token request bypasses the re-authentication queue. A token parser turns the endpoint's
/// response into the token and, optionally, its lifetime; an expired token is refreshed before
/// use. The `Authorization` header is replaced, never duplicated.
public struct BearerTokenAuthenticator: Authenticator {
    /// A token and how long it lives.
    public struct Token: Sendable {
        /// The token.
        public var value: String
        /// Its lifetime from now, if the endpoint said.
        public var expiresIn: Duration?

        /// Creates a token.
        public init(value: String, expiresIn: Duration? = nil) {
            self.value = value
            self.expiresIn = expiresIn
        }
    }

    private let tokenURL: URL
    private let method: HTTPRequest.Method
    private let credentials: BasicAuthenticator.Provider
    private let parse: @Sendable (HTTPResponse) throws -> Token
    private let retryRefresh: (@Sendable (any Error, Int) async -> Bool)?

    /// Creates the authenticator.
    /// - Parameters:
    ///   - tokenURL: the token endpoint.
    ///   - method: the token request's method; POST by default.
    ///   - credentials: gives the user's name and password, sent to the endpoint as Basic.
    ///   - onRefreshFailure: decides whether a failed token request is tried again; `nil` gives up.
    ///   - parse: reads the token from the endpoint's response.
    public init(tokenURL: URL, method: HTTPRequest.Method = .post,
                credentials: @escaping BasicAuthenticator.Provider,
                onRefreshFailure: (@Sendable (any Error, Int) async -> Bool)? = nil,
                parse: @escaping @Sendable (HTTPResponse) throws -> Token) {
        self.tokenURL = tokenURL
        self.method = method
        self.credentials = credentials
        self.retryRefresh = onRefreshFailure
        self.parse = parse
    }

    /// Sets `Authorization: Bearer <token>`, replacing any other.
    public func apply(_ credential: Credential, to request: inout TransportRequest) {
        request.headers.set("Bearer " + credential.secret, for: "Authorization")
    }

    /// Requests a token.
    /// - Throws: ``HTTPConnectionError/authenticationFailed`` when no credentials are given or the
    ///   endpoint refuses; the parser's error when the response cannot be read.
    public func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
        guard let user = await credentials(BasicAuthenticator.Prompt(previousUser: nil)) else {
            throw HTTPConnectionError.authenticationFailed.with(detail: "no user name and password were given")
        }
        let request = HTTPRequest(method, tokenURL.absoluteString, headers: [
            "Authorization": BasicAuthenticator.headerValue(user: user.name, password: user.password),
            "Accept": "application/json",
        ])
        let response = try await context.send(request)
        guard response.status.kind == .success else {
            throw HTTPConnectionError.authenticationFailed.with(detail: "the token endpoint answered \(response.status)",
                                                                response: response)
        }
        let token = try parse(response)
        return Credential(user: user.name, secret: token.value,
                          expiresAt: token.expiresIn.map { Date().addingTimeInterval($0.timeInterval) })
    }

    /// Asks `onRefreshFailure`, or gives up.
    public func shouldRetryRefresh(after error: any Error, attempt: Int) async -> Bool {
        await retryRefresh?(error, attempt) ?? false
    }
}

extension Authenticator where Self == BearerTokenAuthenticator {
    /// Bearer tokens from a token endpoint; see ``BearerTokenAuthenticator``.
    public static func bearerToken(tokenURL: URL, method: HTTPRequest.Method = .post,
                                   credentials: @escaping BasicAuthenticator.Provider,
                                   onRefreshFailure: (@Sendable (any Error, Int) async -> Bool)? = nil,
                                   parse: @escaping @Sendable (HTTPResponse) throws -> BearerTokenAuthenticator.Token) -> BearerTokenAuthenticator {
        BearerTokenAuthenticator(tokenURL: tokenURL, method: method, credentials: credentials,
                                 onRefreshFailure: onRefreshFailure, parse: parse)
    }
}

import Foundation

/// Sends `Authorization: Basic` with a name and password from a provider.
///
/// The provider is asked when the server first rejects a request, and again each time it rejects
/// the password given. It may be interactive — a sign-in screen, a terminal prompt — and may
/// take as long as it needs: matching requests wait meanwhile. Returning `nil` gives up, and the
/// held requests fail with their 401.
///
/// ```swift
/// connection.authenticate(matching: .prefix(base), with: .basic { attempt in
///     attempt.previousWasRejected ? askUserAgain() : (name: "alice", password: savedPassword)
/// })
/// ```
public struct BasicAuthenticator: Authenticator {
    /// What the provider is told when asked for a name and password.
    public struct Prompt: Sendable {
        /// The user name of the credential that was rejected, if any.
        public let previousUser: String?
        /// Whether a credential was given before and the server rejected it.
        public var previousWasRejected: Bool { previousUser != nil }
    }

    /// Answers a prompt with a name and password, or `nil` to give up.
    public typealias Provider = @Sendable (Prompt) async -> (name: String, password: String)?

    private let provider: Provider

    /// Creates the authenticator.
    /// - Parameter provider: gives the name and password; see ``Provider``.
    public init(provider: @escaping Provider) {
        self.provider = provider
    }

    /// Sets `Authorization: Basic base64(name:password)`, replacing any other.
    public func apply(_ credential: Credential, to request: inout TransportRequest) {
        request.headers.set(Self.headerValue(user: credential.user ?? "", password: credential.secret), for: "Authorization")
    }

    /// Asks the provider.
    /// - Throws: ``HTTPConnectionError/authenticationFailed`` when the provider gives up.
    public func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
        guard let answer = await provider(Prompt(previousUser: previous?.user)) else {
            throw HTTPConnectionError.authenticationFailed.with(detail: "no user name and password were given")
        }
        return Credential(user: answer.name, secret: answer.password)
    }

    /// `Basic base64(user:password)`.
    public static func headerValue(user: String, password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}

extension Authenticator where Self == BasicAuthenticator {
    /// Basic authentication with names and passwords from `provider`.
    public static func basic(provider: @escaping BasicAuthenticator.Provider) -> BasicAuthenticator {
        BasicAuthenticator(provider: provider)
    }
}

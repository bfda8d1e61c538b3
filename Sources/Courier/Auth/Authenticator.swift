import Foundation

/// Obtains, applies and refreshes a credential for the requests it covers.
///
/// Register one on a connection (``HTTPConnection/authenticate(matching:with:store:refreshLimit:)``)
/// or for every connection (``HTTPConnection/authenticateAll(matching:with:store:refreshLimit:)``).
/// Courier's re-authentication queue then applies the current credential to every matching
/// request, and when a response says the credential was rejected (a 401 by default), holds the
/// matching requests while **exactly one** ``refresh(previous:context:)`` runs, then retries them.
///
/// Built-in: ``BasicAuthenticator`` (`.basic`) and ``BearerTokenAuthenticator`` (`.bearerToken`).
/// Write your own for other schemes, such as an API-key header.
public protocol Authenticator: Sendable {
    /// Puts the credential on a request, replacing any credential header already there.
    func apply(_ credential: Credential, to request: inout TransportRequest)

    /// The credential to put on the next covered request, asked before each one is sent.
    ///
    /// By default the credential the queue holds: the last refresh's, or the store's. An
    /// authenticator whose app keeps the credential itself (a session the user signs in to and
    /// out of outside Courier) returns the app's current one instead, or `nil` to send the request
    /// without any; the queue's own then serves only to count refreshes.
    /// - Parameter stored: the credential the queue holds, or `nil`.
    /// - Returns: the credential to apply, or `nil` to apply none.
    func credentialToSend(stored: Credential?) -> Credential?

    /// Obtains a new credential. Courier runs at most one refresh at a time per registration.
    /// - Parameters:
    ///   - previous: the credential that was rejected or expired; `nil` when there was none.
    ///   - context: sends requests that bypass the re-authentication queue (a token request).
    /// - Returns: the new credential.
    /// - Throws: when no credential can be had; ``shouldRetryRefresh(after:attempt:)`` decides what follows.
    func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential

    /// Whether the credential must be refreshed before use. By default, when it has expired.
    func needsRefresh(_ credential: Credential, now: Date) -> Bool

    /// Whether the response means the credential was rejected. By default, a 401 status.
    func isChallenge(_ response: HTTPResponse) -> Bool

    /// Decides, after a refresh failed, whether to try the refresh again (`true`) or give up
    /// (`false`, the default). Giving up fails every held request with its original 401.
    /// - Parameters:
    ///   - error: why the refresh failed.
    ///   - attempt: how many refresh attempts have failed in a row, starting at 1.
    func shouldRetryRefresh(after error: any Error, attempt: Int) async -> Bool
}

extension Authenticator {
    /// The credential the queue holds.
    public func credentialToSend(stored: Credential?) -> Credential? { stored }

    /// Refreshes when the credential's ``Credential/expiresAt`` has passed.
    public func needsRefresh(_ credential: Credential, now: Date) -> Bool {
        credential.expiresAt.map { $0 <= now } ?? false
    }

    /// A 401 status.
    public func isChallenge(_ response: HTTPResponse) -> Bool {
        response.status.code == 401
    }

    /// Gives up.
    public func shouldRetryRefresh(after error: any Error, attempt: Int) async -> Bool { false }
}

/// What a refresh can use: sending requests around the re-authentication queue.
public struct AuthenticationContext: Sendable {
    let sender: @Sendable (TransportRequest) async throws(HTTPConnectionError) -> HTTPResponse
    /// The URL relative targets of ``send(_:)-(HTTPRequest)`` are resolved against.
    public let baseURL: URL?
    /// The per-attempt timeout of a request that sets none: that of the request whose rejection
    /// started the refresh (its own, else its connection's, else the global default).
    let timeout: Duration
    /// The body limit of a request that sets none, taken like ``timeout``.
    let maxResponseBodySize: Int

    /// Sends a request that bypasses the re-authentication queue, so a token request never waits
    /// for the refresh it belongs to.
    ///
    /// The request is resolved as a connection resolves one: a relative target against
    /// ``baseURL`` (the base URL of the connection whose request started the refresh), its query
    /// and body encoded, its fields checked. The connection's default headers are not added: a
    /// refresh sends the fields it sets. It is not retried, and only redirects within its origin
    /// are followed: a redirect to another origin is returned as it is, so the request's body and
    /// credentials never leave the origin. Validation does not apply: every status is returned.
    ///
    /// ```swift
    /// let response = try await context.send(HTTPRequest(.put, "/account",
    ///                                                   body: .form(["name": name, "password": password])))
    /// ```
    /// - Throws: ``HTTPConnectionError/invalidURL`` for a target that does not resolve,
    ///   ``HTTPConnectionError/invalidRequest`` or ``HTTPConnectionError/invalidBody`` for a
    ///   request that cannot be sent, or the failure that ended it.
    public func send(_ request: HTTPRequest) async throws(HTTPConnectionError) -> HTTPResponse {
        let url = try RequestPlan.url(for: request, baseURL: baseURL)
        return try await sender(try RequestPlan.transportRequest(for: request, url: url, defaultHeaders: [:], timeout: timeout,
                                                                 maxResponseBodySize: maxResponseBodySize))
    }

    /// Sends a request built for the transport, as it is, around the re-authentication queue;
    /// as ``send(_:)-(HTTPRequest)`` otherwise. Prefer that one: it resolves relative targets and
    /// encodes bodies.
    public func send(_ request: TransportRequest) async throws(HTTPConnectionError) -> HTTPResponse {
        try await sender(request)
    }
}

/// Which request URLs an authenticator covers.
public struct URLMatcher: Sendable, CustomStringConvertible {
    private enum Rule: Sendable {
        case prefix(String, PrefixRule?)
        case regularExpression(String, NSRegularExpression)
        case everything
    }

    /// A prefix URL taken apart: its origin and its path.
    private struct PrefixRule: Sendable {
        let origin: URLOrigin
        let path: String
        /// The prefix as written, for a first test on a URL's text (``startsWithText(_:)``).
        let text: String

        init?(_ prefix: String) {
            guard let url = URL(string: prefix), let origin = URLOrigin(url), url.user == nil, url.query == nil else { return nil }
            self.origin = origin
            self.path = url.path
            self.text = prefix
        }

        /// Same origin, and the path is `path` itself or lies below it (segment by segment).
        func matches(_ url: URL) -> Bool {
            if startsWithText(url.absoluteString) { return true }
            guard URLOrigin(url) == origin else { return false }
            let candidate = url.path
            if path.isEmpty || path == "/" || candidate == path { return true }
            let directory = path.hasSuffix("/") ? path : path + "/"
            return candidate.hasPrefix(directory)
        }

        /// Whether `candidate` starts with the prefix as written, at a segment boundary: followed
        /// by `/`, `?`, `#` or nothing (or by anything, when the prefix ends in `/`). Such a URL has
        /// the prefix's scheme, host and port written the same way, and its decoded path starts
        /// with the prefix's path and a `/`, or is that path: the full test covers it too, and
        /// this one spares parsing it. Any other URL, however it is written, gets the full test.
        private func startsWithText(_ candidate: String) -> Bool {
            let prefix = text.utf8, whole = candidate.utf8
            guard whole.starts(with: prefix) else { return false }
            if prefix.last == UInt8(ascii: "/") { return true }
            guard let next = whole.dropFirst(prefix.count).first else { return true }
            return next == UInt8(ascii: "/") || next == UInt8(ascii: "?") || next == UInt8(ascii: "#")
        }
    }

    private let rule: Rule

    /// URLs of the prefix's origin (scheme, host and port, compared exactly) whose path is the
    /// prefix's path or lies below it, segment by segment. So `"https://api.example.com/v1"`
    /// covers `https://api.example.com/v1/rooms` but neither `https://api.example.com/v10`,
    /// `https://api.example.com.evil.net/v1` nor `https://api.example.com:443@evil.net/v1`.
    /// A prefix that is not an absolute URL with a host, or that has a user name or a query,
    /// covers nothing.
    public static func prefix(_ prefix: String) -> URLMatcher { URLMatcher(rule: .prefix(prefix, PrefixRule(prefix))) }

    /// URLs whose whole absolute string matches the regular expression (NitroConnection's
    /// `authenticateServicesMatchingRegexString`). The match is anchored at both ends, so
    /// `"https://api\\.example\\.com/.*"` does not cover `https://api.example.com.evil.net/`.
    /// - Throws: ``HTTPConnectionError/invalidRequest`` when the pattern is not a valid expression.
    public static func regularExpression(_ pattern: String) throws(HTTPConnectionError) -> URLMatcher {
        do {
            return URLMatcher(rule: .regularExpression(pattern, try NSRegularExpression(pattern: "^(?:\(pattern))$")))
        } catch {
            throw .invalidRequest.with(detail: "'\(pattern)' is not a valid regular expression", underlying: error)
        }
    }

    /// Every URL.
    public static let everything = URLMatcher(rule: .everything)

    /// Whether the URL is covered.
    public func matches(_ url: URL) -> Bool {
        switch rule {
        case .prefix(_, let prefix):
            return prefix?.matches(url) ?? false
        case .regularExpression(_, let expression):
            let text = url.absoluteString
            return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        case .everything:
            return true
        }
    }

    /// The rule in words.
    public var description: String {
        switch rule {
        case .prefix(let prefix, _): "URLs starting with \(prefix)"
        case .regularExpression(let pattern, _): "URLs matching /\(pattern)/"
        case .everything: "every URL"
        }
    }
}

/// How many refreshes may run within a window before requests fail with
/// ``HTTPConnectionError/authenticationFailed``; protects against endless 401 loops.
///
/// The limit always holds: the count is at least 1 and the window at least 1 second, whatever
/// values are given (a zero window would otherwise allow unlimited refreshes).
public struct RefreshLimit: Sendable {
    /// The most refreshes in one window; at least 1.
    public var count: Int {
        didSet { count = max(1, count) }
    }
    /// The window's length; at least 1 second.
    public var window: Duration {
        didSet { window = max(.seconds(1), window) }
    }

    /// Creates a limit.
    /// - Parameters:
    ///   - count: the most refreshes per window; 5 by default, at least 1.
    ///   - window: the window; 30 s by default, at least 1 s.
    public init(count: Int = 5, window: Duration = .seconds(30)) {
        self.count = max(1, count)
        self.window = max(.seconds(1), window)
    }
}

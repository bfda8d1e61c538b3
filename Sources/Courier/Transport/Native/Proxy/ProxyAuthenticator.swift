/// Supplies fresh credentials for an HTTP proxy that answered `407 Proxy Authentication
/// Required` (``NativeTransport/Configuration/proxyAuthenticator``).
///
/// It works like the re-authentication queue for origins (``Authenticator``), with a registry of
/// its own, one queue per proxy: when a request through the proxy meets a `407` (to its `CONNECT`,
/// or, for plain `http` forwarded by the proxy, as the response), the requests for that proxy are
/// held while **exactly one** call to ``credentials(for:)`` runs; then each is sent again with
/// the new credentials (a request whose body was a stream that already went out fails with
/// ``HTTPConnectionError/bodyNotReplayable``). A request that meets a second `407` after that
/// fails with ``HTTPConnectionError/proxyAuthenticationFailed``. Refreshes are bounded like the
/// origin queue's (5 in 30 s).
///
/// The credentials go only to the proxy (`Proxy-Authorization: Basic`), never to an origin, and
/// never into logs, errors, metrics or curl/HAR exports: the header is written on the wire by
/// the transport, below everything that records requests.
public protocol ProxyAuthenticator: Sendable {
    /// Fresh credentials for the proxy that refused a request.
    /// - Parameter challenge: the proxy, its `Proxy-Authenticate` challenges, and the credentials
    ///   it refused (if any were sent).
    /// - Returns: the credentials to send, or `nil` to give up: the held requests then end as
    ///   the `407` left them (``HTTPConnectionError/proxyAuthenticationRequired`` for a tunnel,
    ///   the `407` response for a forwarded request).
    /// - Throws: to give up likewise.
    func credentials(for challenge: ProxyChallenge) async throws -> ProxyCredentials?
}

/// What a proxy's `407` said, as a ``ProxyAuthenticator`` sees it.
public struct ProxyChallenge: Sendable {
    /// The proxy, without credentials.
    public let proxy: Proxy
    /// Its `Proxy-Authenticate` field values, e.g. `Basic realm="corp"`; empty when it sent none.
    public let challenges: [String]
    /// The credentials it refused; `nil` when the request carried none.
    public let refused: ProxyCredentials?
}

/// A ``ProxyAuthenticator`` made of a closure.
///
/// ```swift
/// configuration.proxyAuthenticator = ProxyCredentialsProvider { challenge in
///     try await keychain.proxyCredentials(for: challenge.proxy.host)
/// }
/// ```
public struct ProxyCredentialsProvider: ProxyAuthenticator {
    private let provide: @Sendable (ProxyChallenge) async throws -> ProxyCredentials?

    /// An authenticator that calls `provide` for each refresh.
    /// - Parameter provide: returns the credentials to try, or `nil` to give up.
    public init(_ provide: @escaping @Sendable (ProxyChallenge) async throws -> ProxyCredentials?) {
        self.provide = provide
    }

    /// Calls the closure.
    public func credentials(for challenge: ProxyChallenge) async throws -> ProxyCredentials? {
        try await provide(challenge)
    }
}

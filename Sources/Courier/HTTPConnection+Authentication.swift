/// Registering authenticators: the re-authentication queue.
extension HTTPConnection {
    /// Covers this connection's requests to matching URLs with an authenticator.
    ///
    /// Once a credential is known it is applied to every matching request. When a matching
    /// request is rejected (a 401 by default), it is held while exactly one refresh runs; every
    /// other matching request waits for it too; then they are sent again with the new credential.
    /// The first registration that matches a URL wins; the connection's come before global ones.
    ///
    /// The parameter is an existential (`any Authenticator`), not a generic: with a generic,
    /// Swift 6.3 does not infer `@Sendable` for closures inside `.basic { … }` or
    /// `.bearerToken(…)` written in place, and the call fails to compile
    /// (`scripts/check-readme-examples.sh` caught it in the README).
    /// - Parameters:
    ///   - matcher: which URLs, e.g. `.prefix("https://api.example.com/")`.
    ///   - authenticator: e.g. `.basic { … }`, `.bearerToken(…)`, or your own.
    ///   - store: where credentials are kept between refreshes; `nil` (in the session only) by default.
    ///   - refreshLimit: at most this many refreshes per window; 5 in 30 s by default.
    public func authenticate(matching matcher: URLMatcher, with authenticator: any Authenticator,
                             store: (any CredentialStore)? = nil, refreshLimit: RefreshLimit = RefreshLimit()) {
        authentication.register(CredentialSession(authenticator: authenticator, matcher: matcher, store: store, limit: refreshLimit))
    }

    /// Covers the requests of every connection to matching URLs with an authenticator, sharing
    /// one credential among them. Parameters as for ``authenticate(matching:with:store:refreshLimit:)``.
    public static func authenticateAll(matching matcher: URLMatcher, with authenticator: any Authenticator,
                                       store: (any CredentialStore)? = nil, refreshLimit: RefreshLimit = RefreshLimit()) {
        AuthenticationRegistry.global.register(CredentialSession(authenticator: authenticator, matcher: matcher,
                                                                 store: store, limit: refreshLimit))
    }

    /// Removes every global authenticator.
    public static func removeAllGlobalAuthenticators() {
        AuthenticationRegistry.global.removeAll()
    }
}

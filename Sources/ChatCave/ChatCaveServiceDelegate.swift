/// Hears about a ``ChatCaveService``'s sign-ins and answers its requests for credentials.
///
/// An alternative to ``ChatCaveService/authenticationHandler``; when both are set, the handler
/// is asked. Held weakly. Every method has a default, so implement only what you need.
public protocol ChatCaveServiceDelegate: AnyObject, Sendable {
    /// The service needs a name and password: show a sign-in screen, prompt, or read a store.
    /// Every request to the server waits until this returns.
    /// - Parameters:
    ///   - service: the service.
    ///   - challenge: why, for which name, after how many failures.
    /// - Returns: the credentials, or `nil` to give up (the held requests fail with
    ///   ``ChatCaveError/notAuthorized``). The default gives up.
    func chatCaveService(_ service: ChatCaveService, credentialsFor challenge: AuthenticationChallenge) async -> SignInCredentials?

    /// A user signed in (or up): explicitly, or through the authentication handler.
    /// Called on the service's callback queue. The default does nothing.
    func chatCaveService(_ service: ChatCaveService, didSignIn user: User)
}

extension ChatCaveServiceDelegate {
    /// Gives up.
    public func chatCaveService(_ service: ChatCaveService, credentialsFor challenge: AuthenticationChallenge) async -> SignInCredentials? {
        nil
    }

    /// Does nothing.
    public func chatCaveService(_ service: ChatCaveService, didSignIn user: User) {}
}

import Dispatch
import Synchronization

/// Where the authenticator finds who to ask for credentials and who to tell about sign-ins:
/// the service's handler closure and weak delegate. Nothing is called while the lock is held.
final class AuthenticationHooks: Sendable {
    private struct State {
        var handler: ChatCaveService.AuthenticationHandler?
        weak var delegate: (any ChatCaveServiceDelegate)?
        weak var service: ChatCaveService?
    }

    private let state = Mutex(State())
    private let callbackQueue: DispatchQueue

    init(callbackQueue: DispatchQueue) {
        self.callbackQueue = callbackQueue
    }

    var handler: ChatCaveService.AuthenticationHandler? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    var delegate: (any ChatCaveServiceDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    func attach(_ service: ChatCaveService) {
        state.withLock { $0.service = service }
    }

    /// Asks the handler, else the delegate; `nil` when neither gives credentials.
    func credentials(for challenge: AuthenticationChallenge) async -> SignInCredentials? {
        let (handler, delegate, service) = state.withLock { ($0.handler, $0.delegate, $0.service) }
        if let handler { return await handler(challenge) }
        guard let delegate, let service else { return nil }
        return await delegate.chatCaveService(service, credentialsFor: challenge)
    }

    /// Tells the delegate, on the callback queue, that a user signed in.
    func didSignIn(_ user: User) {
        let (delegate, service) = state.withLock { ($0.delegate, $0.service) }
        guard let delegate, let service else { return }
        callbackQueue.async { delegate.chatCaveService(service, didSignIn: user) }
    }
}

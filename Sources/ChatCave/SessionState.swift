import Synchronization

/// Who is signed in to a ``ChatCaveService``, and how its requests authenticate.
///
/// Shared by the service and its authenticator; every read and write takes one short lock.
final class SessionState: Sendable {
    /// What goes on each request.
    enum Authorization: Sendable, Equatable {
        /// `X-Magic-Auth: <key>`.
        case apiKey(String)
        /// `Authorization: Basic base64(name:password)`.
        case basic(name: String, password: String)
    }

    private struct State {
        var user: User?
        var password: String?
        var lastName: String?
        var failedSignIns = 0
    }

    /// The scheme the service was configured with.
    let scheme: ChatCaveService.AuthenticationScheme
    private let state = Mutex(State())

    init(scheme: ChatCaveService.AuthenticationScheme) {
        self.scheme = scheme
    }

    /// The signed-in user, or `nil`.
    var user: User? { state.withLock { $0.user } }

    /// The name last signed in with, even after a sign-out.
    var lastName: String? { state.withLock { $0.lastName ?? $0.user?.name } }

    /// How many sign-ins failed in a row during the current re-authentication.
    var failedSignIns: Int { state.withLock { $0.failedSignIns } }

    /// The credentials to put on requests, or `nil` when signed out.
    var authorization: Authorization? {
        state.withLock { state in
            guard let user = state.user else { return nil }
            switch scheme {
            case .apiKey:
                return user.apiKey.map { .apiKey($0) }
            case .basic:
                return state.password.map { .basic(name: user.name, password: $0) }
            }
        }
    }

    /// Records a sign-in (or sign-up).
    /// - Parameters:
    ///   - user: the user the server returned, with its key.
    ///   - password: the password used; kept in memory for the Basic scheme only.
    func signedIn(_ user: User, password: String?) {
        state.withLock { state in
            state.user = user
            state.password = scheme == .basic ? password : nil
            state.lastName = user.name
            state.failedSignIns = 0
        }
    }

    /// Forgets the signed-in user.
    func signedOut() {
        state.withLock { state in
            state.user = nil
            state.password = nil
        }
    }

    /// Counts a refused sign-in.
    func recordFailedSignIn(name: String) {
        state.withLock { state in
            state.failedSignIns += 1
            state.lastName = name
        }
    }

    /// Ends a re-authentication that gave up.
    func resetFailures() {
        state.withLock { $0.failedSignIns = 0 }
    }
}

import Courier
import Dispatch

extension ChatCaveService {
    /// How a service's requests prove who is asking.
    public enum AuthenticationScheme: Sendable, Equatable {
        /// `X-Magic-Auth: <apiKey>`, the key returned by sign-up and sign-in. The default.
        case apiKey
        /// `Authorization: Basic base64(name:password)`; the password is kept in memory.
        case basic
    }

    /// Answers the service's requests for credentials; see ``AuthenticationChallenge``.
    /// Return `nil` to give up.
    public typealias AuthenticationHandler = @Sendable (AuthenticationChallenge) async -> SignInCredentials?

    /// The settings of a ``ChatCaveService``.
    public struct Configuration: Sendable {
        /// How requests authenticate; ``AuthenticationScheme/apiKey`` by default.
        public var authenticationScheme: AuthenticationScheme
        /// The queue for closure callbacks, poller deliveries and delegate calls; `nil` (the
        /// default) makes a private serial queue.
        public var callbackQueue: DispatchQueue?
        /// The longest silence allowed while waiting for the server; 30 s by default.
        public var timeout: Duration
        /// How many times the authentication handler is asked again after a wrong password,
        /// within one re-authentication; 3 by default.
        public var maxSignInAttempts: Int
        /// The transport to send with; `nil` (the default) uses Courier's default transport.
        /// A transport you pass is yours to shut down.
        public var transport: (any Transport)?

        /// Creates a configuration.
        /// - Parameters:
        ///   - authenticationScheme: ``AuthenticationScheme/apiKey`` by default.
        ///   - callbackQueue: `nil` (a private serial queue) by default.
        ///   - timeout: 30 seconds by default.
        ///   - maxSignInAttempts: 3 by default.
        ///   - transport: `nil` (Courier's default) by default.
        public init(authenticationScheme: AuthenticationScheme = .apiKey, callbackQueue: DispatchQueue? = nil,
                    timeout: Duration = .seconds(30), maxSignInAttempts: Int = 3, transport: (any Transport)? = nil) {
            self.authenticationScheme = authenticationScheme
            self.callbackQueue = callbackQueue
            self.timeout = timeout
            self.maxSignInAttempts = maxSignInAttempts
            self.transport = transport
        }
    }
}

/// What the authentication-required handler is told when the service needs a name and password.
///
/// The service asks when the server refuses a request's credentials (or there were none).
/// Every request to the server is held meanwhile; once the handler answers and the sign-in
/// succeeds, they are all sent again. A wrong password makes the service ask again, with
/// ``Reason-swift.enum/wrongPassword`` and a higher ``failedAttempts``, up to
/// ``ChatCaveService/Configuration/maxSignInAttempts`` times.
public struct AuthenticationChallenge: Sendable, Equatable {
    /// Why credentials are needed.
    public enum Reason: Sendable, Equatable {
        /// Nobody is signed in.
        case notSignedIn
        /// The server refused the credentials in use (an API key revoked or signed out elsewhere).
        case credentialsRejected
        /// The name and password just given were wrong.
        case wrongPassword
    }

    /// Why credentials are needed.
    public let reason: Reason
    /// The name last used, to fill in a sign-in form; `nil` when none is known.
    public let userName: String?
    /// How many answers in a row were refused during this sign-in.
    public let failedAttempts: Int

    /// Creates a challenge.
    public init(reason: Reason, userName: String?, failedAttempts: Int) {
        self.reason = reason
        self.userName = userName
        self.failedAttempts = failedAttempts
    }
}

/// A name and password given to sign in. Its `description` never shows the password.
public struct SignInCredentials: Sendable, Equatable, CustomStringConvertible {
    /// The user name.
    public var name: String
    /// The password.
    public var password: String

    /// Creates credentials.
    public init(name: String, password: String) {
        self.name = name
        self.password = password
    }

    /// `SignInCredentials(name: alice, password: <redacted>)`.
    public var description: String { "SignInCredentials(name: \(name), password: <redacted>)" }
}

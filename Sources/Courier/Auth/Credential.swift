import Foundation

/// A credential an ``Authenticator`` applies to requests: a user name and password, a token or
/// an API key, with an optional expiry.
///
/// Its `description` never shows the secret, so a credential can be logged or printed safely.
public struct Credential: Sendable, Codable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The user name, for schemes that have one.
    public var user: String?
    /// The secret: a password, a token, an API key.
    public var secret: String
    /// When the credential stops being valid, if known.
    public var expiresAt: Date?

    /// Creates a credential.
    /// - Parameters:
    ///   - user: the user name; `nil` by default.
    ///   - secret: the password, token or key.
    ///   - expiresAt: when it expires; `nil` (unknown) by default.
    public init(user: String? = nil, secret: String, expiresAt: Date? = nil) {
        self.user = user
        self.secret = secret
        self.expiresAt = expiresAt
    }

    /// `Credential(user: alice, secret: <redacted>)`.
    public var description: String {
        "Credential(user: \(user ?? "-"), secret: <redacted>\(expiresAt.map { ", expires: \($0)" } ?? ""))"
    }

    /// Same as ``description``: the secret never appears.
    public var debugDescription: String { description }
}

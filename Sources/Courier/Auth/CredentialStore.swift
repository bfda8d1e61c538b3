import Foundation
import Synchronization

/// Keeps credentials between refreshes, and, for a file store, between runs.
///
/// Implementations must never log or describe the secrets they hold.
public protocol CredentialStore: Sendable {
    /// The credential stored under `key`, or `nil`.
    func load(for key: String) throws -> Credential?
    /// Stores a credential under `key`, replacing any other.
    func save(_ credential: Credential, for key: String) throws
    /// Forgets the credential under `key`.
    func remove(for key: String) throws
}

/// A store in memory: credentials last as long as the process.
public final class InMemoryCredentialStore: CredentialStore, CustomStringConvertible {
    private let credentials = Mutex<[String: Credential]>([:])

    /// Creates an empty store.
    public init() {}

    /// The stored credential, or `nil`.
    public func load(for key: String) -> Credential? { credentials.withLock { $0[key] } }
    /// Stores the credential.
    public func save(_ credential: Credential, for key: String) { credentials.withLock { $0[key] = credential } }
    /// Forgets the credential.
    public func remove(for key: String) { _ = credentials.withLock { $0.removeValue(forKey: key) } }

    /// The number of stored credentials; never their contents.
    public var description: String { "InMemoryCredentialStore(\(credentials.withLock { $0.count }) credentials)" }
}

import Foundation
import Synchronization

/// The authenticators registered on a connection, or for every connection.
final class AuthenticationRegistry: Sendable {
    private let sessions = Mutex<[CredentialSession]>([])

    /// The registry shared by every connection.
    static let global = AuthenticationRegistry()

    func register(_ session: CredentialSession) {
        sessions.withLock { $0.append(session) }
    }

    func removeAll() {
        sessions.withLock { $0.removeAll() }
    }

    /// The first session whose matcher covers the URL.
    func session(for url: URL) -> CredentialSession? {
        sessions.withLock { $0.first { $0.matcher.matches(url) } }
    }
}

@testable import Courier
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// A refresh writes its credential to the ``CredentialStore`` after it released the requests'
/// lock, so the next refresh can finish while that write is still under way. The store must end
/// up with the newer credential, or the next run of the program starts from a stale one.
@Suite("The credential store keeps the newest of two refreshes")
struct CredentialStoreOrderTests {
    /// Issues `t1`, `t2`, … and records each one it returned.
    final class CountingAuthenticator: Authenticator, Sendable {
        let issued = Mutex(0)

        func apply(_ credential: Credential, to request: inout TransportRequest) {
            request.headers.set("Bearer " + credential.secret, for: "Authorization")
        }

        func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
            Credential(secret: "t\(issued.withLock { $0 += 1; return $0 })")
        }
    }

    /// A store whose write of `t1` starts, then lasts until the write of `t2` has started (at
    /// most 0.3 s, as a write to a slow disk might); it records the order its writes land in.
    final class SlowFirstWriteStore: CredentialStore, Sendable {
        let started = Mutex<[String]>([])
        let landed = Mutex<[String]>([])

        func load(for key: String) -> Credential? { nil }
        func remove(for key: String) {}

        func save(_ credential: Credential, for key: String) {
            started.withLock { $0.append(credential.secret) }
            if credential.secret == "t1" {
                // Without ordering, t2's write starts now and lands first; with it, t2's write
                // waits for this one, which gives up waiting after 0.3 s.
                _ = eventuallyBlocking(seconds: 0.3) { started.withLock { $0.contains("t2") } }
            }
            landed.withLock { $0.append(credential.secret) }
        }

        var stored: String? { landed.withLock { $0.last } }
    }

    @Test("a refresh that finishes while the previous refresh's write is under way: the store ends with the newer credential, and writes nothing older after it")
    func newestWins() async throws {
        let authenticator = CountingAuthenticator()
        let store = SlowFirstWriteStore()
        let session = CredentialSession(authenticator: authenticator, matcher: .everything, store: store, limit: RefreshLimit())
        let context = AuthenticationContext(sender: { _ throws(HTTPConnectionError) in throw .cancelled }, baseURL: nil,
                                            timeout: .seconds(30), maxResponseBodySize: 1 << 20)
        // The first refresh: its write to the store starts, and lasts.
        let first = Task { await session.rejected(version: 0, sentAt: .now, context: context) }
        #expect(await eventually { store.started.withLock { $0 == ["t1"] } })
        // Meanwhile a new request goes out with t1 (already current) and is rejected.
        guard case .credential(let current?, let version) = await session.credentialForSending(context: context) else {
            Issue.record("no credential to send")
            return
        }
        #expect(current.secret == "t1")
        let second = await session.rejected(version: version, sentAt: .now, context: context)
        #expect({ if case .credential(let credential?, _) = second { credential.secret == "t2" } else { false } }(), "\(second)")
        _ = await first.value
        #expect(await eventually { store.landed.withLock { $0.count } == 2 })
        #expect(session.currentCredential?.secret == "t2")
        #expect(store.stored == "t2", "the store's writes landed in the order \(store.landed.withLock { $0 })")
    }
}

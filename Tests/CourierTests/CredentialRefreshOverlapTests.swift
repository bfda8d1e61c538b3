@testable import Courier
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// A refresh that every waiting request left is abandoned and cancelled, but its authenticator
/// call may take a while to notice. The next refresh must not call the authenticator before that
/// call has ended: one refresh at a time, as the queue promises.
@Suite("Re-authentication: a refresh abandoned while its call still runs")
struct CredentialRefreshOverlapTests {
    /// An authenticator whose first call waits for a gate (and ignores cancellation meanwhile);
    /// it logs when each call starts and ends.
    final class SlowToNoticeAuthenticator: Authenticator, Sendable {
        let log = Mutex<[String]>([])
        let gate = AwaitedValue<Void>()

        func apply(_ credential: Credential, to request: inout TransportRequest) {
            request.headers.set("Bearer " + credential.secret, for: "Authorization")
        }

        func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
            let call = log.withLock { log -> Int in
                let number = log.filter { $0.hasPrefix("start") }.count + 1
                log.append("start \(number)")
                return number
            }
            if call == 1 { await gate.take() }
            log.withLock { $0.append("end \(call)") }
            return Credential(secret: "t\(call)")
        }

        var entries: [String] { log.withLock { $0 } }
    }

    @Test("the next refresh calls the authenticator only after the abandoned call has ended")
    func noOverlap() async throws {
        let authenticator = SlowToNoticeAuthenticator()
        let session = CredentialSession(authenticator: authenticator, matcher: .everything, store: nil, limit: RefreshLimit())
        let context = AuthenticationContext(sender: { _ throws(HTTPConnectionError) in throw .cancelled }, baseURL: nil,
                                            timeout: .seconds(30), maxResponseBodySize: 1 << 20)
        // The only request waiting for the first refresh goes: the refresh is abandoned, while
        // its call is still held at the gate.
        let first = Task { await session.rejected(version: 0, sentAt: .now, context: context) }
        #expect(await eventually { authenticator.entries == ["start 1"] })
        first.cancel()
        #expect({ if case .cancelled = $0 { true } else { false } }(await first.value))
        // Another rejection starts the next refresh. Give it time to call the authenticator
        // early (a few milliseconds without the rule; 0.3 s is a bound, not a bet), then let the
        // first call end.
        let second = Task { await session.rejected(version: 0, sentAt: .now, context: context) }
        _ = await eventually(timeout: .milliseconds(300)) { authenticator.entries.count > 1 }
        authenticator.gate.fill(())
        let outcome = await second.value
        #expect({ if case .credential(let credential?, _) = outcome { credential.secret == "t2" } else { false } }(), "\(outcome)")
        #expect(authenticator.entries == ["start 1", "end 1", "start 2", "end 2"], "the calls ran \(authenticator.entries)")
    }
}

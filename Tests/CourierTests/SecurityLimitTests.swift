import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Limits that hold whatever a server or a caller asks for (security review L2, I12).
@Suite("Limits that always hold")
struct SecurityLimitTests {
    @Test("L2 (H3c) a 503 with Retry-After: 86400 (longer than the policy's cap) is not retried: the caller gets the 503 at once",
          arguments: TransportUnderTest.allCases)
    func retryAfterCapped(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let route = FlakyRoute(failures: 2, failure: .response(status: 503, headers: [("Retry-After", "86400")]))
            server.route("/maintenance", route.reply)
            let clock = RecordingClock()
            let connection = leaks.connection(server, transport) { configuration in
                configuration.retryPolicy = .exponentialBackoff(maxAttempts: 3, cap: .seconds(5))
                configuration.clock = clock
            }
            let failure = await #expect(throws: HTTPConnectionError.self) { try await connection.get("/maintenance") }
            #expect(failure == .unacceptableStatus)
            #expect(failure?.response?.status.code == 503)
            #expect(failure?.response?.headers["Retry-After"] == "86400")
            #expect(clock.sleeps.isEmpty)
            #expect(server.requestCount(path: "/maintenance") == 1)
            // Within the cap, Retry-After replaces the backoff.
            let short = FlakyRoute(failures: 2, failure: .response(status: 503, headers: [("Retry-After", "4")]))
            server.route("/short", short.reply)
            #expect(try await connection.get("/short").status == .ok)
            #expect(clock.sleeps == [.seconds(4), .seconds(4)])
        }
    }

    @Test("L2 a Retry-After date years away is not waited for either; custom policies allow at most 10 s")
    func retryAfterDateCapped() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let route = FlakyRoute(failures: 1, failure: .response(status: 429, headers: [("Retry-After", "Fri, 31 Dec 2060 23:59:59 GMT")]))
            server.route("/limited", route.reply)
            let clock = RecordingClock(now: Date(timeIntervalSince1970: 1_800_000_000))
            let connection = leaks.connection(server, .native) { configuration in
                configuration.retryPolicy = .custom { $0.isRetryable && $0.number < 2 ? .retry(after: .seconds(1)) : .doNotRetry }
                configuration.clock = clock
            }
            let failure = await #expect(throws: HTTPConnectionError.self) { try await connection.get("/limited") }
            #expect(failure?.response?.status.code == 429)
            #expect(clock.sleeps.isEmpty)
            #expect(server.requestCount(path: "/limited") == 1)
            #expect(RetryPolicy.exponentialBackoff(cap: .seconds(3)).retryAfterCap == .seconds(3))
        }
    }

    @Test("I12 a refresh limit is at least 1 refresh in at least 1 s, however it is made")
    func refreshLimitClamped() {
        let zero = RefreshLimit(count: 0, window: .zero)
        #expect(zero.count == 1)
        #expect(zero.window == .seconds(1))
        var changed = RefreshLimit()
        changed.count = -4
        changed.window = .seconds(-30)
        #expect(changed.count == 1)
        #expect(changed.window == .seconds(1))
        #expect(RefreshLimit(count: 7, window: .seconds(90)).count == 7)
    }

    @Test("I12 with a zero refresh window an endpoint that answers 401 forever still ends in authenticationFailed")
    func zeroWindowStillBounded() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        final class Counting: Authenticator {
            let refreshes = Mutex(0)
            func apply(_ credential: Credential, to request: inout TransportRequest) {
                request.headers.set("Bearer " + credential.secret, for: "Authorization")
            }
            func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
                refreshes.withLock { $0 += 1 }
                return Credential(secret: "t")
            }
        }
        try await withLeakCheck { leaks throws in
            server.route("/protected") { _ in .response(status: 401) }
            let connection = leaks.connection(server, .native) { $0.deadline = .seconds(30) }
            let authenticator = Counting()
            let store = InMemoryCredentialStore()
            store.save(Credential(secret: "stale"), for: URLMatcher.everything.description)
            // One refresh per second is allowed: the next one, a round trip later, finds the window full
            // (on a loaded machine a round trip can take longer, hence no exact count). Without the
            // clamp the loop runs until the deadline.
            connection.authenticate(matching: .everything, with: authenticator, store: store,
                                    refreshLimit: RefreshLimit(count: 1, window: .zero))
            await #expect(throws: HTTPConnectionError.authenticationFailed) { try await connection.get("/protected") }
            #expect(authenticator.refreshes.withLock { $0 } >= 1)
        }
    }
}

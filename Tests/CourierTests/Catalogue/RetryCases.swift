import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Reliability catalogue, section H: automatic retries, on both transports. A recording clock
/// stands in for the waits, so that backoff is checked without sleeping.
@Suite("Catalogue H: retries")
struct RetryCases {
    @Test("H1 only idempotent methods are retried, unless the policy opts in", arguments: TransportUnderTest.allCases)
    func idempotentOnly(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let posts = FlakyRoute(failures: 1, failure: .text(status: 503, "busy"))
        let puts = FlakyRoute(failures: 1, failure: .text(status: 503, "busy"))
        server.route("/post", posts.reply)
        server.route("/put", puts.reply)
        let outcomes = try await runCase(transport, on: server, [HTTPRequest(.post, "/post", body: .text("x")),
                                                                 HTTPRequest(.put, "/put", body: .text("x"))],
                                         configure: { $0.retryPolicy = .exponentialBackoff(maxAttempts: 3); $0.clock = RecordingClock() })
        #expect(outcomes[0].error == .unacceptableStatus && outcomes[0].status == 503, "\(outcomes[0].result)")
        #expect(posts.count == 1)
        #expect(outcomes[1].status == 200, "\(outcomes[1].result)")
        #expect(puts.count == 2)

        let optedIn = FlakyRoute(failures: 1, failure: .text(status: 503, "busy"))
        server.route("/opted-in", optedIn.reply)
        let opted = try await runCase(transport, on: server, HTTPRequest(.post, "/opted-in", body: .text("x")), configure: {
            $0.retryPolicy = .exponentialBackoff(maxAttempts: 3).allowingNonIdempotentMethods()
            $0.clock = RecordingClock()
        })
        #expect(opted.status == 200 && optedIn.count == 2, "\(opted.result)")
    }

    @Test("H2 retryable: a lost connection, 408, 429, 500, 502, 503, 504; not retryable: other 4xx, cancellations", arguments: TransportUnderTest.allCases)
    func retryableOutcomes(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        var routes: [FlakyRoute] = []
        var requests: [HTTPRequest] = []
        let replies: [TestServer.Reply] = [408, 429, 500, 502, 503, 504, 400, 403, 404, 422].map { .text(status: $0, "no") } + [.script([.close])]
        for (index, reply) in replies.enumerated() {
            let route = FlakyRoute(failures: 1, failure: reply)
            server.route("/flaky/\(index)", route.reply)
            routes.append(route)
            requests.append(HTTPRequest(.get, "/flaky/\(index)"))
        }
        let outcomes = try await runCase(transport, on: server, requests,
                                         configure: { $0.retryPolicy = .exponentialBackoff(maxAttempts: 2); $0.clock = RecordingClock() })
        for index in [0, 1, 2, 3, 4, 5, 10] {  // retryable statuses and the lost connection
            #expect(outcomes[index].status == 200 && routes[index].count == 2, "\(index): \(outcomes[index].result)")
        }
        for index in 6...9 {  // other 4xx
            #expect(outcomes[index].error == .unacceptableStatus && routes[index].count == 1, "\(index): \(outcomes[index].result)")
        }

        // A cancelled request is not retried.
        let cancelled = try await runCase(transport, on: server, HTTPRequest(.get, "/delay/5000"),
                                          configure: { $0.retryPolicy = .exponentialBackoff(maxAttempts: 5) },
                                          during: { context, ids in
            #expect(await eventually { server.requestCount(path: "/delay/5000") == 1 })
            context.connection.cancel(ids[0])
        })
        #expect(cancelled.error == .cancelled, "\(cancelled.result)")
        #expect(server.requestCount(path: "/delay/5000") == 1)
    }

    @Test("H3 exponential backoff with jitter; Retry-After in seconds and as an HTTP date; the deadline caps the wait", arguments: TransportUnderTest.allCases)
    func backoffAndRetryAfter(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let clock = RecordingClock(now: Date(timeIntervalSince1970: 1_700_000_000))
        let date = DateFormatter()
        date.locale = Locale(identifier: "en_US_POSIX")
        date.timeZone = TimeZone(identifier: "GMT")
        date.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let later = date.string(from: clock.fixedNow.addingTimeInterval(42))
        server.route("/down") { _ in .text(status: 503, "down") }
        server.route("/seconds", FlakyRoute(failures: 1, failure: .response(status: 429, headers: [("Retry-After", "7")])).reply)
        server.route("/date", FlakyRoute(failures: 1, failure: .response(status: 503, headers: [("Retry-After", later)])).reply)
        let outcomes = try await runCase(transport, on: server, [HTTPRequest(.get, "/down")], configure: {
            $0.retryPolicy = .exponentialBackoff(maxAttempts: 4, base: .milliseconds(100), cap: .seconds(1))
            $0.clock = clock
        })
        #expect(outcomes[0].error == .unacceptableStatus, "\(outcomes[0].result)")
        let sleeps = clock.sleeps
        #expect(sleeps.count == 3)
        for (attempt, slept) in sleeps.enumerated() {  // full jitter: anywhere in [0, min(cap, base × 2ⁿ)]
            #expect(slept >= .zero && slept <= .milliseconds(100) * (1 << attempt), "\(attempt): \(slept)")
        }

        let afterClock = RecordingClock(now: clock.fixedNow)
        let honoured = try await runCase(transport, on: server, [HTTPRequest(.get, "/seconds"), HTTPRequest(.get, "/date")], configure: {
            $0.retryPolicy = .exponentialBackoff(maxAttempts: 2, cap: .seconds(60))  // the cap bounds Retry-After (L2)
            $0.clock = afterClock
        })
        #expect(honoured.allSatisfy { $0.status == 200 }, "\(honoured.map(\.result))")
        #expect(Set(afterClock.sleeps) == [.seconds(7), .seconds(42)])

        server.route("/much-later") { _ in .response(status: 503, headers: [("Retry-After", "3600")]) }
        var capped = HTTPRequest(.get, "/much-later")
        capped.deadline = .milliseconds(500)
        let start = ContinuousClock.now
        let cut = try await runCase(transport, on: server, capped, configure: {
            $0.retryPolicy = .exponentialBackoff(maxAttempts: 3, cap: .seconds(7200))  // allows the hour's wait (L2)
        })
        #expect(cut.error == .deadlineExceeded, "\(cut.result)")
        #expect(ContinuousClock.now - start < .seconds(30))  // a hang guard far below the hour the server asked for
    }

    @Test("H4 attempts are bounded and the last error is the one reported", arguments: TransportUnderTest.allCases)
    func boundedAttempts(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let counter = FlakyRoute(failures: 100, failure: .text(status: 500, "first"))
        server.route("/failing") { request in
            _ = counter.reply(request)
            return .text(status: counter.count < 4 ? 500 : 503, "attempt \(counter.count)")
        }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/failing"),
                                        configure: { $0.retryPolicy = .exponentialBackoff(maxAttempts: 4); $0.clock = RecordingClock() })
        #expect(outcome.error == .unacceptableStatus && outcome.status == 503, "\(outcome.result)")
        #expect(outcome.error?.response?.text == "attempt 4")
        #expect(counter.count == 4)
    }
}

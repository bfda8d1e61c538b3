import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Automatic retries (reliability section H).
@Suite("Retries")
struct RetryTests {
    /// Records the delegate's retry notices.
    final class RetryListener: HTTPConnectionDelegate {
        let notices = Mutex<[(attempt: Int, delay: Duration, reason: String)]>([])
        func connection(_ connection: HTTPConnection, request id: RequestID, willRetry attempt: Int, after delay: Duration, reason: HTTPConnectionError) {
            notices.withLock { $0.append((attempt, delay, reason.kindName)) }
        }
    }

    func connection(_ server: TestServer, _ transport: TransportUnderTest, _ leaks: LeakCheck, clock: RecordingClock,
                    policy: RetryPolicy = .exponentialBackoff(maxAttempts: 4)) -> HTTPConnection {
        leaks.connection(server, transport) { configuration in
            configuration.retryPolicy = policy
            configuration.clock = clock
        }
    }

    @Test("H2 every retryable status is retried until success", arguments: TransportUnderTest.allCases, [408, 429, 500, 502, 503, 504])
    func retryableStatuses(transport: TransportUnderTest, status: Int) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let route = FlakyRoute(failures: 2, failure: .text(status: status, "try later"))
            server.route("/flaky", route.reply)
            let clock = RecordingClock()
            let connection = connection(server, transport, leaks, clock: clock)
            let listener = leaks.track(RetryListener())
            connection.delegate = listener
            let response = try await connection.get("/flaky")
            #expect(response.status == .ok)
            #expect(route.count == 3)
            #expect(clock.sleeps.count == 2)
            #expect(response.metrics?.attempts == 3)
            #expect(await eventually { listener.notices.withLock { $0.count } == 2 })
            #expect(listener.notices.withLock { $0.map(\.attempt) } == [2, 3])
            #expect(listener.notices.withLock { $0.map(\.reason) } == ["unacceptableStatus", "unacceptableStatus"])
        }
    }

    @Test("H2 other 4xx statuses are never retried", arguments: TransportUnderTest.allCases, [400, 401, 403, 404, 409, 422])
    func nonRetryableStatuses(transport: TransportUnderTest, status: Int) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let route = FlakyRoute(failures: 5, failure: .text(status: status, "no"))
            server.route("/flaky", route.reply)
            let clock = RecordingClock()
            await #expect(throws: HTTPConnectionError.unacceptableStatus) {
                try await connection(server, transport, leaks, clock: clock).get("/flaky")
            }
            #expect(route.count == 1)
            #expect(clock.sleeps.isEmpty)
        }
    }

    @Test("H2 a connection lost before the response is retried", arguments: TransportUnderTest.allCases)
    func connectionLost(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let route = FlakyRoute(failures: 1, failure: .script([.close]))
            server.route("/cut", route.reply)
            let response = try await connection(server, transport, leaks, clock: RecordingClock()).get("/cut")
            #expect(response.status == .ok)
            #expect(route.count == 2)
        }
    }

    @Test("H2 a refused connect is retried, and when attempts run out the last error is reported", arguments: TransportUnderTest.allCases)
    func refusedConnect(transport: TransportUnderTest) async throws {
        try await withLeakCheck { leaks throws in
            let clock = RecordingClock()
            leaks.watch(port: refusedURL().port ?? 1)
            let connection = leaks.track(HTTPConnection(baseURL: refusedURL(), configuration: .init(
                retryPolicy: .exponentialBackoff(maxAttempts: 3), transport: leaks.transport(transport), clock: clock)))
            await #expect(throws: HTTPConnectionError.cannotConnect) { try await connection.get("/x") }
            #expect(clock.sleeps.count == 2)
        }
    }

    @Test("H1 only idempotent methods are retried unless the policy opts in", arguments: TransportUnderTest.allCases)
    func idempotency(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let route = FlakyRoute(failures: 1, failure: .text(status: 503, "busy"))
            server.route("/flaky", route.reply)
            let plain = connection(server, transport, leaks, clock: RecordingClock())
            await #expect(throws: HTTPConnectionError.unacceptableStatus) { try await plain.post("/flaky", body: .text("x")) }
            #expect(route.count == 1)

            var request = HTTPRequest(.post, "/flaky", body: .text("x"))
            request.retryPolicy = .exponentialBackoff(maxAttempts: 2).allowingNonIdempotentMethods()
            #expect(try await plain.send(request).status == .ok)
            #expect(route.count == 2)

            let put = FlakyRoute(failures: 1, failure: .text(status: 503, "busy"))
            server.route("/put", put.reply)
            #expect(try await plain.put("/put", body: .text("x")).status == .ok)
            #expect(put.count == 2)
        }
    }

    @Test("H3 backoff uses full jitter within min(cap, base × 2ⁿ⁻¹)", arguments: TransportUnderTest.allCases)
    func jitterBounds(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            server.route("/down") { _ in .text(status: 503, "down") }
            let clock = RecordingClock()
            let policy = RetryPolicy.exponentialBackoff(maxAttempts: 6, base: .milliseconds(100), cap: .milliseconds(500))
            await #expect(throws: HTTPConnectionError.unacceptableStatus) {
                try await connection(server, transport, leaks, clock: clock, policy: policy).get("/down")
            }
            let ceilings: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(500), .milliseconds(500)]
            #expect(clock.sleeps.count == 5)
            for (slept, ceiling) in zip(clock.sleeps, ceilings) {
                #expect(slept >= .zero && slept <= ceiling, "slept \(slept), ceiling \(ceiling)")
            }
            #expect(server.requestCount(path: "/down") == 6)
        }
    }

    @Test("H3 Retry-After in seconds replaces the backoff", arguments: TransportUnderTest.allCases)
    func retryAfterSeconds(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let route = FlakyRoute(failures: 1, failure: .response(status: 429, headers: [("Retry-After", "7")]))
            server.route("/limited", route.reply)
            let clock = RecordingClock()
            #expect(try await connection(server, transport, leaks, clock: clock).get("/limited").status == .ok)
            #expect(clock.sleeps == [.seconds(7)])
        }
    }

    @Test("H3 Retry-After as an HTTP date", arguments: TransportUnderTest.allCases)
    func retryAfterDate(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let later = formatter.string(from: now.addingTimeInterval(42))
            let route = FlakyRoute(failures: 1, failure: .response(status: 503, headers: [("Retry-After", later)]))
            server.route("/maintenance", route.reply)
            let clock = RecordingClock(now: now)
            let policy = RetryPolicy.exponentialBackoff(maxAttempts: 4, cap: .seconds(60))  // the cap bounds Retry-After (L2)
            #expect(try await connection(server, transport, leaks, clock: clock, policy: policy).get("/maintenance").status == .ok)
            #expect(clock.sleeps == [.seconds(42)])
        }
    }

    @Test("H3 the deadline caps a Retry-After wait", arguments: TransportUnderTest.allCases)
    func retryAfterCappedByDeadline(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            server.route("/later") { _ in .response(status: 503, headers: [("Retry-After", "3600")]) }
            let connection = leaks.connection(server, transport) { configuration in
                configuration.retryPolicy = .exponentialBackoff(cap: .seconds(7200))  // allows the hour's wait (L2)
                // 2 s: the first attempt must reach the server before the deadline (URLSession on a
                // loaded machine took over 400 ms once), so that the deadline cuts the hour's wait.
                configuration.deadline = .seconds(2)
            }
            let clock = ContinuousClock()
            let start = clock.now
            await #expect(throws: HTTPConnectionError.deadlineExceeded) { try await connection.get("/later") }
            #expect(clock.now - start < .seconds(30))  // far below the 3600 s Retry-After: the deadline cut the wait
            #expect(server.requestCount(path: "/later") == 1)
        }
    }

    @Test("H4 attempts are bounded and the last failure is reported", arguments: TransportUnderTest.allCases)
    func boundedAttempts(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let counter = Atomic<Int>(0)
            server.route("/down") { _ in
                let call = counter.add(1, ordering: .relaxed).newValue
                return .text(status: call < 4 ? 500 : 503, "attempt \(call)")
            }
            do throws(HTTPConnectionError) {
                _ = try await connection(server, transport, leaks, clock: RecordingClock()).get("/down")
                Issue.record("must fail")
            } catch {
                #expect(error == .unacceptableStatus)
                #expect(error.response?.status.code == 503)
                #expect(error.response?.text == "attempt 4")
            }
            #expect(server.requestCount(path: "/down") == 4)
        }
    }

    @Test("a custom policy decides each retry; cancellation is never retried", arguments: TransportUnderTest.allCases)
    func customPolicy(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let route = FlakyRoute(failures: 2, failure: .text(status: 409, "conflict"))
            server.route("/conflict", route.reply)
            let seen = Mutex<[Int]>([])
            let policy = RetryPolicy.custom { attempt in
                seen.withLock { $0.append(attempt.response?.status.code ?? -1) }
                return attempt.number < 5 ? .retry(after: .milliseconds(1)) : .doNotRetry
            }
            let clock = RecordingClock()
            #expect(try await connection(server, transport, leaks, clock: clock, policy: policy).get("/conflict").status == .ok)
            #expect(seen.withLock { $0 } == [409, 409])

            let stalled = connection(server, transport, leaks, clock: clock, policy: .custom { _ in .retry(after: .zero) })
            let task = Task { try await stalled.get("/fault/stall") }
            #expect(await eventually { server.requestCount(path: "/fault/stall") == 1 })
            task.cancel()
            let result = await task.result
            #expect(throws: HTTPConnectionError.cancelled) { try result.get() }
            try await Task.sleep(for: .milliseconds(100))
            #expect(server.requestCount(path: "/fault/stall") == 1)
        }
    }
}

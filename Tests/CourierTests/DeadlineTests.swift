import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The whole-request deadline cuts every stage (reliability case B4 and section H3).
@Suite("Deadline")
struct DeadlineTests {
    static let deadline = Duration.milliseconds(400)

    /// Runs the request and checks it ends with `.deadlineExceeded` soon after the deadline.
    func expectDeadline(_ connection: HTTPConnection, _ request: HTTPRequest, deadline: Duration = Self.deadline) async {
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: HTTPConnectionError.deadlineExceeded) { try await connection.send(request) }
        let elapsed = clock.now - start
        #expect(elapsed >= deadline - .milliseconds(5))
        // A hang guard, not a timing claim: promptness is measured by the benchmarks, not asserted
        // on a shared 2-core machine running the whole suite in parallel.
        #expect(elapsed < deadline + .seconds(30), "ended \(elapsed - deadline) after the deadline")
        #expect(connection.activeRequestIDs.isEmpty)
    }

    func connection(_ url: URL, _ transport: TransportUnderTest, _ leaks: LeakCheck, retry: RetryPolicy = .never,
                    deadline: Duration = Self.deadline) -> HTTPConnection {
        leaks.track(HTTPConnection(baseURL: url, configuration: .init(timeout: .seconds(20), retryPolicy: retry,
                                                                      transport: leaks.transport(transport), deadline: deadline)))
    }

    @Test("B5 the deadline cuts a connect that hangs", arguments: TransportUnderTest.allCases)
    func slowConnect(transport: TransportUnderTest) async throws {
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        let blackholeFillers = ProcessSockets.connected(toPort: blackhole.port)
        await withLeakCheck { leaks in
            leaks.watch(port: blackhole.port, baseline: blackholeFillers)
            await expectDeadline(connection(blackhole.url, transport, leaks), HTTPRequest(.get, "/"))
        }
    }

    @Test("the deadline cuts a long authentication wait", arguments: TransportUnderTest.allCases)
    func authWait(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            server.route("/private") { _ in .response(status: 401) }
            let connection = connection(server.baseURL, transport, leaks)
            connection.authenticate(matching: .everything, with: .basic { @Sendable _ in
                try? await Task.sleep(for: .seconds(30))  // a user who never answers the sign-in screen
                return nil
            })
            await expectDeadline(connection, HTTPRequest(.get, "/private"))
        }
    }

    @Test("the deadline cuts a retry backoff", arguments: TransportUnderTest.allCases)
    func retryBackoff(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            leaks.watch(server)
            server.route("/busy") { _ in .text(status: 503, "busy") }
            // 2 s: the first attempt must reach the server before the deadline (URLSession on a
            // loaded machine took over 400 ms once), so that the deadline cuts the 30 s backoff.
            let connection = connection(server.baseURL, transport, leaks, retry: .custom { _ in .retry(after: .seconds(30)) },
                                        deadline: .seconds(2))
            await expectDeadline(connection, HTTPRequest(.get, "/busy"), deadline: .seconds(2))
            #expect(server.requestCount(path: "/busy") == 1)
        }
    }

    @Test("the deadline cuts a redirect chain", arguments: TransportUnderTest.allCases)
    func redirectChain(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            leaks.watch(server)
            server.route("/hop/*") { request in
                let n = Int(request.path.split(separator: "/").last ?? "") ?? 0
                return .delayed(.milliseconds(150), .response(status: 302, headers: [("Location", "/hop/\(n + 1)")]))
            }
            await expectDeadline(connection(server.baseURL, transport, leaks), HTTPRequest(.get, "/hop/0"))
            #expect(server.requestCount(path: "/hop/*") <= 4 || server.totalRequests <= 4)
        }
    }

    @Test("B4 a trickling body succeeds while bytes keep coming, and the deadline still ends it", arguments: TransportUnderTest.allCases)
    func trickle(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            // One byte every 100 ms for 1.5 times the timeout. (URLSessionTransport measures silence
            // between corelibs' deliveries, which a full parallel run on two cores has been seen to
            // space out by two seconds, so its window is wider.)
            let window: Duration = transport == .native ? .seconds(1) : .seconds(5)
            let bytes = transport == .native ? 15 : 75
            let patient = leaks.connection(server, transport, timeout: window)
            let short = try await patient.get("/fault/trickle", query: [.init("bytes", "\(bytes)"), .init("interval", "100")])
            #expect(short.body.count == bytes)

            let bounded = connection(server.baseURL, transport, leaks)
            bounded.timeout = .milliseconds(500)
            var long = HTTPRequest(.get, "/fault/trickle", query: [.init("bytes", "200"), .init("interval", "40")])
            long.timeout = .milliseconds(500)
            await expectDeadline(bounded, long)
        }
    }
}

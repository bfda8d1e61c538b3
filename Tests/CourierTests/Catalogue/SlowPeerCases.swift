import Courier
import CourierTestServer
import Foundation
import Testing

/// Reliability catalogue, section B: slow and stalled peers, on both transports.
@Suite("Catalogue B: slow and stalled peers")
struct SlowPeerCases {
    /// A request with its own timeout (or deadline).
    private func request(_ target: String, timeout: Duration? = nil, deadline: Duration? = nil) -> HTTPRequest {
        var request = HTTPRequest(.get, target)
        request.timeout = timeout
        request.deadline = deadline
        return request
    }

    @Test("B1 accepts but never answers: timedOut after the request's timeout, which beats the connection's", arguments: TransportUnderTest.allCases)
    func neverAnswers(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let clock = ContinuousClock()
        let start = clock.now
        // The connection would wait 60 s; the request's 300 ms wins.
        let outcome = try await runCase(transport, on: server, request("/fault/stall", timeout: .milliseconds(300)),
                                        timeout: .seconds(60))
        #expect(outcome.error == .timedOut, "\(outcome.result)")
        #expect(clock.now - start < .seconds(30))  // a hang guard far below the connection's 60 s
    }

    @Test("B2 head, then the body stalls: timedOut", arguments: TransportUnderTest.allCases)
    func stalledBody(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let outcome = try await runCase(transport, on: server, request("/fault/stall-body", timeout: .milliseconds(400)))
        #expect(outcome.error == .timedOut, "\(outcome.result)")
    }

    @Test("B3 Content-Length 4, 3 bytes sent, then a stall: timedOut", arguments: TransportUnderTest.allCases)
    func shortBodyStalls(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let outcome = try await runCase(transport, on: server, request("/fault/short-length", timeout: .milliseconds(400)))
        #expect(outcome.error == .timedOut, "\(outcome.result)")
    }

    @Test("B4 a trickling body succeeds while bytes keep coming; a whole-request deadline still ends it", arguments: TransportUnderTest.allCases)
    func trickle(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // One byte every 100 ms for 1.5 times the idle timeout. (URLSessionTransport measures silence
        // between corelibs' deliveries, which a full parallel run on two cores has been seen to
        // space out by two seconds, so its window is wider.)
        let window: Duration = transport == .native ? .seconds(1) : .seconds(5)
        let bytes = transport == .native ? 15 : 75
        let slow = try await runCase(transport, on: server, request("/fault/trickle?bytes=\(bytes)&interval=100", timeout: window))
        #expect(slow.response?.body.count == bytes, "\(slow.result)")
        // 1,000 bytes, one every 20 ms, would take 20 s: the 500 ms deadline ends it.
        let endless = try await runCase(transport, on: server,
                                        request("/fault/trickle?bytes=1000&interval=20", timeout: .seconds(5), deadline: .milliseconds(500)))
        #expect(endless.error == .deadlineExceeded, "\(endless.result)")
    }

    @Test("B5 connect timeout: a listener whose backlog is full never completes the connect", arguments: TransportUnderTest.allCases)
    func connectTimeout(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        let fillers = ProcessSockets.connected(toPort: blackhole.port)
        let outcome = try await runCase(transport, on: server,
                                        request(blackhole.url.appendingPathComponent("x").absoluteString, timeout: .milliseconds(300)),
                                        during: { context, _ in context.leaks.watch(port: blackhole.port, baseline: fillers) })
        #expect(outcome.error == .timedOut || outcome.error == .cannotConnect, "\(outcome.result)")
    }
}

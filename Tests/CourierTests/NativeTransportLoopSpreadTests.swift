@testable import Courier
import CourierTestServer
import CourierTestSupport
import CourierWire
import Foundation
import Synchronization
import Testing

/// One origin's connections spread over a transport's event loops, over real sockets to
/// `CourierTestServer`: concurrent requests are read on every loop within the origin's limit,
/// requests one at a time share one connection, and a caller on a loop is served by its own.
@Suite("Native transport: one origin over several event loops")
struct NativeTransportLoopSpreadTests {
    /// Hears which thread each response head arrives on.
    final class ThreadRecorder: TransportObserver {
        private let names = Mutex<[String]>([])
        let observesBody = false

        func transportDidReceiveHead(_ head: HTTPResponse.Head) {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "unknown"
            names.withLock { $0.append(name.trimmingCharacters(in: .newlines)) }
        }

        func transportDidReceiveBody(_ data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {}
        func transportDidCollect(_ metrics: TransportMetrics) {}

        /// The threads heard from, each once.
        var threads: Set<String> { Set(names.withLock { $0 }) }
    }

    /// Runs `body` with a `CourierTestServer` and a transport with 2 loops and at most 4
    /// connections per origin, under the leak check.
    private func withTwoLoops(_ body: (TestServer, NativeTransport) async throws -> Void) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native(.init(maxConnectionsPerHost: 4, loopCount: 2))
            defer { transport.shutdown() }
            try await body(server, transport)
        }
    }

    @Test("requests in flight at once to one origin are served on both loops, each loop within its share of the limit")
    func concurrentRequestsSpread() async throws {
        try await withTwoLoops { server, transport in
            // The answers are held until the test has seen the spread, however slow the machine.
            let gate = TestServer.Gate()
            server.route("/held") { _ in .whenOpen(gate, .text("ok")) }
            let url = server.url("/held")
            let recorder = ThreadRecorder()
            let codes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await fetch(transport, url, observer: recorder).status.code }
                }
                // While they wait, each loop holds its share: two connections each, never more.
                #expect(await eventuallyAsync { await transport.poolSnapshots(for: url).map(\.connections) == [2, 2] })
                gate.open()
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(codes == Array(repeating: 200, count: 8))
            #expect(recorder.threads == ["courier-http-0", "courier-http-1"])
            #expect(server.connectionsAccepted == 4, "the origin's limit holds over both loops")
        }
    }

    @Test("a streamed response counts on its loop until its body ends: streams opened one after another spread over both loops")
    func streamsSpread() async throws {
        try await withTwoLoops { server, transport in
            let size = 8 << 20
            var streams: [HTTPStreamingResponse] = []
            // Each stream returns at its head and holds its connection while its body waits.
            for _ in 0..<4 {
                let request = TransportRequest(method: .get, url: server.url("/bytes/\(size)"), timeout: .seconds(10))
                streams.append(try await transport.stream(request, observer: IgnoringTransportObserver()))
            }
            #expect(await transport.poolSnapshots(for: server.url("/")).map(\.connections) == [2, 2])
            for streamed in streams {
                var received = 0
                for try await chunk in streamed.body { received += chunk.count }
                #expect(received == size)
            }
            #expect(server.connectionsAccepted == 4)
        }
    }

    @Test("requests sent one at a time share one connection on the first loop")
    func sequentialRequestsShareOneConnection() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native(.init(loopCount: 2))
            defer { transport.shutdown() }
            let recorder = ThreadRecorder()
            for index in 1...5 {
                let echo = try await fetch(transport, server.url("/echo/\(index)"), observer: recorder).decode(Echo.self)
                #expect(echo.connection == 1)
            }
            #expect(server.connectionsAccepted == 1)
            #expect(recorder.threads.count == 1)
            #expect(await transport.poolSnapshots(for: server.url("/echo")).map(\.connections) == [1, 0])
        }
    }

    @Test("a caller on one of the loops is served by that loop's pool while it has a connection to spare")
    func callerOnALoopStaysThere() async throws {
        try await withTwoLoops { server, transport in
            let url = server.url("/echo")
            // The first request makes the origin's pools, one on each loop.
            _ = try await fetch(transport, url)
            let key = try NativeRequestTarget(url: url).key
            let pools: [LoopBound<HostPool>] = transport.existingPools(for: key)
            try #require(pools.count == 2)
            let second: EventLoop = pools[1].loop
            #expect(pools[0].loop !== second)
            let recorder = ThreadRecorder()
            for _ in 0..<3 {
                let code = try await withTaskExecutorPreference(second) {
                    try await fetch(transport, url, observer: recorder).status.code
                }
                #expect(code == 200)
            }
            #expect(recorder.threads == ["courier-http-1"])
            #expect(await transport.poolSnapshots(for: url).map(\.connections) == [1, 1])
        }
    }
}

import Courier
import CourierTestServer
import CourierTestSupport
import CourierWire
import Foundation
import Synchronization
import Testing

/// A request on a task of its own runs its pipeline on the event loop that does its I/O, so that
/// no thread wakes up between the network and the pipeline; a cache that reads files keeps it off
/// the loop. An `async` caller's request runs in the caller's task, on the loop when the caller
/// prefers it (``HTTPConnection/executor``).
@Suite("Requests on the transport's event loop")
struct LoopExecutorTests {
    /// A monitor that records, per event, whether it was reported on the loop's thread.
    final class ThreadLog: Sendable {
        private let onLoop = Mutex<[Bool]>([])
        let loop: EventLoop

        init(loop: EventLoop) { self.loop = loop }

        var monitor: EventMonitor { EventMonitor { [self] _ in onLoop.withLock { $0.append(loop.inEventLoop) } } }
        var values: [Bool] { onLoop.withLock { $0 } }
    }

    @Test("the native transport prefers its event loop; the default for other transports is none")
    func preferredExecutors() {
        let native = NativeTransport()
        defer { native.shutdown() }
        #expect(native.preferredTaskExecutor(for: nil) is EventLoop)
        #expect(native.preferredTaskExecutor(for: URL(string: "http://127.0.0.1:1/")) is EventLoop)
        #expect(URLSessionTransport().preferredTaskExecutor(for: nil) == nil)
        native.shutdown()
        let two = NativeTransport(configuration: .init(loopCount: 2))
        defer { two.shutdown() }
        #expect(two.preferredTaskExecutor(for: URL(string: "http://127.0.0.1:1/")) is EventLoop)
    }

    @Test("while a request waits for its response, the transport prefers no executor: concurrent pipelines spread over the global one")
    func busyTransportPrefersGlobal() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            #expect(transport.preferredTaskExecutor(for: server.baseURL) != nil)
            // The answer is held until the test has seen the request waiting, however slow the machine.
            let gate = TestServer.Gate()
            server.route("/held") { _ in .whenOpen(gate, .text("ok")) }
            let slow = Task {
                try await transport.send(TransportRequest(method: .get, url: server.url("/held")), observer: IgnoringTransportObserver())
            }
            #expect(await eventually { transport.preferredTaskExecutor(for: server.baseURL) == nil })
            gate.open()
            #expect(try await slow.value.status.code == 200)
            #expect(transport.preferredTaskExecutor(for: server.baseURL) != nil)
            transport.shutdown()
        }
    }

    /// Sends a GET in the closure style (a request on a task of its own) and waits for its status.
    func closureGet(_ connection: HTTPConnection, _ path: String) async -> Int? {
        await withCheckedContinuation { continuation in
            connection.get(path, onSuccess: { continuation.resume(returning: $0.status.code) },
                           onError: { _ in continuation.resume(returning: nil) })
        }
    }

    @Test("a request on a task of its own runs its pipeline on the loop (start and finish are reported there), with a disk cache off it; an async caller's runs where its caller runs, here off the loop")
    func pipelineOnLoop() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loop-exec-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            let loop = try #require(transport.preferredTaskExecutor(for: server.baseURL) as? EventLoop)
            let memoryLog = ThreadLog(loop: loop)
            let plain = leaks.track(HTTPConnection(baseURL: server.baseURL, configuration: .init(
                timeout: .seconds(10), transport: transport, eventMonitor: memoryLog.monitor)))
            for _ in 0..<3 { #expect(await closureGet(plain, "/echo") == 200) }
            #expect(memoryLog.values == Array(repeating: true, count: 6))

            // The caller here runs on Swift's global executor, and so does its request's pipeline.
            let awaitedLog = ThreadLog(loop: loop)
            let awaited = leaks.track(HTTPConnection(baseURL: server.baseURL, configuration: .init(
                timeout: .seconds(10), transport: transport, eventMonitor: awaitedLog.monitor)))
            for _ in 0..<3 { #expect(try await awaited.get("/echo").status == .ok) }
            #expect(awaitedLog.values == Array(repeating: false, count: 6))

            let diskLog = ThreadLog(loop: loop)
            let cached = leaks.track(HTTPConnection(baseURL: server.baseURL, configuration: .init(
                timeout: .seconds(10), transport: transport, eventMonitor: diskLog.monitor,
                cache: HTTPCache(directory: directory))))
            #expect(await closureGet(cached, "/echo") == 200)
            #expect(diskLog.values == [false, false])
            transport.shutdown()
        }
    }

    @Test("a caller that prefers the connection's executor sends and resumes on the loop; concurrent requests from it all complete")
    func callerOnLoop() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            let loop = try #require(transport.ioExecutor(for: server.baseURL) as? EventLoop)
            let log = ThreadLog(loop: loop)
            let connection = leaks.track(HTTPConnection(baseURL: server.baseURL, configuration: .init(
                timeout: .seconds(10), transport: transport, eventMonitor: log.monitor)))
            #expect(connection.executor as? EventLoop === loop)
            let statuses = try await withTaskExecutorPreference(connection.executor) {
                var statuses: [Int] = []
                for index in 0..<5 {
                    #expect(loop.inEventLoop)
                    let response = try await connection.get("/echo", query: [.init("n", "\(index)")])
                    #expect(loop.inEventLoop, "request \(index) resumed off the loop")
                    #expect(String(decoding: response.body, as: UTF8.self).contains("n=\(index)"))
                    statuses.append(response.status.code)
                }
                // Several at once from the loop: none waits for another, all complete.
                let concurrent = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<8 { group.addTask { try await connection.get("/delay/50").status.code } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                return statuses + concurrent
            }
            #expect(statuses == Array(repeating: 200, count: 13))
            #expect(log.values.prefix(10).allSatisfy { $0 }, "\(log.values)")
            transport.shutdown()
        }
    }

    @Test("no executor for a connection on URLSessionTransport or with a disk cache")
    func noExecutor() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loop-exec-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let native = NativeTransport()
        defer { native.shutdown() }
        #expect(HTTPConnection(configuration: .init(transport: URLSessionTransport())).executor == nil)
        #expect(HTTPConnection(configuration: .init(transport: native, cache: HTTPCache(directory: directory))).executor == nil)
        #expect(HTTPConnection(configuration: .init(transport: native)).executor is EventLoop)
    }
}

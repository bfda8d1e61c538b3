import Courier
import CourierTestServer
import CourierTestSupport
import CourierWire
import Foundation
import Synchronization
import Testing

/// A request on the native transport runs its pipeline on the event loop that does its I/O, so
/// that no thread wakes up between the network and the pipeline; a cache that reads files keeps
/// it off the loop.
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
            let slow = Task {
                try await transport.send(TransportRequest(method: .get, url: server.url("/delay/400")), observer: IgnoringTransportObserver())
            }
            #expect(await eventually { transport.preferredTaskExecutor(for: server.baseURL) == nil })
            #expect(try await slow.value.status.code == 200)
            #expect(transport.preferredTaskExecutor(for: server.baseURL) != nil)
            transport.shutdown()
        }
    }

    @Test("a request's pipeline runs on the loop (start and finish events are reported there), and with a disk cache it does not")
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
            for _ in 0..<3 { _ = try await plain.get("/echo") }
            #expect(memoryLog.values.count == 6)
            #expect(memoryLog.values.allSatisfy { $0 }, "\(memoryLog.values)")

            let diskLog = ThreadLog(loop: loop)
            let cached = leaks.track(HTTPConnection(baseURL: server.baseURL, configuration: .init(
                timeout: .seconds(10), transport: transport, eventMonitor: diskLog.monitor,
                cache: HTTPCache(directory: directory))))
            _ = try await cached.get("/echo")
            #expect(diskLog.values.count == 2)
            #expect(diskLog.values.allSatisfy { !$0 }, "\(diskLog.values)")
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

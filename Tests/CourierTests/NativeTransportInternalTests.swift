@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The native transport's pool seen from inside: the order of its wait queue, idle timeouts,
/// and the silence timer of queued requests.
@Suite("Native transport: pool internals")
struct NativeTransportInternalTests {
    @Test("the wait queue is fair: requests get the connection in the order they arrived")
    func fairQueue() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native(.init(maxConnectionsPerHost: 1))
            defer { transport.shutdown() }
            // The only connection is held by a request that never gets an answer until it is cancelled.
            let blocker = Task { try await fetch(transport, server.url("/fault/stall"), timeout: .seconds(30)) }
            #expect(await eventually { server.requestCount(path: "/fault/stall") == 1 })
            var tasks: [Task<Echo, any Error>] = []
            for index in 1...6 {
                let url = server.url("/echo/\(index)")
                tasks.append(Task { try await fetch(transport, url).decode(Echo.self) })
                // The next request is started only once this one is queued.
                #expect(await eventuallyAsync { await transport.poolSnapshot(for: url)?.waiting == index })
            }
            blocker.cancel()
            await #expect(throws: HTTPConnectionError.cancelled) { try await blocker.value }
            // The cancelled request's connection is closed; the queue is served, in order, by the next one.
            for (offset, task) in tasks.enumerated() {
                let echo = try await task.value
                #expect(echo.path == "/echo/\(offset + 1)")
                #expect(echo.connection == 2)
                #expect(echo.request == offset + 1, "served out of order: \(echo.path) was request \(echo.request)")
            }
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test("an idle connection is closed after the idle timeout")
    func idleTimeout() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native(.init(idleTimeout: .milliseconds(200)))
            defer { transport.shutdown() }
            let url = server.url("/echo")
            _ = try await fetch(transport, url)
            #expect(await transport.poolSnapshot(for: url)?.waiting == 0)
            #expect(await eventuallyAsync { await transport.poolSnapshot(for: url)?.connections == 0 })
            #expect(await eventually { server.connectionsOpen == 0 })
            #expect(try await fetch(transport, url).decode(Echo.self).connection == 2)
        }
    }

    @Test("a busy connection is never closed by the idle timeout")
    func busyNotIdle() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native(.init(idleTimeout: .milliseconds(100)))
            defer { transport.shutdown() }
            // Each request outlives the idle timeout several times; closing its connection under it
            // would fail it with connectionLost.
            for _ in 0..<3 {
                #expect(try await fetch(transport, server.url("/delay/400")).status.code == 200)
            }
        }
    }

    @Test("a queued request times out when its pool makes no progress, and leaves the queue")
    func queuedSilence() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native(.init(maxConnectionsPerHost: 1))
            defer { transport.shutdown() }
            let stalled = Task { try await fetch(transport, server.url("/fault/stall"), timeout: .seconds(30)) }
            #expect(await eventually { server.requestCount(path: "/fault/stall") == 1 })
            let url = server.url("/echo")
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, url, timeout: .milliseconds(300))
            }
            #expect(error == .timedOut)
            #expect(await transport.poolSnapshot(for: url)?.waiting == 0)
            stalled.cancel()
            _ = await stalled.result
            #expect(try await fetch(transport, url).status.code == 200)
        }
    }

    @Test("a queued request does not time out while the connections ahead of it keep answering")
    func queuedBehindProgress() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native(.init(maxConnectionsPerHost: 1))
            defer { transport.shutdown() }
            let codes = try await withThrowingTaskGroup(of: Int.self) { group in
                // 6 answers 300 ms apart, 1.8 s in all, each well within the 1 s timeout of the
                // last one waiting (700 ms to spare per step, for a slow machine).
                for _ in 0..<6 {
                    group.addTask { try await fetch(transport, server.url("/delay/300"), timeout: .seconds(1)).status.code }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(codes == Array(repeating: 200, count: 6))
        }
    }

    @Test("J1 2,000 requests through 4 connections all complete, and the pool ends idle")
    func manyQueued() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native(.init(maxConnectionsPerHost: 4))
            defer { transport.shutdown() }
            let url = server.url("/echo")
            let total = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<2000 {
                    group.addTask { try await fetch(transport, url).status.code == 200 ? 1 : 0 }
                }
                return try await group.reduce(0, +)
            }
            #expect(total == 2000)
            #expect(server.connectionsAccepted <= 4)
            let snapshot = await transport.poolSnapshot(for: url)
            #expect(snapshot?.waiting == 0)
            #expect(snapshot?.idle == snapshot?.connections)
        }
    }
}

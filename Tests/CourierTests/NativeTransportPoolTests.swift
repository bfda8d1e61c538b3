import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The native transport's connection pool: keep-alive reuse, the per-host maximum, closed and
/// stale connections, and no leaked sockets (reliability cases A5, A6, J1, K1).
@Suite("Native transport: pool")
struct NativeTransportPoolTests {
    @Test("sequential requests reuse one keep-alive connection")
    func reuse() async throws {
        try await withNativeServer { server, transport throws in
            for index in 0..<20 {
                let response = try await fetch(transport, server.url("/echo/\(index)"))
                #expect(response.status.code == 200)
                let echo = try response.decode(Echo.self)
                #expect(echo.connection == 1)
                #expect(echo.request == index + 1)
            }
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test("16 concurrent requests with at most 2 connections per host: all succeed over at most 2 connections")
    func perHostMaximum() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let transport = leaks.native(.init(maxConnectionsPerHost: 2))
            defer { transport.shutdown() }
            let codes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<16 {
                    group.addTask { try await fetch(transport, server.url("/delay/30")).status.code }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(codes == Array(repeating: 200, count: 16))
            #expect(server.connectionsAccepted <= 2)
            #expect(server.totalRequests == 16)
        }
    }

    @Test("A6 a response with Connection: close is delivered, and the next request opens a new connection")
    func keepAliveThenClose() async throws {
        try await withNativeServer { server, transport throws in
            #expect(try await fetch(transport, server.url("/echo")).status.code == 200)
            let closing = try await fetch(transport, server.url("/fault/keepalive-then-close"))
            #expect(closing.text == "bye")
            let after = try await fetch(transport, server.url("/echo")).decode(Echo.self)
            #expect(after.connection == 2)
            #expect(after.request == 1)
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test("a request whose Connection field lists close (in any case, among other options) closes its connection; other options keep it")
    func requestAsksClose() async throws {
        try await withNativeServer { server, transport throws in
            let kept: HTTPHeaders = ["Connection": "keep-alive, closed-captions"]  // not the close option
            #expect(try await fetch(transport, server.url("/echo"), headers: kept).decode(Echo.self).connection == 1)
            let closing: HTTPHeaders = ["Connection": "keep-alive,  Close "]
            #expect(try await fetch(transport, server.url("/echo"), headers: closing).decode(Echo.self).connection == 1)
            let after = try await fetch(transport, server.url("/echo")).decode(Echo.self)
            #expect(after.connection == 2)
            #expect(after.request == 1)
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test("A5 a connection the server closed while idle is noticed; the next request goes out on a fresh one")
    func serverClosesIdleConnection() async throws {
        let server = try TestServer(configuration: .init(idleTimeout: .milliseconds(100)))
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let transport = leaks.native()
            defer { transport.shutdown() }
            #expect(try await fetch(transport, server.url("/echo")).status.code == 200)
            #expect(await eventually { server.connectionsOpen == 0 })
            try await Task.sleep(for: .milliseconds(50))
            let echo = try await fetch(transport, server.url("/echo")).decode(Echo.self)
            #expect(echo.connection == 2)
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test("A5 a stale pooled connection: an idempotent request is re-sent once on a fresh connection")
    func staleConnectionRetriesIdempotent() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            // The second request on any connection is read, then the connection closes without an
            // answer: exactly what a keep-alive connection closed under a request looks like.
            server.route("/flaky") { request in
                request.requestNumber >= 2 ? .script([.close]) : .text("fine \(request.connectionNumber)")
            }
            let transport = leaks.native()
            defer { transport.shutdown() }
            #expect(try await fetch(transport, server.url("/flaky")).text == "fine 1")
            let retried = try await fetch(transport, server.url("/flaky"))
            #expect(retried.text == "fine 2")
            #expect(server.requestCount(path: "/flaky") == 3)
            #expect(server.connectionsAccepted == 2)

            for method: HTTPRequest.Method in [.put, .delete, .head] {
                let response = try await fetch(transport, server.url("/flaky"), method: method)
                #expect(response.status.code == 200, "\(method)")
            }
        }
    }

    @Test("A5 a stale pooled connection: a POST whose bytes went out fails with staleConnection and is not repeated")
    func staleConnectionFailsPost() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            server.route("/flaky") { request in
                request.requestNumber >= 2 ? .script([.close]) : .text("fine")
            }
            let transport = leaks.native()
            defer { transport.shutdown() }
            #expect(try await fetch(transport, server.url("/flaky"), method: .post, body: Data("one".utf8)).text == "fine")
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, server.url("/flaky"), method: .post, body: Data("two".utf8))
            }
            #expect(error == .staleConnection)
            #expect(server.requestCount(path: "/flaky") == 2)
            // The pool recovers.
            #expect(try await fetch(transport, server.url("/echo")).status.code == 200)
        }
    }

    @Test("A3 a fresh connection closed without an answer fails with connectionLost, once, without a retry")
    func closedWithoutAnswer() async throws {
        try await withNativeServer { server, transport throws in
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, server.url("/fault/close-before-response"))
            }
            #expect(error == .connectionLost)
            #expect(server.requestCount(path: "/fault/close-before-response") == 1)
            #expect(try await fetch(transport, server.url("/echo")).status.code == 200)
        }
    }

    @Test("A2 a server that closes every connection before reading fails the request clearly")
    func closedBeforeReading() async throws {
        let server = try TestServer(configuration: .init(closeBeforeReading: true))
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, server.url("/echo"))
            }
            #expect(error == .connectionLost)
        }
    }

    @Test("K1 no socket is left open after requests, failures and shutdown")
    func noLeakedSockets() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let transport = leaks.native(.init(maxConnectionsPerHost: 4))
            _ = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<12 {
                    group.addTask { try await fetch(transport, server.url("/echo/\(index)")).status.code }
                }
                return try await group.reduce(0, +)
            }
            _ = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, server.url("/fault/garbage-status")) }
            _ = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, server.url("/fault/stall"), timeout: .milliseconds(100))
            }
            let stalled = Task { try await fetch(transport, server.url("/fault/stall")) }
            #expect(await eventually { server.requestCount(path: "/fault/stall") == 2 })
            #expect(ProcessSockets.connected(toPort: server.port) > 0)
            transport.shutdown()
            let result = await stalled.result
            #expect(throws: HTTPConnectionError.cancelled) { try result.get() }
            #expect(ProcessSockets.connected(toPort: server.port) == 0)
            #expect(await eventually { server.connectionsOpen == 0 })
            // A transport that was shut down refuses new work clearly.
            let refused = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, server.url("/echo")) }
            #expect(refused == .cancelled)
        }
    }

    @Test("K1 a transport released without shutdown closes its sockets")
    func releasedTransportClosesSockets() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            do {
                let transport = leaks.native()
                #expect(try await fetch(transport, server.url("/echo")).status.code == 200)
                #expect(ProcessSockets.connected(toPort: server.port) == 1)
            }
            #expect(await eventually { ProcessSockets.connected(toPort: server.port) == 0 })
            #expect(await eventually { server.connectionsOpen == 0 })
        }
    }
}

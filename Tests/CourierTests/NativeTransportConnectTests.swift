import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Connecting, timing out and cancelling with the native transport (reliability cases A1, B1,
/// B2, B5, I2): IPv4, IPv6 and `localhost`, refused and never-completing connects, silence, and
/// Swift task cancellation at every stage.
@Suite("Native transport: connect, timeout, cancel")
struct NativeTransportConnectTests {
    @Test("A1 a refused connection fails with cannotConnect")
    func refused() async throws {
        try await withLeakCheck { leaks throws in
            leaks.watch(port: refusedURL().port ?? 1)
            let transport = leaks.native()
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, refusedURL()) }
            #expect(error == .cannotConnect)
            #expect(error?.underlying != nil)
        }
    }

    @Test("I1 I5 TLS options that cannot protect (chain off without pins, a pin that is not 32 bytes) fail https requests with tlsFailed before connecting")
    func unusableTLSOptions() async throws {
        try await withLeakCheck { leaks throws in
            let url = URL(string: "https://127.0.0.1:1/")!  // nothing listens: connecting would fail with cannotConnect
            leaks.watch(port: 1)
            let unusable = [TLSOptions(verifiesCertificateChain: false),
                            TLSOptions(pins: [.publicKeySHA256(Data(count: 31))])]
            for options in unusable {
                let transport = leaks.native(.init(tls: options))
                defer { transport.shutdown() }
                let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, url) }
                #expect(error == .tlsFailed, "\(String(describing: error))")
                #expect(error?.description.contains("Invalid TLS configuration") == true, "\(String(describing: error))")
            }
        }
    }

    @Test("localhost resolves (off the loop) and connects to the IPv4 listener")
    func localhost() async throws {
        try await withNativeServer { server, transport throws in
            let response = try await fetch(transport, URL(string: "http://localhost:\(server.port)/echo")!)
            let echo = try response.decode(Echo.self)
            #expect(echo.header("Host") == "localhost:\(server.port)")
        }
    }

    @Test("an IPv6 literal URL reaches a server on [::1]", .enabled(if: Nginx.isInstalled, Nginx.skipReason))
    func ipv6() async throws {
        let nginx = try await Nginx.start(files: ["hello.txt": Data("hello over IPv6".utf8)], ipv6: true)
        defer { nginx.stop() }
        try await withLeakCheck { leaks throws in
            leaks.watch(port: nginx.port)
            let transport = leaks.native()
            defer { transport.shutdown() }
            let response = try await fetch(transport, URL(string: "http://[::1]:\(nginx.port)/hello.txt")!)
            #expect(response.text == "hello over IPv6")
            let viaName = try await fetch(transport, URL(string: "http://localhost:\(nginx.port)/hello.txt")!)
            #expect(viaName.text == "hello over IPv6")
        }
    }

    @Test("B1 a server that never answers times out after the request's timeout, and the connection is closed")
    func stallTimesOut() async throws {
        try await withNativeServer { server, transport throws in
            let clock = ContinuousClock()
            let start = clock.now
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, server.url("/fault/stall"), timeout: .milliseconds(300))
            }
            #expect(error == .timedOut)
            #expect(clock.now - start < .seconds(20))  // a hang guard: the suite runs in parallel on 2 cores
            #expect(await eventually { server.connectionsOpen == 0 })
        }
    }

    @Test("B4 a trickling body succeeds while bytes keep coming, even past the timeout")
    func trickle() async throws {
        try await withNativeServer { server, transport throws in
            // 1.5 s of body against a 1 s timeout, a byte every 100 ms: 900 ms of slack for a
            // loaded machine, yet the transfer outlasts the timeout.
            let response = try await fetch(transport, server.url("/fault/trickle?bytes=15&interval=100"), timeout: .seconds(1))
            #expect(response.body.count == 15)
        }
    }

    @Test("B5 a connect that never completes: the request's timeout wins, or the connect timeout")
    func connectNeverCompletes() async throws {
        let listener = try BlackholeListener()
        let listenerFillers = ProcessSockets.connected(toPort: listener.port)
        try await withLeakCheck { leaks throws in
            leaks.watch(port: listener.port, baseline: listenerFillers)
            let transport = leaks.native()
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, listener.url, timeout: .milliseconds(300))
            }
            #expect(error == .timedOut)

            let impatient = leaks.native(.init(connectTimeout: .milliseconds(300)))
            defer { impatient.shutdown() }
            let connectError = await failure { () async throws(HTTPConnectionError) in
                try await fetch(impatient, listener.url, timeout: .seconds(10))
            }
            #expect(connectError == .timedOut, "\(String(describing: connectError))")
            #expect(connectError?.description.contains("timed out after") == true)
        }
    }

    @Test("I2 cancelling the task while connecting ends with cancelled at once")
    func cancelDuringConnect() async throws {
        let listener = try BlackholeListener()
        let listenerFillers = ProcessSockets.connected(toPort: listener.port)
        try await withLeakCheck { leaks throws in
            leaks.watch(port: listener.port, baseline: listenerFillers)
            let transport = leaks.native()
            defer { transport.shutdown() }
            let url = listener.url
            let task = Task { try await fetch(transport, url, timeout: .seconds(30)) }
            try await Task.sleep(for: .milliseconds(100))
            let clock = ContinuousClock()
            let start = clock.now
            task.cancel()
            let result = await task.result
            #expect(throws: HTTPConnectionError.cancelled) { try result.get() }
            #expect(clock.now - start < .seconds(10))  // a hang detector: the connect itself would never end
        }
    }

    @Test("I2 cancelling the task while waiting for the head, or in the body, closes the connection")
    func cancelDuringResponse() async throws {
        try await withNativeServer { server, transport throws in
            for path in ["/fault/stall", "/fault/stall-body"] {
                let observer = RecordingObserver()
                let task = Task { try await fetch(transport, server.url(path), timeout: .seconds(30), observer: observer) }
                #expect(await eventually { server.requestCount(path: path) == 1 })
                if path.hasSuffix("body") { #expect(await eventually { !observer.progress.isEmpty }) }
                task.cancel()
                let result = await task.result
                #expect(throws: HTTPConnectionError.cancelled) { try result.get() }
                #expect(await eventually { server.connectionsOpen == 0 }, "\(path)")
            }
            #expect(try await fetch(transport, server.url("/echo")).status.code == 200)
        }
    }

    @Test("I1 a task cancelled before it sends never reaches the server")
    func cancelledBeforeStart() async throws {
        try await withNativeServer { server, transport throws in
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await fetch(transport, server.url("/echo"))
            }
            let result = await task.result
            #expect(throws: HTTPConnectionError.cancelled) { try result.get() }
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.totalRequests == 0)
        }
    }

    @Test("I4 many tasks cancelled at random moments each end exactly once, and the pool keeps serving")
    func cancellationRaces() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native(.init(maxConnectionsPerHost: 4))
            defer { transport.shutdown() }
            var tasks: [Task<HTTPResponse, any Error>] = []
            for index in 0..<200 {
                let path = index.isMultiple(of: 3) ? "/delay/5" : "/echo/\(index)"
                tasks.append(Task { try await fetch(transport, server.url(path)) })
                if index.isMultiple(of: 2) { tasks[index].cancel() }
            }
            var outcomes = 0
            for task in tasks {
                switch await task.result {
                case .success(let response): #expect(response.status.code == 200)
                case .failure(let error): #expect(error as? HTTPConnectionError == .cancelled)
                }
                outcomes += 1
            }
            #expect(outcomes == 200)
            #expect(try await fetch(transport, server.url("/echo")).status.code == 200)
        }
    }

    @Test("the request is framed as documented: Host, User-Agent, Accept-Encoding, Content-Length")
    func requestFraming() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            defer { transport.shutdown() }
            let get = try await fetch(transport, server.url("/echo?q=a%20b")).decode(Echo.self)
            #expect(get.header("Host") == "127.0.0.1:\(server.port)")
            #expect(get.header("User-Agent")?.hasPrefix("Courier/") == true)
            #expect(get.header("Accept-Encoding") == "gzip, deflate")
            #expect(get.header("Content-Length") == nil)
            #expect(get.query == "q=a%20b")

            let post = try await fetch(transport, server.url("/echo"), method: .post,
                                       headers: ["User-Agent": "mine", "Content-Length": "999"]).decode(Echo.self)
            #expect(post.header("Content-Length") == "0")
            #expect(post.header("User-Agent") == "mine")

            let large = Data((0..<200_000).map { UInt8($0 % 251) })
            let put = try await fetch(transport, server.url("/echo"), method: .put, body: large).decode(Echo.self)
            #expect(put.bodyLength == large.count)

            let plain = leaks.native(.init(decompression: false))
            defer { plain.shutdown() }
            #expect(try await fetch(plain, server.url("/echo")).decode(Echo.self).header("Accept-Encoding") == nil)
        }
    }
}

@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `NativeTransport.stream`: the head at once, the body in chunks with backpressure, over real
/// sockets to CourierTestServer.
@Suite("Native transport: streamed response bodies")
struct NativeStreamingTests {
    static func request(_ server: TestServer, _ path: String, timeout: Duration = .seconds(10)) -> TransportRequest {
        TransportRequest(method: .get, url: server.url(path), timeout: timeout, maxResponseBodySize: 1 << 20)
    }

    @Test("a 10 MiB body streams byte for byte past a 1 MiB body limit, and the connection serves the next request")
    func streamsWholeBody() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            let size = 10 << 20
            let streamed = try await transport.stream(Self.request(server, "/bytes/\(size)"), observer: IgnoringTransportObserver())
            #expect(streamed.status.code == 200)
            #expect(streamed.headers["Content-Length"] == "\(size)")
            var received = Data()
            var chunks = 0
            for try await chunk in streamed.body {
                received.append(chunk)
                chunks += 1
            }
            #expect(received == TestServer.bytesPattern(count: size))
            #expect(chunks > 1)
            let next = try await transport.send(Self.request(server, "/echo"), observer: IgnoringTransportObserver())
            #expect(next.status.code == 200)
            #expect(server.connectionsAccepted == 1, "the streamed response's connection was reused")
            transport.shutdown()
        }
    }

    @Test("a slow consumer holds back the reading: at most 256 KiB plus one small read is ever buffered for it")
    func backpressure() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            let size = 32 << 20
            let streamed = try await transport.stream(Self.request(server, "/bytes/\(size)"), observer: IgnoringTransportObserver())
            let received = try await streamed.body.readSlowly(slowChunks: 20)
            #expect(received == TestServer.bytesPattern(count: size))
            let peak = streamed.body.buffer.peakBuffered
            #expect(peak >= streamed.body.buffer.highWaterMark, "the consumer fell behind: \(peak)")
            #expect(peak <= streamed.body.buffer.highWaterMark + HTTP1ClientConnection.minimumStreamedRead, "held \(peak) bytes (reads are 256 KiB)")
            transport.shutdown()
        }
    }

    @Test("over TLS a slow consumer is held to 256 KiB plus one small read and one TLS record",
          .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable, "nginx and openssl are needed"))
    func backpressureOverTLS() async throws {
        let block = Data((0..<65_537).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        var body = Data()
        for _ in 0..<64 { body.append(block) }  // 4 MiB; the odd block size keeps offsets from repeating
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(files: ["big.bin": body], tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        try await withLeakCheck { leaks throws in
            leaks.watch(port: nginx.port)
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            let request = TransportRequest(method: .get, url: nginx.url("/big.bin"), timeout: .seconds(10), maxResponseBodySize: 1 << 20)
            let streamed = try await transport.stream(request, observer: IgnoringTransportObserver())
            let received = try await streamed.body.readSlowly(slowChunks: 20)
            #expect(received == body)
            let peak = streamed.body.buffer.peakBuffered
            #expect(peak >= streamed.body.buffer.highWaterMark, "the consumer fell behind: \(peak)")
            // A read takes at most the reader's room (or 16 KiB); the TLS session may add the
            // rest of one record (16 KiB of plaintext) that an earlier read began.
            let bound = streamed.body.buffer.highWaterMark + HTTP1ClientConnection.minimumStreamedRead + (16 << 10)
            #expect(peak <= bound, "held \(peak) bytes")
        }
    }

    @Test("breaking out of the loop abandons the body: the connection closes, and the next request gets a fresh one")
    func breakAbandons() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            do {
                let streamed = try await transport.stream(Self.request(server, "/bytes/\(8 << 20)"), observer: IgnoringTransportObserver())
                for try await chunk in streamed.body {
                    #expect(!chunk.isEmpty)
                    break
                }
            }
            #expect(await eventually { server.connectionsOpen == 0 }, "the abandoned connection closed")
            let next = try await transport.send(Self.request(server, "/echo"), observer: IgnoringTransportObserver())
            #expect(next.status.code == 200)
            #expect(server.connectionsAccepted == 2)
            transport.shutdown()
        }
    }

    @Test("cancelling the reading task ends the iteration with cancelled at once, while the server stalls")
    func cancelWhileWaiting() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            let streamed = try await transport.stream(Self.request(server, "/fault/stall-body"), observer: IgnoringTransportObserver())
            let progress = Locked(0)
            let reader = Task { () async -> (Int, HTTPConnectionError?) in
                var count = 0
                do throws(HTTPConnectionError) {
                    for try await chunk in streamed.body {
                        count += chunk.count
                        progress.withLock { [count] in $0 = count }
                    }
                    return (count, nil)
                } catch {
                    return (count, error)
                }
            }
            #expect(await eventually { progress.withLock { $0 } == 10 })  // the reader has the bytes before the stall
            let started = ContinuousClock.now
            reader.cancel()
            let (count, error) = await reader.value
            #expect(count == 10)
            #expect(error == .cancelled)
            #expect(ContinuousClock.now - started < .seconds(2))
            #expect(await eventually { server.connectionsOpen == 0 })
            transport.shutdown()
        }
    }

    @Test("a body cut short by the server throws connectionLost after the bytes that came; a stalled one times out")
    func brokenBodies() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            for (path, expected, bytes) in [("/fault/close-mid-body", HTTPConnectionError.connectionLost, 40),
                                            ("/fault/stall-body", .timedOut, 10)] {
                let streamed = try await transport.stream(Self.request(server, path, timeout: .milliseconds(500)),
                                                          observer: IgnoringTransportObserver())
                var count = 0
                var failure: HTTPConnectionError?
                do throws(HTTPConnectionError) {
                    for try await chunk in streamed.body { count += chunk.count }
                } catch {
                    failure = error
                }
                #expect(count == bytes, "\(path)")
                #expect(failure == expected, "\(path): \(String(describing: failure))")
            }
            transport.shutdown()
        }
    }

    @Test("a response that is never read (the stream dropped) closes its connection")
    func droppedUnread() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            do {
                let streamed = try await transport.stream(Self.request(server, "/bytes/\(4 << 20)"), observer: IgnoringTransportObserver())
                #expect(streamed.status.code == 200)
            }
            #expect(await eventually { server.connectionsOpen == 0 })
            transport.shutdown()
        }
    }

    @Test("URLSessionTransport streams a response but not a streamed request body: unsupportedByTransport, and nothing is sent")
    func urlSessionUnsupported() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        var request = Self.request(server, "/echo")
        request.method = .post
        request.upload = HTTPRequest.Body.stream(AsyncStream<Data> { $0.finish() }).upload
        do {
            _ = try await URLSessionTransport().stream(request, observer: IgnoringTransportObserver())
            Issue.record("expected unsupportedByTransport")
        } catch {
            #expect(error == .unsupportedByTransport)
            #expect(error.description.contains("URLSessionTransport"))
        }
        #expect(server.totalRequests == 0)
    }
}

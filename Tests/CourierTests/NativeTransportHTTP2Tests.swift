@testable import Courier
import CourierTestSupport
import CourierTestServer
import Foundation
import Testing

/// HTTP/2 in the native transport against independent servers: nghttpd (Debian's
/// `nghttp2-server`) over TLS and as cleartext h2c by prior knowledge, and nginx with `http2`
/// over TLS. Multiplexing is checked by the servers' own logs and the pool's connection count.
@Suite("Native transport: HTTP/2 against nghttpd and nginx")
struct NativeTransportHTTP2Tests {
    static let big = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
    static let small = Data(#"{"rooms":[{"id":1,"name":"Lobby"}]}"#.utf8)
    static let needsTLSPeers: Comment = "nghttpd (apt-get install nghttp2-server) and openssl are needed for the HTTP/2 TLS tests"
    static let needsNginx: Comment = "nginx and openssl are needed for the nginx HTTP/2 tests"

    static func request(_ url: URL, method: HTTPRequest.Method = .get, body: Data = Data(),
                        timeout: Duration = .seconds(10)) -> TransportRequest {
        TransportRequest(method: method, url: url, body: body, timeout: timeout, maxResponseBodySize: 64 << 20)
    }

    @Test("h2c by prior knowledge: files byte for byte, a 3 MB upload echoed byte for byte, all on one connection",
          .enabled(if: NGHTTPD.isInstalled, NGHTTPD.skipReason))
    func priorKnowledge() async throws {
        let server = try await NGHTTPD.start(files: ["big.bin": Self.big, "rooms.json": Self.small])
        defer { server.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: server.port)
            let configuration = NativeTransport.Configuration(decompression: false).speakingH2C()
            let transport = leaks.native(configuration)
            defer { transport.shutdown() }
            let observer = RecordingObserver()
            let page = try await transport.send(Self.request(server.url("/rooms.json")), observer: observer)
            #expect(page.status.code == 200 && page.body == Self.small)
            #expect(try await transport.send(Self.request(server.url("/big.bin")), observer: IgnoringTransportObserver()).body == Self.big)
            let echoed = try await transport.send(Self.request(server.url("/echo"), method: .post, body: Self.big),
                                                  observer: IgnoringTransportObserver())
            #expect(echoed.status.code == 200)
            #expect(echoed.body == Self.big)
            let missing = try await transport.send(Self.request(server.url("/missing")), observer: IgnoringTransportObserver())
            #expect(missing.status.code == 404)
            #expect(server.sessionCount() == 1)
            #expect(await transport.poolSnapshot(for: server.url("/"))?.connections == 1)
        }
    }

    @Test("uploads over HTTP/2 (h2c): a file, a stream without a length and a multipart form arrive byte for byte (nghttpd echoes them)",
          .enabled(if: NGHTTPD.isInstalled, NGHTTPD.skipReason))
    func uploads() async throws {
        let server = try await NGHTTPD.start()
        defer { server.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-h2-upload-\(UUID().uuidString)")
        try Self.big.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withLeakCheck { leaks in
            leaks.watch(port: server.port)
            let configuration = NativeTransport.Configuration(decompression: false).speakingH2C()
            let transport = leaks.native(configuration)
            defer { transport.shutdown() }
            let connection = leaks.track(HTTPConnection(baseURL: server.baseURL, configuration: .init(transport: transport, cache: nil)))
            let fromFile = try await connection.send(HTTPRequest(.post, "/echo", body: try .file(file)))
            #expect(fromFile.body == Self.big)
            #expect(fromFile.metrics?.httpVersion == "HTTP/2")
            let chunks = stride(from: 0, to: Self.big.count, by: 100_000).map { Self.big[$0..<min($0 + 100_000, Self.big.count)] }
            let fromStream = try await connection.send(HTTPRequest(.put, "/echo", body: .stream(AsyncStream { continuation in
                for chunk in chunks { continuation.yield(Data(chunk)) }
                continuation.finish()
            })))
            #expect(fromStream.body == Self.big)
            var form = MultipartForm()
            form.append(name: "greeting", value: "hello")
            try form.append(name: "upload", fileURL: file, filename: "big.bin")
            let fromForm = try await connection.send(HTTPRequest(.post, "/echo", body: .multipart(form)))
            #expect(fromForm.body.count > Self.big.count)
            #expect(fromForm.body.range(of: Self.big) != nil)
            #expect(server.sessionCount() == 1)
        }
    }

    @Test("ALPN picks h2 (nghttpd over TLS): 64 concurrent requests share one connection; shutting down sends GOAWAY",
          .enabled(if: NGHTTPD.isInstalled && TestCertificates.isAvailable, needsTLSPeers))
    func multiplexing() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await NGHTTPD.start(files: ["rooms.json": Self.small, "big.bin": Self.big],
                                             tls: (certificates.valid.certificate, certificates.valid.key))
        defer { server.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: server.port)
            // Two loops: an origin that speaks HTTP/2 still stays on one of them, one connection.
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM)), loopCount: 2))
            defer { transport.shutdown() }
            let url = server.url("/rooms.json")
            let bigURL = server.url("/big.bin")
            let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
                for i in 0..<64 {
                    group.addTask { try await transport.send(Self.request(i % 8 == 0 ? bigURL : url), observer: IgnoringTransportObserver()).body }
                }
                return try await group.reduce(into: [Data]()) { $0.append($1) }
            }
            #expect(bodies.count == 64)
            #expect(bodies.filter { $0 == Self.big }.count == 8)
            #expect(bodies.filter { $0 == Self.small }.count == 56)
            #expect(server.sessionCount() == 1, "nghttpd saw \(server.sessionCount()) connections")
            #expect(await transport.poolSnapshots(for: url).map(\.connections) == [1])
            transport.shutdown()
            #expect(await eventually(timeout: .seconds(5)) { server.log().contains("recv GOAWAY") }, "a shutdown says GOAWAY")
        }
    }

    @Test("cancelling a streamed response sends RST_STREAM(CANCEL) and keeps the connection",
          .enabled(if: NGHTTPD.isInstalled, NGHTTPD.skipReason))
    func cancelKeepsConnection() async throws {
        let huge = Data(count: 32 << 20)
        let server = try await NGHTTPD.start(files: ["huge.bin": huge, "rooms.json": Self.small])
        defer { server.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: server.port)
            let configuration = NativeTransport.Configuration().speakingH2C()
            let transport = leaks.native(configuration)
            defer { transport.shutdown() }
            let streamed = try await transport.stream(Self.request(server.url("/huge.bin")), observer: IgnoringTransportObserver())
            var received = 0
            for try await chunk in streamed.body {
                received += chunk.count
                if received > 100_000 { break }
            }
            #expect(received < huge.count)
            // The connection is kept: the next request goes on it.
            let next = try await transport.send(Self.request(server.url("/rooms.json")), observer: IgnoringTransportObserver())
            #expect(next.body == Self.small)
            #expect(server.sessionCount() == 1)
            #expect(server.log().contains("recv RST_STREAM frame"), "nghttpd did not log the RST_STREAM")
            #expect(server.log().contains("error_code=CANCEL"))
        }
    }

    @Test("a streamed HTTP/2 body arrives whole, with flow control as the back-pressure",
          .enabled(if: NGHTTPD.isInstalled, NGHTTPD.skipReason))
    func streamedBody() async throws {
        let server = try await NGHTTPD.start(files: ["big.bin": Self.big])
        defer { server.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: server.port)
            let configuration = NativeTransport.Configuration().speakingH2C()
            let transport = leaks.native(configuration)
            defer { transport.shutdown() }
            for _ in 0..<2 {
                let streamed = try await transport.stream(Self.request(server.url("/big.bin")), observer: IgnoringTransportObserver())
                let received = try await streamed.body.readSlowly(slowChunks: 10)
                #expect(received == Self.big)
            }
            #expect(server.sessionCount() == 1)
        }
    }

    @Test("nginx with http2 over TLS: files and gzip over HTTP/2, many requests on one connection (nginx's log says HTTP/2.0)",
          .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable, needsNginx))
    func nginxHTTP2() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(files: ["big.bin": Self.big, "rooms.json": Self.small],
                                          server: "gzip on; gzip_min_length 0; gzip_types application/json; access_log logs/access.log courier;",
                                          http: "log_format courier '$server_protocol $connection $status';",
                                          tls: (certificates.valid.certificate, certificates.valid.key), http2: true)
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: nginx.port)
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            let first = try await transport.send(Self.request(nginx.url("/rooms.json")), observer: IgnoringTransportObserver())
            #expect(first.headers["content-encoding"] == nil)
            #expect(first.contentDecoding?.contentEncoding == "gzip")
            #expect(first.body == Self.small)
            let url = nginx.url("/big.bin")
            let upload = Data(count: 1 << 20)
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<24 {
                    group.addTask { try await transport.send(Self.request(url), observer: IgnoringTransportObserver()).body == Self.big }
                }
                group.addTask {
                    // nginx answers a POST to a static file with 405, after reading the body.
                    try await transport.send(Self.request(url, method: .post, body: upload), observer: IgnoringTransportObserver()).status.code == 405
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results == Array(repeating: true, count: 25))
            let log = try String(contentsOf: nginx.directory.appendingPathComponent("logs/access.log"), encoding: .utf8)
            let lines = log.split(separator: "\n")
            #expect(lines.count == 26)
            #expect(lines.allSatisfy { $0.hasPrefix("HTTP/2.0 ") }, "\(lines.first ?? "")")
            #expect(Set(lines.map { $0.split(separator: " ")[1] }).count == 1, "nginx saw more than one connection")
        }
    }

    @Test("over HTTP/2 a request's bytesSent is its HPACK-compressed HEADERS: fewer bytes than its HTTP/1.1 head, and far fewer once its fields are in the table",
          .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable, needsNginx))
    func http2BytesSent() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(files: ["rooms.json": Self.small], tls: (certificates.valid.certificate, certificates.valid.key),
                                          http2: true)
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: nginx.port)
            var request = HTTPRequest(.get, "/rooms.json")
            request.headers["X-Trace"] = String(repeating: "trace-", count: 20)
            var sent: [String: [Int64]] = [:]
            for version in [NativeTransport.HTTPVersionPolicy.automatic, .http1Only] {
                var configuration = NativeTransport.Configuration(tls: TLSOptions(trustRoots: .pem(certificates.caPEM)))
                configuration.httpVersion = version
                let transport = leaks.native(configuration)
                defer { transport.shutdown() }
                let connection = leaks.track(HTTPConnection(baseURL: nginx.url("/"), configuration: .init(transport: transport, cache: nil)))
                for _ in 0..<2 {
                    let response = try await connection.send(request)
                    #expect(response.body == Self.small)
                    let metrics = try #require(response.metrics)
                    sent[metrics.httpVersion ?? "none", default: []].append(metrics.bytesSent)
                }
            }
            let http2 = try #require(sent["HTTP/2"]), http1 = try #require(sent["HTTP/1.1"])
            #expect(http1[0] == http1[1], "HTTP/1.1 sends the same head twice: \(http1)")
            #expect(http1[0] > 150, "the HTTP/1.1 head holds the 120-octet field: \(http1)")
            #expect(http2[0] < http1[0], "HPACK and Huffman coding shrink the first head: \(http2) against \(http1)")
            #expect(http2[1] < http2[0] / 3, "the second head indexes the fields the first one added to the table: \(http2)")
        }
    }

    @Test("ALPN falls back to HTTP/1.1 against a TLS server without h2 (nginx without http2)",
          .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable, needsNginx))
    func alpnFallback() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        // slow.bin takes about a second (16 KiB at 16 KiB/s), so the burst's requests overlap
        // however slowly a loaded machine starts them.
        let nginx = try await Nginx.start(files: ["rooms.json": Self.small, "slow.bin": Data(count: 16 << 10)],
                                          server: "access_log logs/access.log courier; location = /slow.bin { limit_rate 16k; }",
                                          http: "log_format courier '$server_protocol $connection $status';",
                                          tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: nginx.port)
            let transport = leaks.native(.init(maxConnectionsPerHost: 4, tls: TLSOptions(trustRoots: .pem(certificates.caPEM)),
                                               loopCount: 2))
            defer { transport.shutdown() }
            let url = nginx.url("/rooms.json")
            // Until a connection has shown HTTP/1.1, the origin stays on one loop.
            #expect(try await transport.send(Self.request(url), observer: IgnoringTransportObserver()).status.code == 200)
            #expect(await transport.poolSnapshots(for: url).count == 1)
            // Then it spreads over both loops, each within its share of the limit.
            let slow = nginx.url("/slow.bin")
            let codes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { try await transport.send(Self.request(slow), observer: IgnoringTransportObserver()).status.code } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(codes == Array(repeating: 200, count: 8))
            let widened = await transport.poolSnapshots(for: url)
            try #require(widened.count == 2)
            #expect(widened[0].connections <= 2)
            #expect(widened[1].connections <= 2)
            #expect(widened[1].connections > 0, "the second loop serves too")
            let log = try String(contentsOf: nginx.directory.appendingPathComponent("logs/access.log"), encoding: .utf8)
            #expect(log.split(separator: "\n").allSatisfy { $0.hasPrefix("HTTP/1.1 ") })
            let connection = leaks.track(HTTPConnection(baseURL: nginx.baseURL, configuration: .init(transport: transport, cache: nil)))
            #expect(try await connection.get("/rooms.json").metrics?.httpVersion == "HTTP/1.1")
            // HTTP/2 only against the same server fails with a clear error.
            var strict = NativeTransport.Configuration(tls: TLSOptions(trustRoots: .pem(certificates.caPEM)))
            strict.httpVersion = .http2PriorKnowledge
            let http2Only = leaks.native(strict)
            defer { http2Only.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in
                try await http2Only.send(Self.request(url), observer: IgnoringTransportObserver())
            }
            // nginx refuses the handshake (RFC 7301 no_application_protocol alert).
            #expect(error == .tlsFailed)
            #expect(error?.detail?.contains("no application protocol") == true, "\(String(describing: error))")
        }
    }
}

import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Uploads over HTTPS to nginx (an independent peer decoding the framing, TLS included), which
/// passes them on to a CourierTestServer that hashes what arrived.
@Suite("Uploads: HTTPS through nginx", .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable,
                                                  "nginx and openssl are needed for the HTTPS upload tests"))
struct UploadNginxTests {
    @Test("a chunked stream, a stream with a length and a file of 10 MiB + 1 arrive byte for byte over TLS")
    func overTLS() async throws {
        let upstream = try TestServer(configuration: .init(maxBodyBytes: 16 << 20))
        defer { upstream.shutdown() }
        upstream.addHashRoute()
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(
            server: "client_max_body_size 64m; location /sha { proxy_pass http://127.0.0.1:\(upstream.port); }",
            tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        let size = (10 << 20) + 1
        let file = try TemporaryFile(size: size)
        defer { file.remove() }
        let expected = sha256Hex(PatternChunks.bytes(from: 0, count: size))
        try await withLeakCheck { leaks throws in
            leaks.watch(port: nginx.port)
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            let connection = leaks.track(HTTPConnection(baseURL: nginx.baseURL, configuration: .init(timeout: .seconds(30), transport: transport)))
            let bodies: [(String, HTTPRequest.Body)] = [
                ("chunked", .stream(PatternChunks(total: size, chunk: 50_000))),
                ("length", .stream(PatternChunks(total: size, chunk: 70_001), length: Int64(size))),
                ("file", try .file(file.url)),
            ]
            for (name, body) in bodies {
                let response = try await connection.send(HTTPRequest(.put, "/sha/\(name)", body: body))
                let received = ReceivedBody(response.text ?? "")
                #expect(received.sha256 == expected, "\(name)")
                #expect(received.length == size, "\(name)")
            }
        }
    }
}

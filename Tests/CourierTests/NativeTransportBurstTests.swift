import Courier
import CourierTestSupport
import Foundation
import Testing

/// A burst of requests to an origin the transport has not spoken to yet, over real sockets.
@Suite("Native transport: a burst to a new origin", .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable,
                                                             "nginx and openssl are needed for the burst tests"))
struct NativeTransportBurstTests {
    @Test("a burst to an HTTPS origin that speaks HTTP/1.1 alone gets a connection for each request once ALPN has told")
    func burstToHTTP1Origin() async throws {
        // Over HTTPS the pool first opens one connection, in case ALPN picks HTTP/2 and the whole
        // burst can share it. This nginx speaks only HTTP/1.1, and each response takes about 2 s
        // (nginx's limit_rate sends 8 KiB at once, the rest over the next seconds), so no
        // connection frees up during the burst: every request needs its own. (The pool used to
        // open just one more connection once it learnt HTTP/1.1, so that six requests shared two.)
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(files: ["slow.bin": Data(count: 16_384)],
                                          server: "limit_rate 8k; add_header X-Connection $connection always;",
                                          tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        try await withLeakCheck { leaks throws in
            leaks.watch(port: nginx.port)
            let transport = leaks.native(.init(maxConnectionsPerHost: 8, tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            let url = nginx.url("/slow.bin")
            let responses = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
                for _ in 0..<6 { group.addTask { try await fetch(transport, url) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.allSatisfy { $0.status == .ok && $0.body.count == 16_384 })
            let connections = Set(responses.compactMap { $0.headers["X-Connection"] })
            #expect(connections.count == 6, "nginx served the 6 requests on connections \(responses.map { $0.headers["X-Connection"] ?? "-" })")
        }
    }
}

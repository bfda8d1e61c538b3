import Courier
import CourierTestSupport
import Foundation
import Testing

/// `https` through the native transport against nginx serving certificates made at test time:
/// a trusted chain works, and each kind of certificate failure has its own error.
@Suite("Native transport: TLS", .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable,
                                         "nginx and openssl are needed for the TLS tests"))
struct NativeTransportTLSTests {
    static let page = Data(String(repeating: "secure ", count: 3000).utf8)

    private func withServer(_ pair: (TestCertificates) -> TestCertificates.Pair,
                            host: String = "127.0.0.1",
                            sourceLocation: SourceLocation = #_sourceLocation,
                            _ body: (Nginx, TestCertificates, LeakCheck) async throws -> Void) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let chosen = pair(certificates)
        let nginx = try await Nginx.start(files: ["page.txt": Self.page], server: "gzip on; gzip_types text/plain;",
                              tls: (chosen.certificate, chosen.key), host: host)
        defer { nginx.stop() }
        try await withLeakCheck(sourceLocation: sourceLocation) { leaks in
            leaks.watch(port: nginx.port)
            try await body(nginx, certificates, leaks)
        }
    }

    @Test("a certificate from a trusted custom CA works, by IP address and by name, with keep-alive")
    func trusted() async throws {
        try await withServer({ $0.valid }) { nginx, certificates, leaks in
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            for _ in 0..<3 {
                let response = try await fetch(transport, nginx.url("/page.txt"))
                #expect(response.body == Self.page)
            }
            let byName = try await fetch(transport, URL(string: "https://localhost:\(nginx.port)/page.txt")!)
            #expect(byName.body == Self.page)
            let url = nginx.url("/page.txt")
            let big = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { try await fetch(transport, url).body.count } }
                return try await group.reduce(0, +)
            }
            #expect(big == Self.page.count * 8)
            let systemPlus = leaks.native(.init(tls: TLSOptions(trustRoots: .systemPlus(pem: certificates.caPEM))))
            defer { systemPlus.shutdown() }
            #expect(try await fetch(systemPlus, nginx.url("/page.txt")).body == Self.page)
        }
    }

    @Test("an unknown CA fails with untrustedCertificate")
    func untrusted() async throws {
        try await withServer({ $0.selfSigned }) { nginx, certificates, leaks in
            for roots: TLSOptions.TrustRoots in [.system, .pem(certificates.caPEM)] {
                let transport = leaks.native(.init(tls: TLSOptions(trustRoots: roots)))
                defer { transport.shutdown() }
                let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, nginx.url("/page.txt")) }
                #expect(error == .untrustedCertificate, "\(String(describing: error))")
                #expect(error?.isCertificateFailure == true)
            }
        }
    }

    @Test("a certificate for another host fails with hostnameMismatch")
    func wrongHost() async throws {
        try await withServer({ $0.wrongHost }) { nginx, certificates, leaks in
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, nginx.url("/page.txt")) }
            #expect(error == .hostnameMismatch, "\(String(describing: error))")
        }
    }

    @Test("an expired certificate fails with expiredCertificate")
    func expired() async throws {
        try await withServer({ $0.expired }) { nginx, certificates, leaks in
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, nginx.url("/page.txt")) }
            #expect(error == .expiredCertificate, "\(String(describing: error))")
        }
    }

    @Test("pins: a matching certificate or key pin passes, any other fails with pinMismatch")
    func pins() async throws {
        try await withServer({ $0.valid }) { nginx, certificates, leaks in
            let roots = TLSOptions.TrustRoots.pem(certificates.caPEM)
            let (keyPin, certificatePin, otherPin) = try await blocking {
                (try certificates.publicKeySHA256(certificates.valid), try certificates.certificateSHA256(certificates.valid),
                 try certificates.publicKeySHA256(certificates.expired))
            }
            for (pins, passes) in [([TLSOptions.Pin.publicKeySHA256(keyPin)], true),
                                   ([.certificateSHA256(certificatePin)], true),
                                   ([.publicKeySHA256(otherPin), .certificateSHA256(certificatePin)], true),
                                   ([.publicKeySHA256(otherPin)], false)] {
                let transport = leaks.native(.init(tls: TLSOptions(trustRoots: roots, pins: pins)))
                defer { transport.shutdown() }
                let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, nginx.url("/page.txt")) }
                #expect(error == (passes ? nil : .pinMismatch), "\(pins): \(String(describing: error))")
            }
        }
    }

    @Test("an unusable trust bundle fails every https request with tlsFailed")
    func badBundle() async throws {
        await withLeakCheck { leaks in
            leaks.watch(port: 1)
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(Data("not a certificate".utf8)))))
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, URL(string: "https://127.0.0.1:1/")!)
            }
            #expect(error == .tlsFailed)
        }
    }

    @Test("a plain-HTTP server behind an https URL fails with tlsFailed")
    func notTLS() async throws {
        let nginx = try await Nginx.start(files: ["page.txt": Self.page])
        defer { nginx.stop() }
        await withLeakCheck { leaks in
            leaks.watch(port: nginx.port)
            let transport = leaks.native()
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, URL(string: "https://127.0.0.1:\(nginx.port)/page.txt")!)
            }
            #expect(error == .tlsFailed, "\(String(describing: error))")
        }
    }
}

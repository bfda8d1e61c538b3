import Courier
import CourierTestSupport
import Foundation
import Testing

/// An address override over `https`: the connection goes to the overridden address, but SNI
/// and the certificate's host name check use the URL's host.
@Suite("Native transport: address overrides over TLS", .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable,
                                                                  "nginx and openssl are needed for the TLS tests"))
struct NativeTransportOverrideTLSTests {
    @Test("a certificate for the URL's host verifies through an overridden address; one for another host does not")
    func verifiesTheURLHost() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        // The server's certificate names other.example only, never 127.0.0.1.
        let nginx = try await Nginx.start(files: ["page.txt": Data("pinned".utf8)],
                                          tls: (certificates.wrongHost.certificate, certificates.wrongHost.key))
        defer { nginx.stop() }
        try await withLeakCheck { leaks throws in
            leaks.watch(port: nginx.port)
            var configuration = NativeTransport.Configuration(tls: TLSOptions(trustRoots: .pem(certificates.caPEM)))
            configuration.addressOverrides = [
                try .init(host: "other.example", port: nginx.port, addresses: ["[::1]:1", "127.0.0.1"]),
                try .init(host: "localhost", port: nginx.port, addresses: ["127.0.0.1"]),
            ]
            let transport = leaks.native(configuration)
            defer { transport.shutdown() }
            let response = try await fetch(transport, URL(string: "https://other.example:\(nginx.port)/page.txt")!)
            #expect(response.text == "pinned")
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, URL(string: "https://localhost:\(nginx.port)/page.txt")!)
            }
            #expect(error == .hostnameMismatch, "\(String(describing: error))")
        }
    }
}

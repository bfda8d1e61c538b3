import Courier
import CourierTestSupport
import Foundation
import Testing

/// A server whose certificate fails the client's pins, or its host name when the chain is not
/// verified, never receives the client's certificate: the client refuses the server's
/// certificate as it arrives, before it sends its own (under TLS 1.2 it sends it before the
/// server's Finished, under TLS 1.3 before its own handshake ends). The origin
/// (``TLSConversationOrigin``) requires a client certificate signed by the test CA and counts
/// the handshakes that completed with one.
@Suite("TLS: no client certificate for a server that fails the pins or the name",
       .enabled(if: TestCertificates.isAvailable, "openssl is needed for the TLS tests"))
struct TLSPinBeforeClientCertificateTests {
    @Test("a pin mismatch, or a name mismatch with the chain unverified, ends the handshake before the client certificate is sent",
          arguments: [false, true])
    func refusedBeforeTheClientCertificate(maximumTLS12: Bool) async throws {
        let certificates = try await TLSConversationCertificates.make()
        defer { certificates.remove() }
        let origin = try TLSConversationOrigin(certificates: certificates)
        defer { origin.stop() }
        try origin.reconfigure(requiresClientCertificate: true, maximumTLS12: maximumTLS12)
        origin.present(.alphaOnly)
        let identity = try TLSOptions.ClientIdentity(certificateChainFile: certificates.clientA.certificate,
                                                     privateKeyFile: certificates.clientA.key)
        let cases: [(options: TLSOptions, host: String, expected: HTTPConnectionError?)] = [
            (TLSOptions(trustRoots: .pem(certificates.caPEM), pins: [.publicKeySHA256(certificates.unusedKeyPin)],
                        clientIdentity: identity), "alpha.test", .pinMismatch),
            (TLSOptions(trustRoots: .pem(certificates.caPEM), pins: [.publicKeySHA256(certificates.firstKeyPin)],
                        verifiesCertificateChain: false, clientIdentity: identity), "beta.test", .hostnameMismatch),
            // The control: it passes, and its certificate is the one the server receives.
            (TLSOptions(trustRoots: .pem(certificates.caPEM), pins: [.publicKeySHA256(certificates.firstKeyPin)],
                        clientIdentity: identity), "alpha.test", nil),
        ]
        try await withLeakCheck { leaks in
            for (options, host, expected) in cases {
                var configuration = NativeTransport.Configuration(tls: options)
                configuration.proxy = .none
                configuration.addressOverrides = [try .init(host: host, port: origin.port, addresses: ["127.0.0.1"])]
                let transport = leaks.native(configuration)
                let url = URL(string: "https://\(host):\(origin.port)/close")!
                let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, url) }
                transport.shutdown()
                #expect(error == expected, "\(host): expected \(String(describing: expected)), got \(String(describing: error))")
            }
        }
        // Every connection's server side has finished (bounded wait), so the count is final.
        for _ in 0..<2_000 where origin.liveConnections > 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(origin.liveConnections == 0)
        #expect(origin.clientCertificatesReceived == 1, "only the passing client's handshake may carry its certificate")
    }
}

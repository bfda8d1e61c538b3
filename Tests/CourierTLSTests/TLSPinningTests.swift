import CourierTestServer
import CourierTLS
import Foundation
import Testing

extension SerialTLSTests {

/// Certificate and public-key pins on the leaf certificate, against `openssl s_server`.
@Suite("TLS certificate pinning", .ownThread, .enabled(if: OpenSSLTool.isAvailable, OpenSSLTool.missingReason))
struct TLSPinningTests {
    @Test("a matching certificate pin or public-key pin passes; pins are computed by the openssl tool")
    func matchingPinsPass() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        let certificatePin = try pki.certificateSHA256(leaf)
        let publicKeyPin = try pki.publicKeySHA256(leaf)
        #expect(certificatePin.count == 32)
        #expect(publicKeyPin.count == 32)
        try withServer(leaf) { server throws in
            var configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM))
            configuration.pins = [.certificateSHA256(certificatePin)]
            #expect(try connect(to: server, configuration: configuration).session.isHandshakeComplete)
            configuration.pins = [.publicKeySHA256(publicKeyPin)]
            #expect(try connect(to: server, configuration: configuration).session.isHandshakeComplete)
            // Any match passes.
            configuration.pins = [.certificateSHA256(Data(repeating: 1, count: 32)), .publicKeySHA256(publicKeyPin)]
            #expect(try connect(to: server, configuration: configuration).session.isHandshakeComplete)
        }
    }

    @Test("pins that match nothing fail with pinMismatch, even for a trusted chain")
    func mismatchingPinsFail() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        let other = try pki.issue("other", subjectAltName: "DNS:localhost")
        let otherCertificatePin = try pki.certificateSHA256(other)
        let otherKeyPin = try pki.publicKeySHA256(other)
        let leafCertificatePin = try pki.certificateSHA256(leaf)
        try withServer(leaf) { server throws in
            var configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM))
            // A certificate pin is not a public-key pin: the kinds are not interchangeable.
            configuration.pins = [.certificateSHA256(otherCertificatePin), .publicKeySHA256(otherKeyPin),
                                  .publicKeySHA256(leafCertificatePin)]
            let error = #expect(throws: TLSError.pinMismatch) {
                try connect(to: server, configuration: configuration)
            }
            #expect(error?.isCertificateError == true)
            #expect(error?.description.contains("3 configured pin(s)") == true)
        }
    }

    @Test("a pinned self-signed server is accepted with chain verification off")
    func pinnedSelfSigned() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.selfSigned("device", subjectAltName: "IP:127.0.0.1")
        let pin = try pki.publicKeySHA256(leaf)
        try withServer(leaf) { server throws in
            var configuration = TLSConfiguration(verifyCertificate: false, pins: [.publicKeySHA256(pin)])
            #expect(try connect(to: server, configuration: configuration, serverName: "127.0.0.1")
                .session.isHandshakeComplete)
            configuration.pins = [.publicKeySHA256(Data(Digest.sha256(Array("wrong".utf8))))]
            #expect(throws: TLSError.pinMismatch) {
                try connect(to: server, configuration: configuration, serverName: "127.0.0.1")
            }
        }
    }

    @Test("I5 a pin whose digest is not 32 bytes fails with invalidConfiguration before any connection")
    func pinLength() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        let good = try pki.publicKeySHA256(leaf)
        for digest in [Data(), good.dropLast(), good + Data([0]), Data(Array("sha256/base64text".utf8))] {
            for pin in [TLSConfiguration.CertificatePin.certificateSHA256(digest), .publicKeySHA256(digest)] {
                // Next to a good pin too: a pin that can never match is a mistake, not a fallback.
                let configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM), pins: [.publicKeySHA256(good), pin])
                let error = #expect(throws: TLSError.invalidConfiguration, "\(digest.count) bytes") {
                    try TLSContext(configuration: configuration)
                }
                #expect(error?.description.contains("got \(digest.count) bytes") == true)
            }
        }
        #expect(throws: Never.self) {
            try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM), pins: [.certificateSHA256(good)]))
        }
    }

    @Test("a session that failed its pin check stays failed")
    func failureIsSticky() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf) { server throws in
            var configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM))
            configuration.pins = [.certificateSHA256(Data(repeating: 0, count: 32))]
            let context = try TLSContext(configuration: configuration)
            let client = try TLSTestClient(port: server.port, context: context, serverName: "localhost")
            #expect(throws: TLSError.pinMismatch) { try client.handshake() }
            #expect(!client.session.isHandshakeComplete)
            #expect(throws: TLSError.pinMismatch) { try client.session.handshake() }
            #expect(throws: TLSError.pinMismatch) { try client.session.writePlaintext(Array("GET".utf8)) }
            var buffer: [UInt8] = []
            #expect(throws: TLSError.pinMismatch) { try client.session.readPlaintext(into: &buffer) }
            #expect(client.session.negotiatedVersion == nil)
        }
    }
}
}

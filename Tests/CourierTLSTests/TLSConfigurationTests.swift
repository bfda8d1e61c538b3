import CourierTestServer
import CourierTLS
import Foundation
import Testing

extension SerialTLSTests {

/// Building contexts and sessions from good and bad configurations (no network).
@Suite("TLS configuration", .ownThread)
struct TLSConfigurationTests {
    @Test("the defaults are the safe ones")
    func defaults() {
        let configuration = TLSConfiguration()
        #expect(configuration.trustRoots == .system)
        #expect(configuration.minimumVersion == .tls1_2)
        #expect(configuration.verifyCertificate)
        #expect(configuration.verifyHostname)
        #expect(configuration.pins.isEmpty)
        #expect(configuration.applicationProtocols == ["http/1.1"])
    }

    @Test("I1 chain verification off is refused without pins unless the host name check is off too (curl -k)")
    func chainVerificationOff() throws {
        let unpinned = TLSConfiguration(verifyCertificate: false)
        let error = #expect(throws: TLSError.invalidConfiguration) { try TLSContext(configuration: unpinned) }
        #expect(error?.description.contains("no pins") == true)
        #expect(throws: TLSError.invalidConfiguration) { try unpinned.validate() }
        // The two honest combinations: pinned, or knowingly insecure.
        let pinned = TLSConfiguration(verifyCertificate: false, pins: [.publicKeySHA256(Data(count: 32))])
        #expect(try TLSContext(configuration: pinned).configuration == pinned)
        let insecure = TLSConfiguration(verifyCertificate: false, verifyHostname: false)
        #expect(try TLSContext(configuration: insecure).configuration == insecure)
        // Host name verification alone off, with a verified chain, stays allowed.
        #expect(throws: Never.self) { try TLSConfiguration(verifyHostname: false).validate() }
    }

    @Test("a context with the system trust store builds and keeps its configuration")
    func systemContext() throws {
        let configuration = TLSConfiguration(applicationProtocols: ["h2", "http/1.1"])
        let context = try TLSContext(configuration: configuration)
        #expect(context.configuration == configuration)
        // Many sessions from one shared context.
        for name in ["example.com", "127.0.0.1", "::1", "[::1]", "example.com."] {
            let session = try TLSClientSession(context: context, serverName: name)
            #expect(try session.handshake() == .wantsMoreInput)
        }
    }

    @Test("bad PEM trust bundles fail with invalidConfiguration", arguments: [
        ("empty", ""),
        ("garbage", "this is not a certificate"),
        ("private key only", "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n"),
        ("broken base64", "-----BEGIN CERTIFICATE-----\n!!!!not*base64!!!!\n-----END CERTIFICATE-----\n"),
        ("truncated DER", "-----BEGIN CERTIFICATE-----\nMIIBfTCCASOgAwIBAgIUOlOV8E7z\n-----END CERTIFICATE-----\n"),
        ("missing end line", "-----BEGIN CERTIFICATE-----\nMIIBfTCCASOgAwIBAgIUOlOV8E7z2sA5\n"),
    ])
    func badPEM(label: String, pem: String) {
        for roots in [TLSConfiguration.TrustRoots.pem(Data(pem.utf8)), .systemPlus(pem: Data(pem.utf8))] {
            let error = #expect(throws: TLSError.invalidConfiguration, "\(label)") {
                try TLSContext(configuration: TLSConfiguration(trustRoots: roots))
            }
            #expect(error?.description.hasPrefix("Invalid TLS configuration: ") == true)
        }
    }

    @Test("a damaged certificate after a good one still fails the whole bundle",
          .enabled(if: OpenSSLTool.isAvailable, OpenSSLTool.missingReason))
    func damagedSecondCertificate() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let good = try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM + pki.caPEM)))
        #expect(good.configuration.trustRoots == .pem(pki.caPEM + pki.caPEM))
        let damaged = pki.caPEM + Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8)
        #expect(throws: TLSError.invalidConfiguration) {
            try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(damaged)))
        }
    }

    @Test("invalid ALPN protocol names fail with invalidConfiguration")
    func badALPN() throws {
        #expect(throws: TLSError.invalidConfiguration) {
            try TLSContext(configuration: TLSConfiguration(applicationProtocols: ["http/1.1", ""]))
        }
        #expect(throws: TLSError.invalidConfiguration) {
            try TLSContext(configuration: TLSConfiguration(applicationProtocols: [String(repeating: "a", count: 256)]))
        }
        // No ALPN at all is fine.
        _ = try TLSContext(configuration: TLSConfiguration(applicationProtocols: []))
    }

    @Test("empty or malformed server names fail with invalidConfiguration")
    func badServerNames() throws {
        let context = try TLSContext(configuration: TLSConfiguration())
        for name in ["", ".", "[]", "a..b", ".example.com", "example.com..", "bad\0name", String(repeating: "a", count: 256)] {
            #expect(throws: TLSError.invalidConfiguration, "\(name.debugDescription)") {
                try TLSClientSession(context: context, serverName: name)
            }
        }
    }

    @Test("errors compare by kind and describe themselves")
    func errorVocabulary() {
        #expect(TLSError.expiredCertificate == .expiredCertificate)
        #expect(TLSError.expiredCertificate != .untrustedCertificate)
        #expect(TLSError.hostnameMismatch.description == "TLS certificate does not match the server name")
        #expect(TLSError.pinMismatch.isCertificateError)
        #expect(!TLSError.handshakeFailed.isCertificateError)
        #expect(!TLSError.uncleanShutdown.isCertificateError)
        #expect(TLSError.protocolVersionUnsupported.detail.isEmpty)
        #expect(TLSError.invalidState.verifyResult == nil)
    }
}
}

import CourierTestServer
import CourierTLS
import Foundation
import Testing

extension SerialTLSTests {

/// Protocol version negotiation and the TLS 1.2 minimum, against `openssl s_server`.
@Suite("TLS protocol versions", .ownThread, .enabled(if: OpenSSLTool.isAvailable, OpenSSLTool.missingReason))
struct TLSVersionTests {
    @Test("a TLS 1.2-only server is accepted by default and reported as TLS 1.2")
    func tls12ServerAccepted() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf, arguments: ["-tls1_2", "-alpn", "http/1.1"]) { server throws in
            let client = try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            #expect(client.session.protocolVersion == "TLSv1.2")
            #expect(client.session.negotiatedVersion == .tls1_2)
            #expect(client.session.negotiatedProtocol == "http/1.1")
            try client.send("GET / HTTP/1.0\r\n\r\n")
            let text = String(decoding: try client.receiveAll().bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.0 200 ok\r\n"))
        }
    }

    @Test("a TLS 1.1-only server is refused with protocolVersionUnsupported")
    func tls11ServerRefused() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        // OpenSSL 3 allows TLS 1.1 only at security level 0, so the server lowers it.
        try withServer(leaf, arguments: ["-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"]) { server throws in
            let error = #expect(throws: TLSError.protocolVersionUnsupported) {
                try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            }
            #expect(error?.isCertificateError == false)
            #expect(error?.description.contains("TLSv1.2") == true)
        }
    }

    @Test("minimumVersion .tls1_3 refuses a TLS 1.2-only server")
    func minimumTLS13() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf, arguments: ["-tls1_2"]) { server throws in
            let configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM), minimumVersion: .tls1_3)
            #expect(throws: TLSError.protocolVersionUnsupported) {
                try connect(to: server, configuration: configuration)
            }
        }
    }

    @Test("no ALPN is reported when the server does not select one")
    func noALPN() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf, arguments: []) { server throws in
            let client = try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            #expect(client.session.negotiatedProtocol == nil)
            #expect(client.session.negotiatedVersion == .tls1_3)
        }
    }

    @Test("versions are ordered and spelled like OpenSSL")
    func versionVocabulary() {
        #expect(TLSVersion.tls1_2 < .tls1_3)
        #expect(TLSVersion.tls1_2.description == "TLSv1.2")
        #expect(TLSVersion.tls1_3.description == "TLSv1.3")
    }
}
}

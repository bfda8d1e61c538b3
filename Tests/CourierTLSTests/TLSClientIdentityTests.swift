import CourierTLS
import CourierTestSupport
import Foundation
import Testing

extension SerialTLSTests {

/// Client certificates (mutual TLS) against `openssl s_server -Verify 1 -verify_return_error`,
/// which requires a client certificate signed by its `-CAfile`, and the identity's own checks.
@Suite("TLS client certificates against openssl s_server -Verify", .ownThread,
       .enabled(if: OpenSSLTool.isAvailable, OpenSSLTool.missingReason))
struct TLSClientIdentityTests {
    /// A CA, a server certificate, a client certificate from the CA and one from nobody.
    struct Material {
        let pki: TestPKI
        let server: TestPKI.Leaf
        let client: TestPKI.Leaf
        let stranger: TestPKI.Leaf

        static func make() throws -> Material {
            let pki = try TestPKI.make()
            do {
                return Material(pki: pki,
                                server: try pki.issue("localhost", subjectAltName: "DNS:localhost, IP:127.0.0.1"),
                                client: try pki.issue("courier-client", subjectAltName: nil, usage: "clientAuth"),
                                stranger: try pki.selfSigned("stranger", subjectAltName: "DNS:stranger.example"))
            } catch {
                pki.remove()
                throw error
            }
        }

        /// s_server options that require a client certificate issued by the test CA.
        var requiring: [String] {
            ["-CAfile", pki.directory.appendingPathComponent("ca.pem").path, "-Verify", "1", "-verify_return_error"]
        }

        func identity(_ leaf: TestPKI.Leaf, keyPath: String? = nil, passphrase: String? = nil) throws -> TLSClientIdentity {
            try TLSClientIdentity(certificateChainFile: leaf.certificatePath, privateKeyFile: keyPath ?? leaf.keyPath,
                                  passphrase: passphrase)
        }

        func configuration(_ identity: TLSClientIdentity?) -> TLSConfiguration {
            TLSConfiguration(trustRoots: .pem(pki.caPEM), clientIdentity: identity)
        }
    }

    /// Connects and reads until the server ends the connection, without sending anything: a
    /// server that refuses the client's certificate says so with an alert.
    private func connectAndListen(_ server: OpenSSLServerProcess, _ configuration: TLSConfiguration) throws {
        let client = try connect(to: server, configuration: configuration)
        _ = try client.receiveAll()
    }

    /// Connects, sends `GET /` and reads the whole answer; returns s_server's status page.
    private func fetchPage(_ server: OpenSSLServerProcess, _ configuration: TLSConfiguration) throws -> String {
        let client = try connect(to: server, configuration: configuration)
        try client.send("GET / HTTP/1.0\r\n\r\n")
        return String(decoding: try client.receiveAll().bytes, as: UTF8.self)
    }

    @Test("a client certificate from the CA the server trusts is accepted, over TLS 1.3 and TLS 1.2",
          arguments: [[], ["-tls1_2"]])
    func accepted(_ version: [String]) throws {
        let material = try Material.make()
        defer { material.pki.remove() }
        try withServer(material.server, arguments: material.requiring + version) { server throws in
            let page = try fetchPage(server, material.configuration(material.identity(material.client)))
            #expect(page.hasPrefix("HTTP/1.0 200 ok\r\n"))
            // s_server's page prints the certificate the client presented.
            #expect(page.contains("Client certificate"))
            #expect(page.contains("Subject: CN = courier-client") || page.contains("Subject: CN=courier-client"))
        }
    }

    @Test("no client certificate: clientCertificateRequired, over TLS 1.3 (after the handshake) and TLS 1.2 (in it)",
          arguments: [[], ["-tls1_2"]])
    func required(_ version: [String]) throws {
        let material = try Material.make()
        defer { material.pki.remove() }
        try withServer(material.server, arguments: material.requiring + version) { server throws in
            _ = #expect(throws: TLSError.clientCertificateRequired) {
                try connectAndListen(server, material.configuration(nil))
            }
        }
    }

    @Test("a client certificate the server does not trust: clientCertificateRejected, over TLS 1.3 and TLS 1.2",
          arguments: [[], ["-tls1_2"]])
    func rejected(_ version: [String]) throws {
        let material = try Material.make()
        defer { material.pki.remove() }
        try withServer(material.server, arguments: material.requiring + version) { server throws in
            let error = #expect(throws: TLSError.clientCertificateRejected) {
                try connectAndListen(server, material.configuration(material.identity(material.stranger)))
            }
            #expect(error?.detail.contains("unknown CA") == true || error?.detail.contains("unknown ca") == true)
        }
    }

    @Test("an identity is harmless with a server that asks for no certificate")
    func notAsked() throws {
        let material = try Material.make()
        defer { material.pki.remove() }
        try withServer(material.server) { server throws in
            let page = try fetchPage(server, material.configuration(material.identity(material.client)))
            #expect(page.hasPrefix("HTTP/1.0 200 ok\r\n"))
            #expect(!page.contains("Client certificate"))
        }
    }

    @Test("the key of another certificate: clientKeyMismatch from validate() and from the context")
    func keyMismatch() throws {
        let material = try Material.make()
        defer { material.pki.remove() }
        let identity = try material.identity(material.client, keyPath: material.stranger.keyPath)
        #expect(throws: TLSError.clientKeyMismatch) { try identity.validate() }
        #expect(throws: TLSError.clientKeyMismatch) { _ = try TLSContext(configuration: material.configuration(identity)) }
    }

    @Test("an encrypted key: the right passphrase works, a wrong or missing one is clientKeyPassphraseIncorrect")
    func passphrase() throws {
        let material = try Material.make()
        defer { material.pki.remove() }
        let encrypted = try material.pki.encryptedKey(material.client, passphrase: "correct horse")
        try withServer(material.server, arguments: material.requiring) { server throws in
            let page = try fetchPage(server, material.configuration(
                material.identity(material.client, keyPath: encrypted, passphrase: "correct horse")))
            #expect(page.contains("Client certificate"))
        }
        let wrong = try material.identity(material.client, keyPath: encrypted, passphrase: "battery staple")
        let error = #expect(throws: TLSError.clientKeyPassphraseIncorrect) { try wrong.validate() }
        #expect(error?.description.contains("battery") == false)
        #expect(throws: TLSError.clientKeyPassphraseIncorrect) { _ = try TLSContext(configuration: material.configuration(wrong)) }
        let missing = try material.identity(material.client, keyPath: encrypted)
        #expect(throws: TLSError.clientKeyPassphraseIncorrect) { try missing.validate() }
    }

    @Test("unreadable PEM and missing files are invalidConfiguration")
    func unreadable() throws {
        let material = try Material.make()
        defer { material.pki.remove() }
        let key = try Data(contentsOf: URL(fileURLWithPath: material.client.keyPath))
        let certificate = try Data(contentsOf: URL(fileURLWithPath: material.client.certificatePath))
        #expect(throws: TLSError.invalidConfiguration) {
            try TLSClientIdentity(certificateChainPEM: Data("not a certificate".utf8), privateKeyPEM: key).validate()
        }
        #expect(throws: TLSError.invalidConfiguration) {
            try TLSClientIdentity(certificateChainPEM: certificate, privateKeyPEM: Data("not a key".utf8)).validate()
        }
        #expect(throws: TLSError.invalidConfiguration) {
            _ = try TLSClientIdentity(certificateChainFile: "/nonexistent/client.pem", privateKeyFile: material.client.keyPath)
        }
    }

    @Test("an identity never prints its key or passphrase")
    func redacted() throws {
        let material = try Material.make()
        defer { material.pki.remove() }
        let identity = try material.identity(material.client, passphrase: "secret-passphrase")
        let keyText = String(decoding: identity.privateKeyPEM, as: UTF8.self)
        let keyLine = try #require(keyText.split(separator: "\n").dropFirst().first)
        var dumped = ""
        dump(identity, to: &dumped)
        for text in [identity.description, identity.debugDescription, String(describing: identity),
                     String(reflecting: identity), dumped, "\(TLSConfiguration(clientIdentity: identity))"] {
            #expect(!text.contains("secret-passphrase"))
            #expect(!text.contains(String(keyLine)))
            #expect(!text.contains("PRIVATE KEY"))
        }
    }
}

}

import Courier
import CourierTestSupport
import Foundation
import Testing

/// Client certificates (mutual TLS) through the native transport: against nginx with
/// `ssl_verify_client on` (which finishes every handshake and answers a missing or untrusted
/// certificate with a `400`), and against `openssl s_server -Verify 1 -verify_return_error`
/// (which ends the TLS connection with an alert).
@Suite("Native transport: client certificates (mTLS)", .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable,
                                                                "nginx and openssl are needed for the mTLS tests"))
struct NativeTransportClientCertificateTests {
    /// What nginx answers on `/who`: its verdict on the client certificate, the certificate's
    /// subject, and whether the session was resumed.
    static let location = #"location = /who { return 200 "$ssl_client_verify $ssl_client_s_dn $ssl_session_reused"; }"#

    /// Runs `body` against nginx requiring a client certificate from the test CA.
    private func withNginx(keepAlive: Bool = false,
                           _ body: (Nginx, TestCertificates, TestCertificates.Clients, LeakCheck) async throws -> Void) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let clients = try await certificates.makeClients()
        let server = "ssl_client_certificate \(certificates.caPath); ssl_verify_client on;\n" + Self.location
        let nginx = try await Nginx.start(server: server, http: keepAlive ? "" : "keepalive_timeout 0;",
                                          tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: nginx.port)
            try await body(nginx, certificates, clients, leaks)
        }
    }

    private func options(_ certificates: TestCertificates, _ identity: TLSOptions.ClientIdentity?) -> TLSOptions {
        TLSOptions(trustRoots: .pem(certificates.caPEM), clientIdentity: identity)
    }

    private func identity(_ pair: TestCertificates.Pair) throws -> TLSOptions.ClientIdentity {
        try TLSOptions.ClientIdentity(certificateChainFile: pair.certificate, privateKeyFile: pair.key)
    }

    @Test("nginx verifies the client certificate, on the first connection and on resumed ones")
    func nginxAccepts() async throws {
        try await withNginx { nginx, certificates, clients, leaks in
            let transport = leaks.native(.init(tls: options(certificates, try identity(clients.a))))
            defer { transport.shutdown() }
            var answers: [String] = []
            for _ in 0..<3 {
                let response = try await fetch(transport, nginx.url("/who"))
                #expect(response.status.code == 200)
                answers.append(response.text ?? "")
            }
            #expect(answers == ["SUCCESS CN=client-a .", "SUCCESS CN=client-a r", "SUCCESS CN=client-a r"])
        }
    }

    @Test("the key can be PEM data, encrypted with a passphrase")
    func nginxEncryptedKeyFromData() async throws {
        try await withNginx { nginx, certificates, clients, leaks in
            let chain = try Data(contentsOf: URL(fileURLWithPath: clients.a.certificate))
            let key = try Data(contentsOf: URL(fileURLWithPath: clients.encryptedKeyA))
            let identity = try TLSOptions.ClientIdentity(certificateChainPEM: chain, privateKeyPEM: key,
                                                         passphrase: clients.passphrase)
            let transport = leaks.native(.init(tls: options(certificates, identity)))
            defer { transport.shutdown() }
            #expect(try await fetch(transport, nginx.url("/who")).text == "SUCCESS CN=client-a .")
        }
    }

    @Test("nginx answers a request without a client certificate with its 400")
    func nginxWithoutCertificate() async throws {
        try await withNginx { nginx, certificates, _, leaks in
            let transport = leaks.native(.init(tls: options(certificates, nil)))
            defer { transport.shutdown() }
            let response = try await fetch(transport, nginx.url("/who"))
            #expect(response.status.code == 400)
            #expect(response.text?.contains("No required SSL certificate was sent") == true)
        }
    }

    @Test("nginx answers a certificate from an unknown issuer with its 400")
    func nginxUntrustedCertificate() async throws {
        try await withNginx { nginx, certificates, clients, leaks in
            let transport = leaks.native(.init(tls: options(certificates, try identity(clients.stranger))))
            defer { transport.shutdown() }
            let response = try await fetch(transport, nginx.url("/who"))
            #expect(response.status.code == 400)
            #expect(response.text?.contains("The SSL certificate error") == true)
        }
    }

    @Test("two identities never share a pooled connection or a TLS session")
    func identitiesArePartitioned() async throws {
        try await withNginx(keepAlive: true) { nginx, certificates, clients, leaks in
            let a = leaks.native(.init(tls: options(certificates, try identity(clients.a))))
            defer { a.shutdown() }
            let b = leaks.native(.init(tls: options(certificates, try identity(clients.b))))
            defer { b.shutdown() }
            for _ in 0..<3 {
                async let first = fetch(a, nginx.url("/who"))
                async let second = fetch(b, nginx.url("/who"))
                let (answerA, answerB) = try await (first.text ?? "", second.text ?? "")
                #expect(answerA.hasPrefix("SUCCESS CN=client-a "))
                #expect(answerB.hasPrefix("SUCCESS CN=client-b "))
            }
        }
    }

    @Test("s_server -Verify: no certificate is clientCertificateRequired, an unknown one clientCertificateRejected")
    func sServerAlerts() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let clients = try await certificates.makeClients()
        let server = try await OpenSSLServerProcess.start(
            certificate: certificates.valid.certificate, key: certificates.valid.key,
            arguments: ["-CAfile", certificates.caPath, "-Verify", "1", "-verify_return_error"])
        defer { server.stop() }
        try await withLeakCheck { leaks in
            let accepted = leaks.native(.init(tls: options(certificates, try identity(clients.a))))
            defer { accepted.shutdown() }
            let page = try await fetch(accepted, server.url).text ?? ""
            #expect(page.contains("Client certificate"))

            let none = leaks.native(.init(tls: options(certificates, nil)))
            defer { none.shutdown() }
            await #expect(throws: HTTPConnectionError.clientCertificateRequired) {
                _ = try await fetch(none, server.url)
            }

            let stranger = leaks.native(.init(tls: options(certificates, try identity(clients.stranger))))
            defer { stranger.shutdown() }
            let error = await #expect(throws: HTTPConnectionError.clientCertificateRejected) {
                _ = try await fetch(stranger, server.url)
            }
            #expect(error?.isCertificateFailure == true)
        }
    }

    @Test("a key that is not the certificate's, or a wrong passphrase, fails when the identity is made")
    func identityErrors() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let clients = try await certificates.makeClients()
        #expect(throws: HTTPConnectionError.clientKeyMismatch) {
            _ = try TLSOptions.ClientIdentity(certificateChainFile: clients.a.certificate, privateKeyFile: clients.b.key)
        }
        let error = #expect(throws: HTTPConnectionError.clientKeyPassphraseIncorrect) {
            _ = try TLSOptions.ClientIdentity(certificateChainFile: clients.a.certificate,
                                              privateKeyFile: clients.encryptedKeyA, passphrase: "not it")
        }
        #expect(error.map { "\($0)".contains("not it") } == false)
        #expect(throws: HTTPConnectionError.clientKeyPassphraseIncorrect) {
            _ = try TLSOptions.ClientIdentity(certificateChainFile: clients.a.certificate, privateKeyFile: clients.encryptedKeyA)
        }
        #expect(throws: HTTPConnectionError.tlsFailed) {
            _ = try TLSOptions.ClientIdentity(certificateChainFile: "/nonexistent/client.pem", privateKeyFile: clients.a.key)
        }
    }

    @Test("an identity and TLS options never print the key or the passphrase")
    func redacted() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let clients = try await certificates.makeClients()
        let identity = try TLSOptions.ClientIdentity(certificateChainFile: clients.a.certificate,
                                                     privateKeyFile: clients.encryptedKeyA, passphrase: clients.passphrase)
        let key = try String(contentsOfFile: clients.encryptedKeyA, encoding: .utf8)
        let keyLine = try #require(key.split(separator: "\n").dropFirst().first)
        var dumped = ""
        dump(TLSOptions(clientIdentity: identity), to: &dumped)
        for text in ["\(identity)", String(reflecting: identity), "\(TLSOptions(clientIdentity: identity))", dumped] {
            #expect(!text.contains(clients.passphrase))
            #expect(!text.contains(String(keyLine)))
            #expect(!text.contains("PRIVATE KEY"))
        }
    }
}

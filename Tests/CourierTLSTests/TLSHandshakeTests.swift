import CourierTestServer
import CourierTLS
import Foundation
import Testing

extension SerialTLSTests {

/// Handshakes and certificate verification against `openssl s_server` over real loopback sockets.
@Suite("TLS handshakes against openssl s_server", .ownThread, .enabled(if: OpenSSLTool.isAvailable, OpenSSLTool.missingReason))
struct TLSHandshakeTests {
    @Test("a chain signed by a custom CA is trusted; ALPN, version and cipher are reported; GET works")
    func trustedChainWithCustomCA() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost, IP:127.0.0.1")
        try withServer(leaf) { server throws in
            let client = try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            #expect(client.session.isHandshakeComplete)
            #expect(client.session.negotiatedProtocol == "http/1.1")
            #expect(client.session.protocolVersion == "TLSv1.3")
            #expect(client.session.negotiatedVersion == .tls1_3)
            // s_server follows the client's order: AES-128-GCM is offered first.
            #expect(client.session.cipherSuite == "TLS_AES_128_GCM_SHA256")
            #expect(try client.session.handshake() == .complete)

            try client.send("GET / HTTP/1.0\r\n\r\n")
            let (bytes, end) = try client.receiveAll()
            // s_server -www ends its answer with close_notify.
            #expect(end == .closeNotify)
            var buffer: [UInt8] = []
            #expect(try client.session.readPlaintext(into: &buffer) == .closed)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.0 200 ok\r\n"))
            // s_server's status page names the protocol and cipher it used.
            #expect(text.contains("TLSv1.3"))
        }
    }

    @Test("a server that accepts only one of the other TLS 1.3 suites still gets it",
          arguments: ["TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"])
    func otherTLS13Suites(_ suite: String) throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf, arguments: ["-tls1_3", "-ciphersuites", suite]) { server throws in
            let client = try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            #expect(client.session.isHandshakeComplete)
            #expect(client.session.cipherSuite == suite)
        }
    }

    @Test("small plaintext reads reassemble the whole response")
    func smallReads() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf) { server throws in
            let client = try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            try client.send("GET / HTTP/1.0\r\n\r\n")
            let text = String(decoding: try client.receiveAll(chunkSize: 7).bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.0 200 ok\r\n"))
            #expect(text.contains("</BODY></HTML>"))
        }
    }

    @Test("plaintext left inside OpenSSL is read out without waiting for the server to send more")
    func plaintextLeftInsideIsReadWithoutMoreInput() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        // `-rev` (which wins over the harness's `-www`) answers each line reversed and keeps the
        // connection open: nothing more comes.
        try withServer(leaf, arguments: ["-rev"]) { server throws in
            let client = try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            let line = String(repeating: "0123456789", count: 30)
            try client.send(line + "\n")
            let expected = Array((String(line.reversed()) + "\n").utf8)
            var received: [UInt8] = []
            // Bounded. A read that asked for more input while the record's rest sat inside
            // OpenSSL would block in receiveIntoSession until its 10-second timeout and throw.
            reading: for _ in 0..<1_000 where received.count < expected.count {
                switch try client.session.readPlaintext(into: &received, maximumCount: 7) {
                case .bytes: continue
                case .wantsMoreInput: try client.receiveIntoSession()
                case .closed:
                    Issue.record("the server closed the connection")
                    break reading
                }
            }
            #expect(received == expected)
        }
    }

    @Test("an IP address is verified against the certificate's IP subjectAltName")
    func ipAddressVerification() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost, IP:127.0.0.1")
        try withServer(leaf) { server throws in
            let configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM))
            #expect(try connect(to: server, configuration: configuration, serverName: "127.0.0.1")
                .session.isHandshakeComplete)
            let error = #expect(throws: TLSError.hostnameMismatch) {
                try connect(to: server, configuration: configuration, serverName: "127.0.0.2")
            }
            #expect(error?.description.contains("IP address mismatch") == true)
        }
    }

    @Test("the system trust store (the default) rejects the test CA as untrusted")
    func systemTrustRejectsTestCA() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf) { server throws in
            let error = #expect(throws: TLSError.untrustedCertificate) {
                try connect(to: server, configuration: TLSConfiguration())
            }
            #expect(error?.isCertificateError == true)
            #expect(error?.verifyResult != nil)
            #expect(error?.description.contains("unable to get local issuer certificate") == true)
        }
    }

    @Test("systemPlus trusts the system store and the extra CA")
    func systemPlusTrustsExtraCA() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf) { server throws in
            let configuration = TLSConfiguration(trustRoots: .systemPlus(pem: pki.caPEM))
            #expect(try connect(to: server, configuration: configuration).session.isHandshakeComplete)
        }
    }

    @Test("a certificate for another host name fails with hostnameMismatch")
    func wrongHostName() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("other", subjectAltName: "DNS:other.test")
        try withServer(leaf) { server throws in
            let configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM))
            let error = #expect(throws: TLSError.hostnameMismatch) {
                try connect(to: server, configuration: configuration, serverName: "localhost")
            }
            #expect(error?.description.contains("hostname mismatch") == true)
            // The name the certificate carries is accepted, with or without a trailing dot.
            #expect(try connect(to: server, configuration: configuration, serverName: "other.test")
                .session.isHandshakeComplete)
            #expect(try connect(to: server, configuration: configuration, serverName: "other.test.")
                .session.isHandshakeComplete)
            // With host name verification off, the chain alone decides.
            var relaxed = configuration
            relaxed.verifyHostname = false
            #expect(try connect(to: server, configuration: relaxed, serverName: "localhost")
                .session.isHandshakeComplete)
        }
    }

    @Test("a wildcard certificate matches one label only")
    func wildcardCertificate() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("wildcard", subjectAltName: "DNS:*.example.test")
        try withServer(leaf) { server throws in
            let configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM))
            #expect(try connect(to: server, configuration: configuration, serverName: "api.example.test")
                .session.isHandshakeComplete)
            #expect(throws: TLSError.hostnameMismatch) {
                try connect(to: server, configuration: configuration, serverName: "a.b.example.test")
            }
        }
    }

    @Test("an expired certificate fails with expiredCertificate")
    func expiredCertificate() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("expired", subjectAltName: "DNS:localhost",
                                 validity: (start: "20200101000000Z", end: "20210101000000Z"))
        try withServer(leaf) { server throws in
            let error = #expect(throws: TLSError.expiredCertificate) {
                try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            }
            #expect(error?.description.contains("certificate has expired") == true)
            #expect(error?.isCertificateError == true)
        }
    }

    @Test("a certificate that is not valid yet fails with notYetValidCertificate")
    func notYetValidCertificate() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("future", subjectAltName: "DNS:localhost",
                                 validity: (start: "20990101000000Z", end: "20991231000000Z"))
        try withServer(leaf) { server throws in
            let error = #expect(throws: TLSError.notYetValidCertificate) {
                try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            }
            #expect(error?.description.contains("not yet valid") == true)
        }
    }

    @Test("a self-signed leaf is untrusted; with verification and host name checks off (curl -k) it is accepted")
    func selfSignedLeaf() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.selfSigned("selfsigned", subjectAltName: "DNS:localhost")
        try withServer(leaf) { server throws in
            let error = #expect(throws: TLSError.untrustedCertificate) {
                try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            }
            #expect(error?.description.contains("self-signed certificate") == true)

            let insecure = TLSConfiguration(trustRoots: .pem(pki.caPEM), verifyCertificate: false, verifyHostname: false)
            #expect(try connect(to: server, configuration: insecure, serverName: "other.test").session.isHandshakeComplete)
        }
    }

    @Test("I2 a certificate that names its host only in the subject CN (no DNS subjectAltName) fails with hostnameMismatch")
    func commonNameOnly() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: nil)  // CN=localhost, no SAN
        try withServer(leaf) { server throws in
            // Checked by OpenSSL during chain verification...
            let error = #expect(throws: TLSError.hostnameMismatch) {
                try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            }
            #expect(error?.verifyResult != nil)
            // ...and by the session itself when a pinned server is not chain-verified.
            let pin = try pki.publicKeySHA256(leaf)
            #expect(throws: TLSError.hostnameMismatch) {
                try connect(to: server, configuration: TLSConfiguration(verifyCertificate: false, pins: [.publicKeySHA256(pin)]))
            }
        }
    }

    @Test("I3 with chain verification off, a handshake that fails for another reason is not reported as a certificate error")
    func verifyResultIgnoredWithoutChainVerification() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.selfSigned("device", subjectAltName: "DNS:localhost")
        // A TLS 1.2 server that demands a client certificate aborts the handshake after the
        // client has recorded the self-signed chain as a (to be ignored) verify failure: the
        // error is about the missing client certificate, not the server's.
        try withServer(leaf, arguments: ["-tls1_2", "-Verify", "1"]) { server throws in
            let insecure = TLSConfiguration(verifyCertificate: false, verifyHostname: false)
            let error = #expect(throws: TLSError.clientCertificateRequired) {
                try connect(to: server, configuration: insecure)
            }
            #expect(error?.isCertificateError == false)
            #expect(error?.verifyResult == nil)
            // The same server with chain verification on still reports the certificate.
            #expect(throws: TLSError.untrustedCertificate) {
                try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            }
        }
    }

    @Test("a server that dies without close_notify yields uncleanShutdown")
    func uncleanShutdown() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf) { server throws in
            let client = try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            server.stop() // SIGKILL: the kernel closes the socket, no alert is sent
            let error = #expect(throws: TLSError.uncleanShutdown) {
                // receiveAll reports uncleanShutdown as `.unclean`; read directly to see the error.
                var buffer: [UInt8] = []
                for _ in 0..<100 {
                    if try client.session.readPlaintext(into: &buffer) == .wantsMoreInput {
                        try client.receiveIntoSession()
                    }
                }
            }
            #expect(error?.isCertificateError == false)
        }
    }

    @Test("close() queues close_notify and forbids further writes")
    func closeQueuesCloseNotify() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf) { server throws in
            let client = try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            #expect(client.session.pendingCiphertextCount == 0)
            client.session.close()
            // close_notify is one encrypted alert record.
            let alert = try #require(client.session.takeCiphertext())
            let recordType: UInt8 = alert.first ?? 0
            #expect(recordType == 0x17) // TLS 1.3 encrypts alerts as application data records
            #expect(throws: TLSError.invalidState) { try client.session.writePlaintext(Array("x".utf8)) }
            client.session.close()
            #expect(client.session.takeCiphertext() == nil)
        }
    }

    @Test("a large write is split into records and fully consumed")
    func largeWrite() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf) { server throws in
            let client = try connect(to: server, configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            try client.session.writePlaintext([UInt8](repeating: 0x41, count: 100_000))
            // 100,000 bytes need 7 records of at most 16 KiB, each with its own overhead.
            let minimumCiphertext = 100_035
            #expect(client.session.pendingCiphertextCount > minimumCiphertext)
            var drained = 0
            var chunk = [UInt8](repeating: 0, count: 4_096)
            for _ in 0..<1_000 {
                let count = chunk.withUnsafeMutableBytes { client.session.takeCiphertext(into: $0) }
                if count == 0 { break }
                #expect(count <= 4_096)
                drained += count
            }
            #expect(drained > 100_000)
            #expect(client.session.pendingCiphertextCount == 0)
        }
    }
}
}

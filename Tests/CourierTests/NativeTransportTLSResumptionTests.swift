import Courier
import CourierTestSupport
import Foundation
import Testing

/// TLS session resumption through the native transport, as nginx sees it: `$ssl_session_reused`
/// is `r` on every connection after the first (TLS 1.3 tickets, TLS 1.2 session ids), and `.`
/// with resumption off. nginx closes every connection after one response
/// (`keepalive_timeout 0`), so every request makes a new connection and a new handshake.
@Suite("Native transport: TLS session resumption", .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable,
                                                           "nginx and openssl are needed for the TLS tests"))
struct NativeTransportTLSResumptionTests {
    /// What nginx answers on `/reused`: whether the connection's session was resumed, and its protocol.
    static let location = #"location = /reused { return 200 "$ssl_session_reused $ssl_protocol"; }"#

    /// Runs `body` against nginx serving the valid test certificate with `server` directives.
    private func withServer(_ server: String,
                            _ body: (Nginx, TestCertificates, LeakCheck) async throws -> Void) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(server: Self.location + "\n" + server, http: "keepalive_timeout 0;",
                                          tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: nginx.port)
            try await body(nginx, certificates, leaks)
        }
    }

    /// nginx's `$ssl_session_reused $ssl_protocol` for `count` requests in a row, each on a new connection.
    private func reuse(_ transport: NativeTransport, _ nginx: Nginx, count: Int) async throws -> [String] {
        var answers: [String] = []
        for _ in 0..<count {
            answers.append(try await fetch(transport, nginx.url("/reused")).text ?? "")
        }
        return answers
    }

    @Test("TLS 1.3: every connection after the first resumes with a ticket")
    func tickets() async throws {
        try await withServer("") { nginx, certificates, leaks in
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            let answers = try await reuse(transport, nginx, count: 4)
            #expect(answers == [". TLSv1.3", "r TLSv1.3", "r TLSv1.3", "r TLSv1.3"])
        }
    }

    @Test("TLS 1.2 without tickets: every connection after the first resumes its session id")
    func sessionIDs() async throws {
        let server = "ssl_session_tickets off; ssl_session_cache builtin:1000; ssl_conf_command MaxProtocol TLSv1.2;"
        try await withServer(server) { nginx, certificates, leaks in
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            let answers = try await reuse(transport, nginx, count: 4)
            #expect(answers == [". TLSv1.2", "r TLSv1.2", "r TLSv1.2", "r TLSv1.2"])
        }
    }

    @Test("resumesSessions off: no connection resumes")
    func off() async throws {
        try await withServer("") { nginx, certificates, leaks in
            let options = TLSOptions(trustRoots: .pem(certificates.caPEM), resumesSessions: false)
            let transport = leaks.native(.init(tls: options))
            defer { transport.shutdown() }
            let answers = try await reuse(transport, nginx, count: 3)
            #expect(answers == Array(repeating: ". TLSv1.3", count: 3))
        }
    }

    @Test("sessions are never shared between transports, so never between trust or pin settings")
    func perConfiguration() async throws {
        try await withServer("") { nginx, certificates, leaks in
            let keyPin = try await blocking { try certificates.publicKeySHA256(certificates.valid) }
            let plain = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { plain.shutdown() }
            #expect(try await reuse(plain, nginx, count: 2) == [". TLSv1.3", "r TLSv1.3"])
            let pinned = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM), pins: [.publicKeySHA256(keyPin)])))
            defer { pinned.shutdown() }
            #expect(try await reuse(pinned, nginx, count: 2) == [". TLSv1.3", "r TLSv1.3"])
        }
    }
}

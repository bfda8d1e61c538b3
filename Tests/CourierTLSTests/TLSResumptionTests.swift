import CourierTLS
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

extension SerialTLSTests {

/// Session resumption against `openssl s_server`: TLS 1.3 tickets and TLS 1.2 session ids are
/// kept per context and peer, offered on the next connection, and never bypass the pins.
@Suite("TLS session resumption", .ownThread, .enabled(if: OpenSSLTool.isAvailable, OpenSSLTool.missingReason))
struct TLSResumptionTests {
    /// Connects with `context`, completes the handshake, and reads the whole `-www` response
    /// (which carries the TLS 1.3 tickets).
    private func exchange(_ server: OpenSSLServerProcess, _ context: TLSContext) throws -> TLSClientSession {
        let client = try TLSTestClient(port: server.port, context: context, serverName: "localhost")
        try client.handshake()
        try client.send("GET / HTTP/1.0\r\n\r\n")
        let (bytes, _) = try client.receiveAll()
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.0 200"))
        return client.session
    }

    @Test("the next connections resume: TLS 1.3 tickets, TLS 1.2 tickets, TLS 1.2 session ids",
          arguments: [["-tls1_3"], ["-tls1_2"], ["-tls1_2", "-no_ticket"]])
    func resumes(_ arguments: [String]) throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf, arguments: arguments) { server throws in
            let context = try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            let first = try exchange(server, context)
            #expect(!first.offeredResumption && !first.isResumed)
            for round in 0..<3 {
                let next = try exchange(server, context)
                #expect(next.offeredResumption, "round \(round) offered no session")
                #expect(next.isResumed, "round \(round) was not resumed (\(arguments))")
                #expect(next.negotiatedVersion == (arguments[0] == "-tls1_3" ? .tls1_3 : .tls1_2))
            }
            // Another context (even with the same settings) has sessions of its own.
            let other = try exchange(server, try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM))))
            #expect(!other.offeredResumption && !other.isResumed)
        }
    }

    @Test("resumesSessions off: no session is kept or offered")
    func off() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf, arguments: ["-tls1_3"]) { server throws in
            let context = try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM), resumesSessions: false))
            for _ in 0..<3 {
                let session = try exchange(server, context)
                #expect(!session.offeredResumption && !session.isResumed)
            }
        }
    }

    @Test("a cached session does not bypass the pins: a new server on the same port whose certificate no longer matches fails with pinMismatch",
          arguments: [["-tls1_3"], ["-tls1_2", "-no_ticket"]])
    func pinsStillChecked(_ arguments: [String]) throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let pinned = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        let replacement = try pki.issue("replacement", subjectAltName: "DNS:localhost")
        var configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM))
        configuration.pins = [.publicKeySHA256(try pki.publicKeySHA256(pinned))]
        let context = try TLSContext(configuration: configuration)
        let first = try OpenSSLServerProcess.start(leaf: pinned, extraArguments: arguments)
        let port = first.port
        do {
            defer { first.stop() }
            _ = try exchange(first, context)
            #expect(try exchange(first, context).isResumed)
        }
        let second = try OpenSSLServerProcess.start(leaf: replacement, extraArguments: arguments, port: port)
        defer { second.stop() }
        let client = try TLSTestClient(port: port, context: context, serverName: "localhost")
        #expect(client.session.offeredResumption)
        #expect(throws: TLSError.pinMismatch) { try client.handshake() }
        // The failed peer's sessions are forgotten: the next connection offers none.
        let again = try TLSTestClient(port: port, context: context, serverName: "localhost")
        #expect(!again.session.offeredResumption)
    }

    @Test("a server that refuses two offered sessions in a row is offered none afterwards")
    func refusedOffersPause() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        let context = try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
        // Every restart of s_server makes new ticket keys, so it cannot resume the tickets that
        // the previous one issued: like a server that issues tickets it never honours.
        var port: Int?
        var offered: [Bool] = []
        var resumed: [Bool] = []
        for _ in 0..<4 {
            let server = try OpenSSLServerProcess.start(leaf: leaf, extraArguments: ["-tls1_3"], port: port)
            defer { server.stop() }
            port = server.port
            let session = try exchange(server, context)
            offered.append(session.offeredResumption)
            resumed.append(session.isResumed)
        }
        #expect(offered == [false, true, true, false])
        #expect(resumed == [false, false, false, false])
    }

    @Test("sessions are kept per host and port: another name for the same server offers none")
    func perPeer() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost, IP:127.0.0.1")
        try withServer(leaf, arguments: ["-tls1_3"]) { server throws in
            let context = try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM)))
            _ = try exchange(server, context)
            let byAddress = try TLSTestClient(port: server.port, context: context, serverName: "127.0.0.1")
            #expect(!byAddress.session.offeredResumption)
            try byAddress.handshake()
            #expect(!byAddress.session.isResumed)
        }
    }
}

}

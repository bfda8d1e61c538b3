import CourierTLS
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

extension SerialTLSTests {

/// The context's verified-chain cache against `openssl s_server`, with session resumption off
/// so that every connection is a full handshake: the same chain for the same name is not
/// verified twice, and the cache never lets through what a verification would refuse.
@Suite("TLS verified chains", .ownThread, .enabled(if: OpenSSLTool.isAvailable, OpenSSLTool.missingReason))
struct TLSVerifiedChainTests {
    private func handshake(_ port: Int, _ context: TLSContext, serverName: String = "localhost") throws -> TLSClientSession {
        let client = try TLSTestClient(port: port, context: context, serverName: serverName)
        try client.handshake()
        return client.session
    }

    @Test("the second full handshake to a server finds its chain verified; another context verifies it again",
          arguments: [["-tls1_3"], ["-tls1_2"]])
    func reused(_ arguments: [String]) throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf, arguments: arguments) { server throws in
            let configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM), resumesSessions: false)
            let context = try TLSContext(configuration: configuration)
            let first = try handshake(server.port, context)
            #expect(!first.reusedVerifiedChain && !first.isResumed)
            for round in 0..<3 {
                let next = try handshake(server.port, context)
                #expect(next.reusedVerifiedChain, "round \(round) verified the chain again")
                #expect(!next.isResumed, "round \(round) resumed a session: not a full handshake")
            }
            #expect(!(try handshake(server.port, try TLSContext(configuration: configuration))).reusedVerifiedChain)
        }
    }

    @Test("a cached chain is not used for a name the certificate does not cover: hostnameMismatch")
    func otherName() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf, arguments: ["-tls1_3"]) { server throws in
            let context = try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM), resumesSessions: false))
            _ = try handshake(server.port, context)
            #expect(try handshake(server.port, context).reusedVerifiedChain)
            for name in ["other.test", "127.0.0.1"] {
                let client = try TLSTestClient(port: server.port, context: context, serverName: name)
                #expect(throws: TLSError.hostnameMismatch, "\(name)") { try client.handshake() }
                #expect(!client.session.reusedVerifiedChain, "\(name)")
            }
        }
    }

    @Test("a chain through an intermediate is found again only with the intermediate: the same leaf sent alone fails with untrustedCertificate")
    func intermediate() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let (leaf, intermediatePath) = try pki.issueThroughIntermediate("localhost", subjectAltName: "DNS:localhost")
        let context = try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM), resumesSessions: false))
        let withChain = try OpenSSLServerProcess.start(leaf: leaf, extraArguments: ["-tls1_3", "-cert_chain", intermediatePath])
        let port = withChain.port
        do {
            defer { withChain.stop() }
            #expect(!(try handshake(port, context)).reusedVerifiedChain)
            #expect(try handshake(port, context).reusedVerifiedChain)
        }
        let leafAlone = try OpenSSLServerProcess.start(leaf: leaf, extraArguments: ["-tls1_3"], port: port)
        defer { leafAlone.stop() }
        let client = try TLSTestClient(port: port, context: context, serverName: "localhost")
        #expect(throws: TLSError.untrustedCertificate) { try client.handshake() }
        #expect(!client.session.reusedVerifiedChain)
    }

    @Test("after a chain is cached, an untrusted server on the same port and name fails with untrustedCertificate")
    func untrustedReplacement() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let trusted = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        let untrusted = try pki.selfSigned("impostor", subjectAltName: "DNS:localhost")
        let context = try TLSContext(configuration: TLSConfiguration(trustRoots: .pem(pki.caPEM), resumesSessions: false))
        let first = try OpenSSLServerProcess.start(leaf: trusted, extraArguments: ["-tls1_3"])
        let port = first.port
        do {
            defer { first.stop() }
            _ = try handshake(port, context)
            #expect(try handshake(port, context).reusedVerifiedChain)
        }
        let second = try OpenSSLServerProcess.start(leaf: untrusted, extraArguments: ["-tls1_3"], port: port)
        defer { second.stop() }
        #expect(throws: TLSError.untrustedCertificate) { try handshake(port, context) }
    }

    @Test("a cached chain does not bypass the pins: a trusted certificate that matches no pin fails with pinMismatch every time",
          arguments: [["-tls1_3"], ["-tls1_2"]])
    func pinsStillChecked(_ arguments: [String]) throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let pinned = try pki.issue("pinned", subjectAltName: "DNS:localhost")
        let served = try pki.issue("localhost", subjectAltName: "DNS:localhost")
        var configuration = TLSConfiguration(trustRoots: .pem(pki.caPEM), resumesSessions: false)
        configuration.pins = [.publicKeySHA256(try pki.publicKeySHA256(pinned))]
        let context = try TLSContext(configuration: configuration)
        try withServer(served, arguments: arguments) { server throws in
            for attempt in 0..<3 {
                let client = try TLSTestClient(port: server.port, context: context, serverName: "localhost")
                #expect(throws: TLSError.pinMismatch, "attempt \(attempt)") { try client.handshake() }
                // The chain verified, so the second attempt on finds it cached, and still fails.
                #expect(client.session.reusedVerifiedChain == (attempt > 0))
            }
        }
    }

    @Test("with chain verification off (a pinned self-signed certificate) nothing is cached, and the host name is still checked")
    func verificationOff() throws {
        let pki = try TestPKI.make()
        defer { pki.remove() }
        let leaf = try pki.selfSigned("localhost", subjectAltName: "DNS:localhost")
        try withServer(leaf, arguments: ["-tls1_3"]) { server throws in
            let pin = try pki.publicKeySHA256(leaf)
            let configuration = TLSConfiguration(verifyCertificate: false, pins: [.publicKeySHA256(pin)], resumesSessions: false)
            let context = try TLSContext(configuration: configuration)
            for _ in 0..<2 {
                #expect(!(try handshake(server.port, context)).reusedVerifiedChain)
            }
            for name in ["other.test", "127.0.0.1"] {
                let client = try TLSTestClient(port: server.port, context: context, serverName: name)
                #expect(throws: TLSError.hostnameMismatch, "\(name)") { try client.handshake() }
                #expect(!client.session.reusedVerifiedChain, "\(name)")
            }
        }
    }
}

}

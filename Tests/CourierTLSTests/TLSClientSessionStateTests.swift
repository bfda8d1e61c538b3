import CourierTLS
import CourierTestServer
import Foundation
import Testing

/// The session's memory-buffer state machine, without a server.
@Suite("TLS client session state", .ownThread)
struct TLSClientSessionStateTests {
    private func makeSession(_ name: String = "example.com") throws -> TLSClientSession {
        try TLSClientSession(context: TLSContext(configuration: TLSConfiguration()), serverName: name)
    }

    @Test("the first handshake step queues a ClientHello carrying SNI for a host name")
    func clientHelloWithSNI() throws {
        let session = try makeSession("sni-check.example.com")
        #expect(session.pendingCiphertextCount == 0)
        #expect(try session.handshake() == .wantsMoreInput)
        #expect(session.pendingCiphertextCount > 0)
        let hello = try #require(session.takeCiphertext())
        #expect(hello.first == 0x16) // a handshake record
        #expect(hello.count > 5 && hello[5] == 0x01) // ClientHello
        #expect(String(decoding: hello, as: UTF8.self).contains("sni-check.example.com"))
        #expect(String(decoding: hello, as: UTF8.self).contains("http/1.1"))
        #expect(session.takeCiphertext() == nil)
        // Without new input, another step produces nothing new.
        #expect(try session.handshake() == .wantsMoreInput)
        #expect(session.takeCiphertext() == nil)
    }

    @Test("no SNI is sent for an IP address literal")
    func noSNIForIPAddress() throws {
        for name in ["192.0.2.77", "[2001:db8::77]"] {
            let session = try makeSession(name)
            _ = try session.handshake()
            let hello = String(decoding: try #require(session.takeCiphertext()), as: UTF8.self)
            #expect(!hello.contains("192.0.2.77") && !hello.contains("2001:db8"))
        }
    }

    @Test("ciphertext can be taken in pieces into a caller buffer")
    func takeIntoCallerBuffer() throws {
        let session = try makeSession()
        _ = try session.handshake()
        let total = session.pendingCiphertextCount
        var pieces: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 10)
        for _ in 0..<10_000 {
            let count = buffer.withUnsafeMutableBytes { session.takeCiphertext(into: $0) }
            if count == 0 { break }
            pieces += buffer[0..<count]
        }
        #expect(pieces.count == total)
        #expect(pieces.first == 0x16)
        #expect(session.takeCiphertext(into: UnsafeMutableRawBufferPointer(start: nil, count: 0)) == 0)
    }

    @Test("a peer that answers with plain HTTP fails the handshake, and the failure sticks")
    func plainHTTPPeer() throws {
        let session = try makeSession()
        _ = try session.handshake()
        _ = session.takeCiphertext()
        session.feedCiphertext(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8))
        let error = #expect(throws: TLSError.handshakeFailed) { try session.handshake() }
        #expect(error?.description.contains("does not speak TLS") == true)
        #expect(throws: TLSError.handshakeFailed) { try session.handshake() }
        session.feedCiphertext([1, 2, 3]) // ignored once failed
        #expect(throws: TLSError.handshakeFailed) { try session.handshake() }
    }

    @Test("end of input during the handshake fails it")
    func endOfInputDuringHandshake() throws {
        let session = try makeSession()
        _ = try session.handshake()
        session.feedEndOfInput()
        let error = #expect(throws: TLSError.handshakeFailed) { try session.handshake() }
        #expect(error?.description.contains("closed the connection during the handshake") == true)
    }

    @Test("a fatal alert from the server fails the handshake")
    func fatalAlert() throws {
        let session = try makeSession()
        _ = try session.handshake()
        // TLS 1.2 record: alert, fatal (2), handshake_failure (40).
        session.feedCiphertext([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 40])
        let error = #expect(throws: TLSError.handshakeFailed) { try session.handshake() }
        #expect(error?.description.contains("handshake failure") == true)
    }

    @Test("reading or writing before the handshake completed is refused")
    func callsBeforeHandshake() throws {
        let session = try makeSession()
        #expect(throws: TLSError.invalidState) { try session.writePlaintext(Array("GET".utf8)) }
        var buffer: [UInt8] = []
        #expect(throws: TLSError.invalidState) { try session.readPlaintext(into: &buffer) }
        #expect(session.negotiatedProtocol == nil)
        #expect(session.protocolVersion == nil)
        #expect(session.negotiatedVersion == nil)
        #expect(session.cipherSuite == nil)
        // close() before the handshake sends nothing and ends the session.
        session.close()
        #expect(session.takeCiphertext() == nil)
        #expect(throws: TLSError.invalidState) { try session.handshake() }
    }

    @Test("random bytes never crash the session", arguments: 0..<20)
    func randomInput(seed: Int) throws {
        var generator = SeededRandom(seed: UInt64(seed))
        let session = try makeSession()
        _ = try session.handshake()
        var bytes = (0..<(1 + Int(generator.next() % 2_000))).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        if seed % 2 == 0 { bytes[0] = 0x16; if bytes.count > 2 { bytes[1] = 3; bytes[2] = 3 } }
        session.feedCiphertext(bytes)
        session.feedEndOfInput()
        #expect(throws: TLSError.self) {
            // Bounded: the input ends, so the handshake must fail.
            for _ in 0..<10 { _ = try session.handshake() }
        }
    }
}


import CourierTestServer
import CourierTLS
import Foundation
import Testing

/// SHA-256 through OpenSSL's EVP interface.
@Suite("Digest", .ownThread)
struct DigestTests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    @Test("SHA-256 matches the FIPS 180-2 test vectors")
    func knownVectors() {
        #expect(hex(Digest.sha256(Array("abc".utf8)))
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(Digest.sha256([UInt8]()))
            == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(Digest.sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("Digest.hex writes two lowercase digits a byte, as an independent formatter does")
    func hexText() {
        #expect(Digest.hex(Digest.sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digest.hex([]) == "")
        #expect(Digest.hex([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
        let every = (0...255).map { UInt8($0) }
        #expect(Digest.hex(every) == hex(every))
    }

    @Test("every input form gives the same digest")
    func inputForms() {
        let bytes = (0..<1_000).map { UInt8(truncatingIfNeeded: $0) }
        let expected = Digest.sha256(bytes)
        #expect(expected.count == 32)
        #expect(Digest.sha256(Data(bytes)) == expected)
        #expect(Digest.sha256(bytes[...]) == expected)
        #expect(Digest.sha256(bytes.lazy.map { $0 }) == expected)
        #expect(bytes.withUnsafeBytes { Digest.sha256($0) } == expected)
        #expect(Digest.sha256(bytes.dropLast()) != expected)
    }
}

import CourierTestServer
import CourierTLS
import Foundation
import Testing

extension SerialTLSTests {

/// PBKDF2-HMAC-SHA256 password hashing and its encoded form.
@Suite("Password hashing", .ownThread)
struct PasswordHashingTests {
    @Test("a password hashed with the default iterations verifies; a wrong one does not")
    func roundTripDefault() throws {
        let encoded = try PasswordHashing.hash("correct horse battery staple")
        #expect(encoded.hasPrefix("pbkdf2-sha256$210000$"))
        #expect(PasswordHashing.verify("correct horse battery staple", against: encoded))
        #expect(!PasswordHashing.verify("correct horse battery stapl", against: encoded))
        #expect(!PasswordHashing.verify("", against: encoded))
        #expect(!PasswordHashing.needsRehash(encoded))
    }

    @Test("every hash gets its own salt")
    func freshSalt() throws {
        let first = try PasswordHashing.hash("secret", iterations: 1_000)
        let second = try PasswordHashing.hash("secret", iterations: 1_000)
        #expect(first != second)
        #expect(PasswordHashing.verify("secret", against: first))
        #expect(PasswordHashing.verify("secret", against: second))
    }

    @Test("non-ASCII and long passwords round-trip")
    func unusualPasswords() throws {
        for password in ["pässwörd 🔑", String(repeating: "x", count: PasswordHashing.maximumPasswordLength), ""] {
            let encoded = try PasswordHashing.hash(password, iterations: 100)
            #expect(PasswordHashing.verify(password, against: encoded))
            #expect(!PasswordHashing.verify(password + "!", against: encoded))
        }
    }

    @Test("the encoded form parses into its parts and re-encodes identically")
    func encodedFormParses() throws {
        let encoded = try PasswordHashing.hash("secret", iterations: 1_234)
        let parts = try #require(PasswordHashing.EncodedHash(parsing: encoded))
        #expect(parts.iterations == 1_234)
        #expect(parts.salt.count == PasswordHashing.saltLength)
        #expect(parts.derivedKey.count == PasswordHashing.keyLength)
        #expect(parts.encoded == encoded)
        let fields = encoded.split(separator: "$")
        #expect(fields.count == 4)
        #expect(Data(base64Encoded: String(fields[2])).map([UInt8].init) == parts.salt)
        #expect(PasswordHashing.needsRehash(encoded))
        #expect(!PasswordHashing.needsRehash(encoded, iterations: 1_000))
    }

    @Test("RFC 7914 §11 PBKDF2-HMAC-SHA256 test vectors verify")
    func rfcVectors() {
        let vectors: [(password: String, salt: String, iterations: Int, hex: String)] = [
            ("passwd", "salt", 1,
             "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
                + "49ca9cccf179b6459916 64b39d77ef317c71b845b1e30bd509112041d3a19783"),
            ("Password", "NaCl", 80_000,
             "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
                + "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"),
        ]
        for vector in vectors {
            let key = hexBytes(vector.hex)
            #expect(key.count == 64)
            let encoded = PasswordHashing.EncodedHash(iterations: vector.iterations, salt: Array(vector.salt.utf8),
                                                      derivedKey: key).encoded
            #expect(PasswordHashing.verify(vector.password, against: encoded))
            #expect(!PasswordHashing.verify(vector.password.uppercased(), against: encoded))
        }
    }

    @Test("malformed encoded hashes are rejected without crashing", arguments: [
        "",
        "pbkdf2-sha256",
        "pbkdf2-sha256$1000$c2FsdHNhbHRzYWx0c2FsdA==",
        "pbkdf2-sha1$1000$c2FsdHNhbHRzYWx0c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$abc$c2FsdHNhbHRzYWx0c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$+1000$c2FsdHNhbHRzYWx0c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$-1$c2FsdHNhbHRzYWx0c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$0$c2FsdHNhbHRzYWx0c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$99999999999999999999$c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$20000000$c2FsdHNhbHRzYWx0c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$1000$***$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$1000$$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$1000$c2FsdHNhbHRzYWx0c2FsdA==$AAAA",
        "pbkdf2-sha256$1000$c2FsdHNhbHRzYWx0c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=$extra",
        "PBKDF2-SHA256$1000$c2FsdHNhbHRzYWx0c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    ])
    func malformedEncodings(encoded: String) {
        #expect(PasswordHashing.EncodedHash(parsing: encoded) == nil)
        #expect(!PasswordHashing.verify("", against: encoded))
        #expect(PasswordHashing.needsRehash(encoded))
    }

    @Test("a well-formed encoding with the wrong key rejects the password")
    func wrongKey() throws {
        let zeros = "pbkdf2-sha256$1000$c2FsdHNhbHRzYWx0c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
        #expect(PasswordHashing.EncodedHash(parsing: zeros)?.iterations == 1_000)
        #expect(!PasswordHashing.verify("salt", against: zeros))
    }

    @Test("invalid iteration counts and oversized passwords are refused")
    func invalidInput() {
        for iterations in [0, -5, 10_000_001, Int.max] {
            #expect(throws: PasswordHashingError.invalidIterations) {
                try PasswordHashing.hash("secret", iterations: iterations)
            }
        }
        let error = #expect(throws: PasswordHashingError.invalidPassword) {
            try PasswordHashing.hash(String(repeating: "x", count: PasswordHashing.maximumPasswordLength + 1),
                                     iterations: 1)
        }
        #expect(error?.description.contains("4097 bytes") == true)
    }

    private func hexBytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace }.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
            UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)
        }
    }
}
}

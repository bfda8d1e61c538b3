import Foundation

extension PasswordHashing {
    /// The parts of an encoded password hash:
    /// `pbkdf2-sha256$<iterations>$<salt, base64>$<derived key, base64>`.
    ///
    /// Parsing is strict and bounded: the scheme must match, the iteration
    /// count must be plain decimal digits within
    /// ``PasswordHashing/allowedIterations``, the salt 1 to 1,024 bytes and the
    /// derived key 16 to 1,024 bytes, both in standard base64.
    public struct EncodedHash: Sendable, Hashable {
        /// The PBKDF2 iteration count.
        public let iterations: Int
        /// The salt.
        public let salt: [UInt8]
        /// The derived key (the stored hash proper).
        public let derivedKey: [UInt8]

        /// Creates an encoded hash from its parts (no validation; see ``encoded``).
        ///
        /// - Parameters:
        ///   - iterations: the PBKDF2 iteration count.
        ///   - salt: the salt.
        ///   - derivedKey: the derived key.
        public init(iterations: Int, salt: [UInt8], derivedKey: [UInt8]) {
            self.iterations = iterations
            self.salt = salt
            self.derivedKey = derivedKey
        }

        /// Parses the encoded form.
        ///
        /// - Parameter encoded: a string produced by ``PasswordHashing/hash(_:iterations:)``.
        /// - Returns: the parts, or `nil` if the string is not a valid encoded hash.
        public init?(parsing encoded: String) {
            guard encoded.utf8.count <= 4_096 else { return nil }
            let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
            guard fields.count == 4, fields[0] == PasswordHashing.scheme else { return nil }
            let digits = fields[1].utf8
            guard (1...9).contains(digits.count), digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let iterations = Int(fields[1]), PasswordHashing.allowedIterations.contains(iterations) else {
                return nil
            }
            guard let salt = Data(base64Encoded: String(fields[2])), (1...1_024).contains(salt.count),
                  let key = Data(base64Encoded: String(fields[3])), (16...1_024).contains(key.count) else {
                return nil
            }
            self.init(iterations: iterations, salt: [UInt8](salt), derivedKey: [UInt8](key))
        }

        /// The encoded form: `pbkdf2-sha256$<iterations>$<salt>$<derived key>`.
        public var encoded: String {
            "\(PasswordHashing.scheme)$\(iterations)$\(Data(salt).base64EncodedString())$"
                + Data(derivedKey).base64EncodedString()
        }
    }
}

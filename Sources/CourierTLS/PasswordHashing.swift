import COpenSSL

/// Password storage with PBKDF2-HMAC-SHA256 (OpenSSL's `PKCS5_PBKDF2_HMAC`).
///
/// ``hash(_:iterations:)`` returns a self-describing string that holds
/// everything needed to check a password later:
///
/// ```
/// pbkdf2-sha256$210000$<salt, base64>$<derived key, base64>
/// ```
///
/// The salt is 16 random bytes from `RAND_bytes`, the derived key 32 bytes,
/// both in standard base64 with padding. ``verify(_:against:)`` recomputes the
/// key with the stored salt and iteration count and compares in constant time
/// (`CRYPTO_memcmp`). Raise the iteration count over time and use
/// ``needsRehash(_:iterations:)`` to upgrade stored hashes at the next login.
///
/// Passwords are hashed as their UTF-8 bytes, without Unicode normalization.
/// To avoid revealing which user names exist, verify unknown users against a
/// dummy hash too, so that both paths take the same time.
public enum PasswordHashing {
    /// The scheme name at the start of the encoded form: `"pbkdf2-sha256"`.
    public static let scheme = "pbkdf2-sha256"
    /// The default iteration count: 210,000 (OWASP's recommendation for PBKDF2-HMAC-SHA256).
    public static let defaultIterations = 210_000
    /// The iteration counts accepted when hashing and when parsing a stored
    /// hash: 1 to 10,000,000. The upper bound keeps a corrupted or hostile
    /// stored hash from pinning a CPU.
    public static let allowedIterations = 1...10_000_000
    /// The longest password accepted, in UTF-8 bytes: 4,096.
    public static let maximumPasswordLength = 4_096
    /// The salt length used for new hashes: 16 bytes.
    public static let saltLength = 16
    /// The derived key length used for new hashes: 32 bytes.
    public static let keyLength = 32

    /// Hashes a password with a fresh random salt.
    ///
    /// - Parameters:
    ///   - password: the password.
    ///   - iterations: the PBKDF2 iteration count. Default: ``defaultIterations``.
    /// - Returns: the encoded hash, e.g. `pbkdf2-sha256$210000$...$...`.
    /// - Throws: ``PasswordHashingError/invalidIterations``,
    ///   ``PasswordHashingError/invalidPassword`` (longer than
    ///   ``maximumPasswordLength``), ``PasswordHashingError/randomnessUnavailable``
    ///   or ``PasswordHashingError/derivationFailed``.
    public static func hash(_ password: String,
                            iterations: Int = defaultIterations) throws(PasswordHashingError) -> String {
        guard allowedIterations.contains(iterations) else {
            throw PasswordHashingError.invalidIterations.with(
                detail: "\(iterations) is outside \(allowedIterations.lowerBound)...\(allowedIterations.upperBound)")
        }
        var salt = [UInt8](repeating: 0, count: saltLength)
        let ok = salt.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) == 1 }
        guard ok else {
            throw PasswordHashingError.randomnessUnavailable.with(detail: OpenSSL.drainErrorQueue())
        }
        let key = try deriveKey(password: password, salt: salt, iterations: iterations, length: keyLength)
        return EncodedHash(iterations: iterations, salt: salt, derivedKey: key).encoded
    }

    /// Checks a password against an encoded hash, in constant time with
    /// respect to the key comparison.
    ///
    /// - Parameters:
    ///   - password: the password to check.
    ///   - encoded: a hash produced by ``hash(_:iterations:)``.
    /// - Returns: `true` only if the password matches; `false` for a wrong
    ///   password and for an encoded hash that cannot be parsed.
    public static func verify(_ password: String, against encoded: String) -> Bool {
        guard let stored = EncodedHash(parsing: encoded),
              let key = try? deriveKey(password: password, salt: stored.salt,
                                       iterations: stored.iterations, length: stored.derivedKey.count),
              key.count == stored.derivedKey.count else {
            return false
        }
        return key.withUnsafeBytes { computed in
            stored.derivedKey.withUnsafeBytes { expected in
                CRYPTO_memcmp(computed.baseAddress, expected.baseAddress, computed.count) == 0
            }
        }
    }

    /// Whether a stored hash should be replaced by a new one (after a
    /// successful ``verify(_:against:)``, while the plaintext is at hand).
    ///
    /// - Parameters:
    ///   - encoded: the stored hash.
    ///   - iterations: the iteration count new hashes use. Default: ``defaultIterations``.
    /// - Returns: `true` if the hash cannot be parsed, uses fewer iterations,
    ///   or a shorter salt or key than new hashes would.
    public static func needsRehash(_ encoded: String, iterations: Int = defaultIterations) -> Bool {
        guard let stored = EncodedHash(parsing: encoded) else { return true }
        return stored.iterations < iterations || stored.salt.count < saltLength
            || stored.derivedKey.count < keyLength
    }

    /// Runs PBKDF2-HMAC-SHA256.
    ///
    /// - Parameters:
    ///   - password: the password; its UTF-8 bytes are the PBKDF2 password.
    ///   - salt: the salt.
    ///   - iterations: the iteration count, within ``allowedIterations``.
    ///   - length: the derived key length in bytes.
    /// - Returns: the derived key.
    /// - Throws: ``PasswordHashingError/invalidIterations``,
    ///   ``PasswordHashingError/invalidPassword`` or ``PasswordHashingError/derivationFailed``.
    static func deriveKey(password: String, salt: [UInt8], iterations: Int,
                          length: Int) throws(PasswordHashingError) -> [UInt8] {
        guard allowedIterations.contains(iterations) else { throw PasswordHashingError.invalidIterations }
        let passwordBytes = Array(password.utf8)
        guard passwordBytes.count <= maximumPasswordLength else {
            throw PasswordHashingError.invalidPassword.with(
                detail: "\(passwordBytes.count) bytes, at most \(maximumPasswordLength) allowed")
        }
        guard (1...1_024).contains(length), salt.count <= 1_024 else {
            throw PasswordHashingError.derivationFailed.with(detail: "salt or key length out of range")
        }
        var key = [UInt8](repeating: 0, count: length)
        let ok = passwordBytes.withUnsafeBufferPointer { passwordBuffer in
            salt.withUnsafeBufferPointer { saltBuffer in
                key.withUnsafeMutableBufferPointer { keyBuffer in
                    passwordBuffer.withMemoryRebound(to: CChar.self) { passwordChars in
                        PKCS5_PBKDF2_HMAC(passwordChars.baseAddress, Int32(passwordChars.count),
                                          saltBuffer.baseAddress, Int32(saltBuffer.count),
                                          Int32(iterations), EVP_sha256(),
                                          Int32(keyBuffer.count), keyBuffer.baseAddress) == 1
                    }
                }
            }
        }
        guard ok else {
            throw PasswordHashingError.derivationFailed.with(detail: OpenSSL.drainErrorQueue())
        }
        return key
    }
}

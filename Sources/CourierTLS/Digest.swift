import COpenSSL

/// Cryptographic digests computed by OpenSSL's EVP interface.
public enum Digest {
    /// The SHA-256 digest of some bytes.
    ///
    /// Used for certificate and public-key pins
    /// (``TLSConfiguration/CertificatePin``).
    ///
    /// - Parameter bytes: the input, e.g. `[UInt8]`, `Data`, `ArraySlice<UInt8>`
    ///   or `String.UTF8View`.
    /// - Returns: the 32-byte digest.
    public static func sha256(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        if let digest = bytes.withContiguousStorageIfAvailable({ sha256(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes { sha256($0) }
    }

    /// A digest (or any bytes) as lowercase hexadecimal, two digits a byte: the form in which
    /// SHA-256 sums are written and compared (`sha256sum`, download checksums, cache keys).
    ///
    /// - Parameter digest: the bytes, e.g. what `sha256` or ``SHA256Hasher/finalize()`` returns.
    /// - Returns: `2 × digest.count` characters from `0-9a-f`.
    public static func hex(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The SHA-256 digest of the bytes in a buffer.
    ///
    /// - Parameter bytes: the input.
    /// - Returns: the 32-byte digest. If OpenSSL cannot compute it at all (it
    ///   could not allocate a digest context, or a broken provider
    ///   configuration hides SHA-256), 32 zero bytes, which match no pin.
    public static func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        // EVP_Digest accepts a NULL pointer for zero bytes of input.
        let ok = digest.withUnsafeMutableBufferPointer { output in
            EVP_Digest(bytes.baseAddress, bytes.count, output.baseAddress, &length, EVP_sha256(), nil) == 1
        }
        // SHA-256 over memory cannot fail short of OpenSSL being unable to
        // allocate a digest context; an all-zero digest never matches a pin.
        return ok && length == 32 ? digest : [UInt8](repeating: 0, count: 32)
    }
}

import COpenSSL

extension Digest {
    /// The HMAC-SHA256 of some bytes under a key (RFC 2104), computed by OpenSSL.
    ///
    /// Used where a value must be compared without being kept: the HTTP cache partitions its
    /// entries by the HMAC of the request's credentials under a key of its own.
    ///
    /// - Parameters:
    ///   - key: the secret key.
    ///   - bytes: the message.
    /// - Returns: the 32-byte MAC, or 32 zero bytes if OpenSSL cannot compute it.
    public static func hmacSHA256(key: [UInt8], _ bytes: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = key.withUnsafeBytes { keyBuffer in
            bytes.withUnsafeBytes { message in
                mac.withUnsafeMutableBufferPointer { output in
                    HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count),
                         message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count,
                         output.baseAddress, &length) != nil
                }
            }
        }
        return ok && length == 32 ? mac : [UInt8](repeating: 0, count: 32)
    }
}

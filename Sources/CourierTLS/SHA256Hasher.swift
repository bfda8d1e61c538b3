import COpenSSL

/// A SHA-256 digest computed piece by piece, for input that never sits in memory whole (a file
/// being downloaded), through OpenSSL's EVP interface.
///
/// ```swift
/// var hasher = SHA256Hasher()
/// hasher.update(firstChunk)
/// hasher.update(secondChunk)
/// let hex = Digest.hex(hasher.finalize())
/// ```
///
/// Use one hasher from one task at a time; ``finalize()`` ends it.
public struct SHA256Hasher: ~Copyable {
    private let context: OpaquePointer?
    private var failed: Bool

    /// Starts an empty digest.
    public init() {
        context = EVP_MD_CTX_new()
        failed = context == nil || EVP_DigestInit_ex(context, EVP_sha256(), nil) != 1
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Adds bytes to the digest.
    /// - Parameter bytes: the next bytes of the input, e.g. `Data` or `[UInt8]`.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) != nil { return }
        Array(bytes).withUnsafeBytes { update($0) }
    }

    /// Adds the bytes in a buffer to the digest.
    /// - Parameter bytes: the next bytes of the input.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !failed, bytes.count > 0 else { return }
        failed = EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) != 1
    }

    /// Ends the digest.
    /// - Returns: the 32-byte digest of everything added; 32 zero bytes if OpenSSL could not
    ///   compute it (no digest context, or SHA-256 hidden by a broken provider configuration),
    ///   which matches no real digest.
    public consuming func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = !failed && digest.withUnsafeMutableBufferPointer { output in
            EVP_DigestFinal_ex(context, output.baseAddress, &length) == 1
        }
        return ok && length == 32 ? digest : [UInt8](repeating: 0, count: 32)
    }
}

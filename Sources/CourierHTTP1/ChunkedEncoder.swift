/// Frames data with the chunked transfer coding (RFC 9112 §7.1), for servers and streamed
/// uploads.
///
/// Send `chunk(_:)` for each piece of the body, then `lastChunk` (or `lastChunk(trailers:)`).
/// To avoid copying large bodies, write `chunkHeader(count:)`, the data, and `chunkTerminator`
/// separately (e.g. with `writev`).
public enum ChunkedEncoder {
    /// `CRLF`: ends the data of every chunk.
    public static let chunkTerminator: [UInt8] = [0x0D, 0x0A]

    /// The zero-size last chunk with an empty trailer section: `0 CRLF CRLF`.
    public static var lastChunk: [UInt8] { [0x30, 0x0D, 0x0A, 0x0D, 0x0A] }

    /// The last chunk followed by trailer fields.
    /// - Parameter trailers: The trailer fields (CR, LF and NUL are replaced by spaces).
    /// - Returns: `0 CRLF`, one line per field, and the final CRLF.
    public static func lastChunk(trailers: [HTTPField]) -> [UInt8] {
        HTTPSyntax.build(capacity: 5 &+ trailers.serializedCount) { writer in
            writer.write(0x30)
            writer.writeCRLF()
            trailers.write(to: &writer)
            writer.writeCRLF()
        }
    }

    /// The chunk-size line for `count` data bytes: lowercase hexadecimal size and CRLF.
    /// - Parameter count: The number of data bytes that follow; must be positive (a size of 0
    ///   would end the body), negative values are written as 0.
    /// - Returns: e.g. `1a CRLF` for 26 bytes.
    public static func chunkHeader(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(18)
        appendHeader(count: count, to: &bytes)
        return bytes
    }

    /// One complete chunk: size line, the data, and CRLF.
    /// - Parameter bytes: The data. When it is empty nothing is produced, because an empty
    ///   chunk would end the body.
    /// - Returns: The framed chunk, or `[]` for empty data.
    public static func chunk(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        guard !bytes.isEmpty else { return [] }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 20)
        appendHeader(count: bytes.count, to: &out)
        out.append(contentsOf: bytes)
        out.append(contentsOf: chunkTerminator)
        return out
    }

    /// One complete chunk: size line, the data, and CRLF.
    /// - Parameter bytes: The data. When it is empty nothing is produced, because an empty
    ///   chunk would end the body.
    /// - Returns: The framed chunk, or `[]` for empty data.
    public static func chunk<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        let count = bytes.count
        guard count > 0 else { return [] }
        var out: [UInt8] = []
        out.reserveCapacity(count + 20)
        appendHeader(count: count, to: &out)
        out.append(contentsOf: bytes)
        out.append(contentsOf: chunkTerminator)
        return out
    }

    private static func appendHeader(count: Int, to bytes: inout [UInt8]) {
        let value = UInt64(Swift.max(count, 0))
        var shift = 60
        while shift > 0 && (value >> UInt64(shift)) == 0 { shift -= 4 }
        while shift >= 0 {
            let digit = UInt8(truncatingIfNeeded: (value >> UInt64(shift)) & 0xF)
            bytes.append(digit < 10 ? 0x30 &+ digit : 0x61 &+ digit &- 10)
            shift -= 4
        }
        bytes.append(0x0D)
        bytes.append(0x0A)
    }
}

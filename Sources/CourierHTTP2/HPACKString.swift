/// HPACK string literal representation (RFC 7541 §5.2): an H bit, a 7-bit-prefix length,
/// then the octets, raw or Huffman-encoded.
enum HPACKString {
    /// Appends `text`'s UTF-8 octets as a string literal.
    /// - Parameters:
    ///   - text: The string.
    ///   - huffman: `.whenNotLonger` uses the Huffman code when it is not longer.
    ///   - output: The buffer to append to.
    static func encode(_ text: String, huffman: HPACKHuffmanPolicy, into output: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            if huffman == .whenNotLonger {
                let encodedLength = HuffmanCoder.encodedLength(bytes)
                if encodedLength <= bytes.count {
                    HPACKInteger.encode(encodedLength, prefixBits: 7, firstByte: 0x80, into: &output)
                    HuffmanCoder.encode(bytes, into: &output)
                    return
                }
            }
            HPACKInteger.encode(bytes.count, prefixBits: 7, into: &output)
            output.append(contentsOf: bytes)
        }
    }

    /// Decodes a string literal starting at `position`, and advances past it.
    /// - Parameters:
    ///   - bytes: The field block.
    ///   - position: The index of the first octet; on return, the index after the string.
    ///   - maxLength: The most decoded octets allowed.
    /// - Returns: The string (octets that are not UTF-8 become replacement characters).
    /// - Throws: `HPACKError.stringTooLong`, `.truncated`, `.integerOverflow`, or a Huffman error.
    static func decode(_ bytes: [UInt8], at position: inout Int, maxLength: Int) throws(HPACKError) -> String {
        let (isHuffman, octets) = try literal(bytes, at: &position, maxLength: maxLength)
        return try decode(octets, isHuffman: isHuffman, maxLength: maxLength).text
    }

    /// Reads a string literal's H bit and length at `position`, and advances past its octets.
    /// - Parameters:
    ///   - bytes: The field block.
    ///   - position: The index of the first octet; on return, the index after the string.
    ///   - maxLength: The most decoded octets allowed (checked here for a raw literal).
    /// - Returns: Whether the octets are Huffman-coded, and the octets as sent.
    /// - Throws: `HPACKError.stringTooLong` (raw), `.truncated`, `.integerOverflow`.
    static func literal(_ bytes: [UInt8], at position: inout Int,
                        maxLength: Int) throws(HPACKError) -> (isHuffman: Bool, octets: ArraySlice<UInt8>) {
        guard position < bytes.count else { throw .truncated }
        let isHuffman = bytes[position] & 0x80 != 0
        let length = try HPACKInteger.decode(bytes, at: &position, prefixBits: 7)
        if !isHuffman, length > maxLength {
            throw HPACKError.stringTooLong.with("\(length) octets, limit \(maxLength)")
        }
        guard length <= bytes.count - position else { throw .truncated }
        let octets = bytes[position..<(position + length)]
        position += length
        return (isHuffman, octets)
    }

    /// Decodes a literal's octets.
    /// - Parameters:
    ///   - octets: The octets as sent (from ``literal(_:at:maxLength:)``).
    ///   - isHuffman: Whether they are Huffman-coded.
    ///   - maxLength: The most decoded octets allowed (checked here for a Huffman literal).
    /// - Returns: The string (octets that are not UTF-8 become replacement characters), and how
    ///   many octets it was decoded from (what `maxLength` limits; the string's UTF-8 can be
    ///   longer, since each replacement character takes three).
    /// - Throws: `HPACKError.stringTooLong` or a Huffman error.
    static func decode(_ octets: ArraySlice<UInt8>, isHuffman: Bool,
                       maxLength: Int) throws(HPACKError) -> (text: String, decodedCount: Int) {
        guard isHuffman else { return (String(decoding: octets, as: UTF8.self), octets.count) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(Swift.min(maxLength, octets.count * 8 / 5))
        try HuffmanCoder.decode(octets, maxLength: maxLength, into: &decoded)
        return (String(decoding: decoded, as: UTF8.self), decoded.count)
    }
}

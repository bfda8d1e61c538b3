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
        guard position < bytes.count else { throw .truncated }
        let isHuffman = bytes[position] & 0x80 != 0
        let length = try HPACKInteger.decode(bytes, at: &position, prefixBits: 7)
        if !isHuffman, length > maxLength {
            throw HPACKError.stringTooLong.with("\(length) octets, limit \(maxLength)")
        }
        guard length <= bytes.count - position else { throw .truncated }
        let encoded = bytes[position..<(position + length)]
        position += length
        guard isHuffman else { return String(decoding: encoded, as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(Swift.min(maxLength, length * 8 / 5))
        try HuffmanCoder.decode(encoded, maxLength: maxLength, into: &decoded)
        return String(decoding: decoded, as: UTF8.self)
    }
}

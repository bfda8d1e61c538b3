/// Encodes and decodes octets with the HPACK Huffman code (RFC 7541 §5.2, Appendix B).
enum HuffmanCoder {
    /// The encoded length in octets of `bytes`, including the final padding.
    /// - Parameter bytes: The octets to encode.
    /// - Returns: The number of octets `encode(_:into:)` appends.
    static func encodedLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var bits = 0
        for byte in bytes {
            bits += Int(HuffmanCode.table[Int(byte)].length)
        }
        return (bits + 7) / 8
    }

    /// Appends the Huffman encoding of `bytes` to `output`, padded with the most significant
    /// bits of EOS (1 bits) to a whole octet.
    /// - Parameters:
    ///   - bytes: The octets to encode.
    ///   - output: The buffer to append to.
    static func encode(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        var accumulator: UInt64 = 0
        var pending = 0
        for byte in bytes {
            let entry = HuffmanCode.table[Int(byte)]
            accumulator = (accumulator << UInt64(entry.length)) | UInt64(entry.code)
            pending += Int(entry.length)
            while pending >= 8 {
                pending -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(pending)))
            }
        }
        if pending > 0 {
            let padding = 8 - pending
            accumulator = (accumulator << UInt64(padding)) | ((1 << UInt64(padding)) - 1)
            output.append(UInt8(truncatingIfNeeded: accumulator))
        }
    }

    /// Decodes Huffman-encoded octets, appending the symbols to `output`.
    ///
    /// - Parameters:
    ///   - bytes: The encoded octets.
    ///   - maxLength: The most decoded octets allowed.
    ///   - output: The buffer to append the decoded octets to.
    /// - Throws: `HPACKError.huffmanEOS` when EOS is decoded, `.invalidHuffmanPadding` when the
    ///   data ends with more than 7 bits or with bits that are not all ones, and
    ///   `.stringTooLong` when more than `maxLength` octets would be produced.
    static func decode(_ bytes: ArraySlice<UInt8>, maxLength: Int, into output: inout [UInt8]) throws(HPACKError) {
        let tree = HuffmanTree.shared
        var node = 0
        var produced = 0
        for byte in bytes {
            var shift: UInt8 = 4
            for _ in 0..<2 {
                let entry = tree.transitions[node &* 16 &+ Int((byte >> shift) & 0x0f)]
                shift = 0
                if entry & HuffmanTree.readsEOS != 0 { throw .huffmanEOS }
                if entry & HuffmanTree.emitsSymbol != 0 {
                    guard produced < maxLength else { throw HPACKError.stringTooLong.with("over \(maxLength) octets") }
                    output.append(UInt8(truncatingIfNeeded: entry >> 16))
                    produced += 1
                }
                node = Int(entry & 0xff)
            }
        }
        guard tree.acceptsEnd[node] else {
            throw HPACKError.invalidHuffmanPadding.with("the data does not end on a symbol boundary padded with 1 bits")
        }
    }

    /// `encodedLength(_:)` for an array.
    static func encodedLength(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { encodedLength($0) }
    }

    /// `encode(_:into:)` for an array.
    static func encode(_ bytes: [UInt8], into output: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { encode($0, into: &output) }
    }

    /// `decode(_:maxLength:into:)` for an array.
    static func decode(_ bytes: [UInt8], maxLength: Int, into output: inout [UInt8]) throws(HPACKError) {
        try decode(bytes[...], maxLength: maxLength, into: &output)
    }
}

/// HPACK integer representation (RFC 7541 §5.1): an N-bit prefix, then 7 bits per
/// continuation octet, least significant group first.
enum HPACKInteger {
    /// The largest value the decoder accepts (2³² − 1): every HPACK integer in HTTP/2 is an
    /// index, a length or a table size, and none needs more.
    static let maxValue = Int(UInt32.max)

    /// Appends `value` with an N-bit prefix; the bits of `firstByte` above the prefix (the
    /// representation's pattern) are kept.
    /// - Parameters:
    ///   - value: A non-negative integer.
    ///   - prefixBits: The prefix size, 1 to 8.
    ///   - firstByte: The pattern bits of the first octet (its low `prefixBits` bits must be 0).
    ///   - output: The buffer to append to.
    static func encode(_ value: Int, prefixBits: Int, firstByte: UInt8 = 0, into output: inout [UInt8]) {
        precondition(value >= 0 && (1...8).contains(prefixBits))
        let limit = (1 << prefixBits) - 1
        if value < limit {
            output.append(firstByte | UInt8(value))
            return
        }
        output.append(firstByte | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            output.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        output.append(UInt8(rest))
    }

    /// Decodes an integer with an N-bit prefix starting at `position`, and advances past it.
    /// - Parameters:
    ///   - bytes: The field block.
    ///   - position: The index of the first octet; on return, the index after the integer.
    ///   - prefixBits: The prefix size, 1 to 8.
    /// - Returns: The value.
    /// - Throws: `HPACKError.truncated` when the block ends inside the integer, and
    ///   `.integerOverflow` when it exceeds `maxValue` or uses more octets than that needs.
    static func decode(_ bytes: [UInt8], at position: inout Int, prefixBits: Int) throws(HPACKError) -> Int {
        guard position < bytes.count else { throw .truncated }
        let limit = (1 << prefixBits) - 1
        var value = Int(bytes[position]) & limit
        position += 1
        guard value == limit else { return value }
        var shift = 0
        while true {
            guard position < bytes.count else { throw .truncated }
            let byte = bytes[position]
            position += 1
            guard shift <= 28 else { throw .integerOverflow }
            value += Int(byte & 0x7f) << shift
            guard value <= maxValue else { throw .integerOverflow }
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }
}

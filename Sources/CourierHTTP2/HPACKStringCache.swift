/// The string literals a decoder met lately, keyed by their encoded octets, so that a value a
/// server sends again and again without indexing it (nginx sends every response field as a
/// Huffman-coded literal: `server`, `content-type`, a custom header, the same `date` for a
/// second) is decoded once and then shared, not Huffman-decoded and copied into a new string
/// each time.
///
/// It is direct-mapped: ``slotCount`` slots, each holding the last literal of at most
/// ``maxEncodedLength`` octets whose hash falls there, so it holds at most about
/// `slotCount × 2 × maxEncodedLength` octets whatever the peer sends, and a literal that
/// collides only evicts another. A hit is a hash of the octets and one comparison.
struct HPACKStringCache: Sendable {
    /// One remembered literal.
    private struct Slot: Sendable {
        /// The literal's octets as sent (after the length prefix).
        var encoded: [UInt8]
        /// Whether they are Huffman-coded (the literal's H bit).
        var isHuffman: Bool
        /// The decoded string.
        var text: String
    }

    /// The number of slots (a power of two).
    static let slotCount = 64
    /// The longest encoded literal remembered; longer ones are decoded every time.
    static let maxEncodedLength = 128

    private var slots = [Slot?](repeating: nil, count: HPACKStringCache.slotCount)

    /// Decodes the string literal at `position` (RFC 7541 §5.2) and advances past it, as
    /// `HPACKString.decode` does, answering from the cache when the same octets came before.
    /// - Parameters:
    ///   - bytes: The field block.
    ///   - position: The index of the literal's first octet; on return, the index after it.
    ///   - maxLength: The most decoded octets allowed (checked on a hit too).
    /// - Returns: The string.
    /// - Throws: What `HPACKString.decode` throws for the same octets.
    mutating func decode(_ bytes: [UInt8], at position: inout Int, maxLength: Int) throws(HPACKError) -> String {
        let (isHuffman, encoded) = try HPACKString.literal(bytes, at: &position, maxLength: maxLength)
        guard encoded.count <= Self.maxEncodedLength else {
            return try HPACKString.decode(encoded, isHuffman: isHuffman, maxLength: maxLength)
        }
        let index = Self.slotIndex(encoded, isHuffman: isHuffman)
        if let slot = slots[index], slot.isHuffman == isHuffman, slot.encoded.elementsEqual(encoded),
           slot.text.utf8.count <= maxLength {
            return slot.text
        }
        let text = try HPACKString.decode(encoded, isHuffman: isHuffman, maxLength: maxLength)
        slots[index] = Slot(encoded: Array(encoded), isHuffman: isHuffman, text: text)
        return text
    }

    /// The slot of a literal: FNV-1a over its octets and its H bit.
    private static func slotIndex(_ encoded: ArraySlice<UInt8>, isHuffman: Bool) -> Int {
        var hash: UInt32 = isHuffman ? 0x811c_9dc5 : 0x050c_5d1f
        for byte in encoded {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        return Int(hash ^ (hash >> 16)) & (slotCount - 1)
    }
}

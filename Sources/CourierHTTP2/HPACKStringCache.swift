/// The string literals a decoder met lately, keyed by their encoded octets, so that a value a
/// server sends again and again without indexing it (nginx sends every response field as a
/// Huffman-coded literal: `server`, `content-type`, a custom header, the same `date` for a
/// second) is decoded once and then shared, not Huffman-decoded and copied into a new string
/// each time.
///
/// It is two-way set-associative: ``setCount`` sets of two slots, each slot holding a literal of
/// at most ``maxEncodedLength`` octets. A literal goes to the set its hash picks and, on a miss,
/// takes the slot of that set used less recently, so two literals that hash alike are both kept
/// (with one slot per hash, a response's two colliding fields would both miss on every response).
/// It holds at most about `2 × setCount × 2 × maxEncodedLength` octets whatever the peer sends,
/// and a literal that collides only evicts another. A hit is a hash of the octets and at most
/// two comparisons.
struct HPACKStringCache: Sendable {
    /// One remembered literal.
    private struct Slot: Sendable {
        /// The literal's octets as sent (after the length prefix).
        var encoded: [UInt8] = []
        /// Whether they are Huffman-coded (the literal's H bit).
        var isHuffman = false
        /// Whether the slot holds a literal.
        var isFilled = false
        /// The decoded string.
        var text = ""
        /// How many octets it was decoded from (what a decoder's length limit counts).
        var decodedCount = 0
    }

    /// The number of sets (a power of two).
    static let setCount = 32
    /// The longest encoded literal remembered; longer ones are decoded every time.
    static let maxEncodedLength = 128

    /// Slots `2 × set` and `2 × set + 1` form a set.
    private var slots = [Slot](repeating: Slot(), count: 2 * HPACKStringCache.setCount)
    /// The slot of each set (0 or 1) that was used last, hit or filled.
    private var lastUsed = [UInt8](repeating: 0, count: HPACKStringCache.setCount)
    /// How many literals were decoded rather than answered from the cache (for tests).
    private(set) var decodedCount = 0

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
            decodedCount &+= 1
            return try HPACKString.decode(encoded, isHuffman: isHuffman, maxLength: maxLength).text
        }
        let set = Self.setIndex(encoded, isHuffman: isHuffman)
        for way in 0..<2 {
            let index = 2 &* set &+ way
            guard slots[index].isFilled, slots[index].isHuffman == isHuffman,
                  slots[index].encoded.elementsEqual(encoded) else { continue }
            // Over a limit lowered since: throw what decoding again would, and keep the slot.
            guard slots[index].decodedCount <= maxLength else {
                throw HPACKError.stringTooLong.with("over \(maxLength) octets")
            }
            lastUsed[set] = UInt8(way)
            return slots[index].text
        }
        decodedCount &+= 1
        let (text, count) = try HPACKString.decode(encoded, isHuffman: isHuffman, maxLength: maxLength)
        let way = slots[2 &* set].isFilled ? 1 &- Int(lastUsed[set]) : 0
        slots[2 &* set &+ way] = Slot(encoded: Array(encoded), isHuffman: isHuffman, isFilled: true, text: text,
                                      decodedCount: count)
        lastUsed[set] = UInt8(way)
        return text
    }

    /// The set of a literal: FNV-1a over its octets and its H bit.
    static func setIndex(_ encoded: ArraySlice<UInt8>, isHuffman: Bool) -> Int {
        var hash: UInt32 = isHuffman ? 0x811c_9dc5 : 0x050c_5d1f
        for byte in encoded {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        return Int(hash ^ (hash >> 16)) & (setCount - 1)
    }
}

/// The decoding tree of the Huffman code, built once from `HuffmanCode.table`, and a
/// four-bits-at-a-time transition table derived from it.
///
/// Node `n`'s children are `children[2n]` (bit 0) and `children[2n + 1]` (bit 1): a value
/// `>= 0` is an internal node, a value `< 0` is the leaf of symbol `-value - 1`. The code is
/// complete, so every child slot is filled; its 257 leaves make 256 internal nodes.
struct HuffmanTree: Sendable {
    /// The shared tree.
    static let shared = HuffmanTree()

    /// The child links, two per internal node.
    let children: [Int32]

    /// `transitions[node * 16 + nibble]`: the node reached after reading the nibble's four
    /// bits from `node` (bits 0–7), whether a symbol was completed (`emitsSymbol`) and which
    /// (bits 16–23), or that EOS was read (`readsEOS`). No code is shorter than 5 bits, so a
    /// nibble completes at most one symbol.
    let transitions: [UInt32]
    /// Whether decoding may end at a node: the bits read since the last symbol are at most 7,
    /// all ones (a prefix of EOS, §5.2).
    let acceptsEnd: [Bool]

    /// Flag in `transitions`: a symbol was completed.
    static let emitsSymbol: UInt32 = 1 << 8
    /// Flag in `transitions`: EOS was read.
    static let readsEOS: UInt32 = 1 << 9

    private init() {
        var children: [Int32] = [0, 0]
        var nodeCount = 1
        for (symbol, entry) in HuffmanCode.table.enumerated() {
            var node = 0
            for position in stride(from: Int(entry.length) - 1, through: 0, by: -1) {
                let bit = Int((entry.code >> UInt32(position)) & 1)
                let slot = node * 2 + bit
                if position == 0 {
                    children[slot] = Int32(-(symbol + 1))
                } else {
                    if children[slot] == 0 {
                        children[slot] = Int32(nodeCount)
                        nodeCount += 1
                        children.append(contentsOf: [0, 0])
                    }
                    node = Int(children[slot])
                }
            }
        }
        self.children = children
        let internalNodes = children.count / 2
        precondition(internalNodes <= 256, "node numbers must fit the 8 bits of a transition")
        var transitions = [UInt32](repeating: 0, count: internalNodes * 16)
        for node in 0..<internalNodes {
            for nibble in 0..<16 {
                var current = node
                var entry: UInt32 = 0
                for shift in stride(from: 3, through: 0, by: -1) {
                    let next = children[current * 2 + (nibble >> shift) & 1]
                    if next >= 0 {
                        current = Int(next)
                        continue
                    }
                    let symbol = Int(-next) - 1
                    if symbol == HuffmanCode.eos {
                        entry |= Self.readsEOS
                        break
                    }
                    entry |= Self.emitsSymbol | UInt32(symbol) << 16
                    current = 0
                }
                transitions[node * 16 + nibble] = entry | UInt32(current)
            }
        }
        var acceptsEnd = [Bool](repeating: false, count: internalNodes)
        var onesPath = 0
        for _ in 0...7 {
            acceptsEnd[onesPath] = true
            onesPath = Int(children[onesPath * 2 + 1])
        }
        self.transitions = transitions
        self.acceptsEnd = acceptsEnd
    }
}

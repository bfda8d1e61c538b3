/// The decoding tree of the Huffman code, built once from `HuffmanCode.table`.
///
/// Node `n`'s children are `children[2n]` (bit 0) and `children[2n + 1]` (bit 1): a value
/// `>= 0` is an internal node, a value `< 0` is the leaf of symbol `-value - 1`. The code is
/// complete, so every child slot is filled.
struct HuffmanTree: Sendable {
    /// The shared tree.
    static let shared = HuffmanTree()

    /// The child links, two per internal node.
    let children: [Int32]

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
    }
}

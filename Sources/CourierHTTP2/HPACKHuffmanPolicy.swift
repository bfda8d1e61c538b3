/// When an HPACK encoder uses the Huffman code for string literals.
public enum HPACKHuffmanPolicy: Sendable, Equatable {
    /// Huffman-encode a string when that is not longer than the raw octets (at equal length
    /// Huffman is used, as in RFC 7541's examples).
    case whenNotLonger
    /// Always send raw octets.
    case never
}

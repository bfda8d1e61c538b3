/// An error in an HPACK field block (RFC 7541): a bad index, a bad integer or string, broken
/// Huffman data, a table size update the decoder did not allow, or a block over a limit.
///
/// Every HPACK error is a connection error of type `COMPRESSION_ERROR` in HTTP/2 (RFC 9113
/// §4.3): the decoder's dynamic table can no longer be trusted. Compare with `==` (which
/// compares the kind only, never the detail):
///
/// ```swift
/// catch let error as HPACKError where error == .invalidIndex { … }
/// ```
public struct HPACKError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case truncated, integerOverflow, invalidIndex, stringTooLong, headerListTooLarge
        case invalidHuffmanPadding, huffmanEOS, tableSizeUpdateTooLarge, misplacedTableSizeUpdate
        case missingTableSizeUpdate
    }

    private let code: Code

    /// A short detail about this occurrence (the index, the size, the limit), or `nil`.
    public let detail: String?

    private init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// The block ends in the middle of a representation (an integer, a string, a literal).
    public static let truncated = HPACKError(.truncated)
    /// An integer does not fit the decoder's bound (more continuation bytes than any valid
    /// value needs, or a value above 2³² − 1).
    public static let integerOverflow = HPACKError(.integerOverflow)
    /// An index is 0, or points past the static and dynamic tables (§2.3.3).
    public static let invalidIndex = HPACKError(.invalidIndex)
    /// A string literal is longer than the decoder's `maxStringLength`.
    public static let stringTooLong = HPACKError(.stringTooLong)
    /// The decoded field list is larger than the decoder's `maxHeaderListSize` (each field
    /// counts its name and value octets plus 32, RFC 9113 §6.5.2).
    public static let headerListTooLarge = HPACKError(.headerListTooLarge)
    /// Huffman data ends with more than 7 bits of padding, or padding that is not the most
    /// significant bits of EOS (all ones) (§5.2).
    public static let invalidHuffmanPadding = HPACKError(.invalidHuffmanPadding)
    /// Huffman data contains the EOS symbol (§5.2).
    public static let huffmanEOS = HPACKError(.huffmanEOS)
    /// A dynamic table size update asks for more than the limit the decoder allows (the
    /// `SETTINGS_HEADER_TABLE_SIZE` it advertised) (§6.3).
    public static let tableSizeUpdateTooLarge = HPACKError(.tableSizeUpdateTooLarge)
    /// A dynamic table size update comes after a field representation in a block (§4.2).
    public static let misplacedTableSizeUpdate = HPACKError(.misplacedTableSizeUpdate)
    /// The decoder lowered its table size limit, and the first block after that does not start
    /// with a dynamic table size update at or below the new limit (§4.2).
    public static let missingTableSizeUpdate = HPACKError(.missingTableSizeUpdate)

    /// Compares the kinds of two errors; the details are ignored.
    /// - Parameters:
    ///   - lhs: An error.
    ///   - rhs: Another error.
    /// - Returns: `true` when both errors are of the same kind.
    public static func == (lhs: HPACKError, rhs: HPACKError) -> Bool {
        lhs.code == rhs.code
    }

    /// A clear sentence describing the error, followed by its detail when there is one.
    public var description: String {
        guard let detail, !detail.isEmpty else { return summary }
        return "\(summary): \(detail)"
    }

    private var summary: String {
        switch code {
        case .truncated: "The HPACK field block ends in the middle of a representation"
        case .integerOverflow: "An HPACK integer is too large"
        case .invalidIndex: "An HPACK index points outside the static and dynamic tables"
        case .stringTooLong: "An HPACK string literal exceeds the length limit"
        case .headerListTooLarge: "The decoded header list exceeds the size limit"
        case .invalidHuffmanPadding: "HPACK Huffman data ends with invalid padding"
        case .huffmanEOS: "HPACK Huffman data contains the EOS symbol"
        case .tableSizeUpdateTooLarge: "An HPACK dynamic table size update exceeds the advertised limit"
        case .misplacedTableSizeUpdate: "An HPACK dynamic table size update follows a field in the block"
        case .missingTableSizeUpdate: "The HPACK field block does not start with the required table size update"
        }
    }

    /// Returns this error with a detail attached (the kind is unchanged).
    /// - Parameter detail: Free text without peer-controlled bytes (indexes, sizes, limits).
    /// - Returns: A copy of the error carrying `detail`.
    func with(_ detail: String) -> HPACKError {
        HPACKError(code, detail: detail)
    }
}

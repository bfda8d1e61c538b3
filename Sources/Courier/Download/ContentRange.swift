import Foundation

/// A `Content-Range` field of a `206` answer to one range (RFC 9110, section 14.4):
/// `bytes first-last/complete`, where the complete length may be `*` (unknown).
struct ContentRange: Equatable, Sendable {
    /// The offset of the first byte sent.
    let first: Int64
    /// The offset of the last byte sent (inclusive).
    let last: Int64
    /// The length of the whole representation, when the server knows it.
    let completeLength: Int64?

    /// How many bytes the range covers.
    var count: Int64 { last - first + 1 }

    /// Parses the field's value.
    /// - Parameter value: e.g. `bytes 100-199/1000`; the unit is case-insensitive, as RFC 9110
    ///   says range units are.
    /// - Returns: the range, or `nil` for anything else: another unit, an unsatisfied range
    ///   (`bytes */1000`), a last byte before the first, or one at or past the complete length.
    init?(_ value: String) {
        let text = value.trimmingCharacters(in: .init(charactersIn: " \t"))
        guard text.count > 6, text.prefix(6).lowercased() == "bytes " else { return nil }
        let spec = text.dropFirst(6)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.digits(bounds[0]), let last = Self.digits(bounds[1]),
              last >= first else { return nil }
        var complete: Int64?
        if halves[1] != "*" {
            guard let length = Self.digits(halves[1]), last < length else { return nil }
            complete = length
        }
        self.first = first
        self.last = last
        self.completeLength = complete
    }

    /// A non-negative decimal of ASCII digits only (no sign, no blanks), or `nil`.
    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(text)
    }
}

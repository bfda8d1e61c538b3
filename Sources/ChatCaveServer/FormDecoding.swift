/// Reads `application/x-www-form-urlencoded` bodies: `user%5Bname%5D=alice&user%5Bpassword%5D=a+b`.
///
/// Pairs are separated by `&`, name and value by the first `=`. Both are percent-decoded with
/// `+` as a space. A `%` not followed by two hexadecimal digits, or bytes that are not UTF-8,
/// make the whole body malformed (a 400), never a crash. Bracketed names such as `user[name]`
/// are kept as they are: they are the canonical keys of ``RequestParameters``.
enum FormDecoding {
    /// The most pairs read from one body; more is malformed.
    static let maxPairs = 256

    /// Parses a form body into its pairs; the first occurrence of a name wins.
    /// - Parameter bytes: the body.
    /// - Returns: the decoded names and values.
    /// - Throws: ``APIError/badRequest(_:)`` for malformed escapes, bad UTF-8 or too many pairs.
    static func parse(_ bytes: [UInt8]) throws(APIError) -> [String: String] {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .badRequest("The form body is not valid UTF-8")
        }
        var result: [String: String] = [:]
        var count = 0
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            count += 1
            guard count <= maxPairs else { throw .badRequest("The form body has more than \(maxPairs) fields") }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try decodeComponent(parts[0])
            let value = parts.count > 1 ? try decodeComponent(parts[1]) : ""
            guard !name.isEmpty else { continue }
            if result[name] == nil { result[name] = value }
        }
        return result
    }

    /// Percent-decodes one name or value, with `+` as a space.
    /// - Parameter component: the encoded text.
    /// - Returns: the decoded text.
    /// - Throws: ``APIError/badRequest(_:)`` for a malformed escape or bytes that are not UTF-8.
    static func decodeComponent(_ component: Substring) throws(APIError) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(component.utf8.count)
        var iterator = component.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                output.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    throw .badRequest("The form body has a malformed percent escape")
                }
                output.append(high << 4 | low)
            default:
                output.append(byte)
            }
        }
        guard let decoded = String(validating: output, as: UTF8.self) else {
            throw .badRequest("The form body does not decode to valid UTF-8")
        }
        return decoded
    }

    /// The value of one hexadecimal digit, or `nil`.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The field rules of RFC 9113 §8.2 that make a received message malformed, checked on every
/// decoded response head and trailer section before it is reported.
enum HTTP2FieldValidation {
    /// Connection-specific fields, which HTTP/2 forbids (§8.2.2).
    private static let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]

    /// Why `fields` are malformed, or `nil` when they are well-formed.
    ///
    /// Checks: names are non-empty lowercase tokens (a leading `:` only for pseudo-header
    /// fields, which are only allowed where `allowPseudo` says); values contain no NUL, CR or
    /// LF and neither start nor end with a space or tab; no connection-specific field; `te`
    /// only as `trailers`.
    /// - Parameters:
    ///   - fields: The decoded fields, in order.
    ///   - pseudoPrefix: How many leading fields may be pseudo-header fields.
    /// - Returns: A fixed sentence, or `nil`.
    static func problem(in fields: [HPACKHeaderField], pseudoPrefix: Int) -> String? {
        for (position, field) in fields.enumerated() {
            var isPseudo = false
            let nameIsToken = bytes(of: field.name) { name in
                var octets = name[...]
                if octets.first == UInt8(ascii: ":") {
                    isPseudo = true
                    octets = octets.dropFirst()
                }
                return !octets.isEmpty && octets.allSatisfy(isLowercaseTokenOctet)
            }
            if isPseudo, position >= pseudoPrefix { return "a pseudo-header field is misplaced" }
            guard nameIsToken else { return "a field name is not a lowercase token" }
            guard bytes(of: field.value, isValidValue) else { return "a field value contains NUL, CR or LF, or surrounding whitespace" }
            // Only names of the forbidden ones' lengths are looked up.
            switch field.name.utf8.count {
            case 2:
                if field.name == "te", field.value != "trailers" { return "a te field is not \"trailers\"" }
            case 7, 10, 16, 17:
                if connectionSpecific.contains(field.name) { return "a connection-specific field is present" }
            default:
                break
            }
        }
        return nil
    }

    /// `check` applied to the UTF-8 of `text`, in place when the string is stored contiguously.
    private static func bytes(of text: String, _ check: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        if let result = text.utf8.withContiguousStorageIfAvailable(check) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(check)
    }

    /// Token octets (RFC 9110 §5.6.2) without uppercase letters.
    private static func isLowercaseTokenOctet(_ octet: UInt8) -> Bool {
        switch octet {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func isValidValue(_ octets: UnsafeBufferPointer<UInt8>) -> Bool {
        if let first = octets.first, first == 0x20 || first == 0x09 { return false }
        if let last = octets.last, last == 0x20 || last == 0x09 { return false }
        return !octets.contains { $0 == 0 || $0 == 0x0a || $0 == 0x0d }
    }
}

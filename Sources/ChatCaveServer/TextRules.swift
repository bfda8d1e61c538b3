import Foundation

/// What the server accepts as a user name, a room name or a message text.
///
/// Nothing it stores may drive another user's terminal or pose as someone else:
/// - control characters (C0, DEL and C1: ESC, BEL, CR, CSI…) are refused everywhere, except
///   `\n` and `\t` in message text;
/// - format characters (Unicode category Cf: the bidi controls U+202A–U+202E, U+2066–U+2069,
///   U+200E, U+200F, U+061C, zero-width characters, tags…) are refused everywhere, except the
///   zero-width joiner and non-joiner (U+200D, U+200C) in message text, which emoji sequences
///   and several scripts need;
/// - line and paragraph separators (U+2028, U+2029) are refused everywhere.
///
/// Names are NFKC-normalised (so `ﬁ` and `fi` are one name) and unique case-insensitively
/// (see ``nameKey(_:)``). Every refusal is a 406 naming the first refused character.
enum TextRules {
    /// The longest user or room name, in characters.
    static let maxNameLength = 64
    /// The longest message text, in characters.
    static let maxTextLength = 4_000

    /// Validates a user or room name and returns the form to store: NFKC-normalised, without
    /// leading or trailing spaces.
    /// - Parameters:
    ///   - raw: the name as sent.
    ///   - what: `"User name"` or `"Room name"`, for the error text.
    /// - Throws: 406 when empty, too long or holding a refused character.
    static func name(_ raw: String?, what: String) throws(APIError) -> String {
        let normalized = (raw ?? "").precomposedStringWithCompatibilityMapping
        try refuseSpecialCharacters(in: normalized, what: what, allowed: [])  // before trimming, which drops some of them
        let name = normalized.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { throw .rejected("\(what) must not be empty") }
        guard name.count <= maxNameLength else { throw .rejected("\(what) must be at most \(maxNameLength) characters") }
        return name
    }

    /// The key under which names are unique: the NFKC-normalised, lower-cased name, so that
    /// `Alice`, `alice` and `ａｌｉｃｅ` are one name.
    static func nameKey(_ name: String) -> String {
        name.precomposedStringWithCompatibilityMapping.lowercased().precomposedStringWithCompatibilityMapping
    }

    /// Validates a message text (stored as sent).
    /// - Throws: 406 when missing, blank, too long or holding a refused character.
    static func messageText(_ text: String?) throws(APIError) -> String {
        guard let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw .rejected("Message text must not be empty")
        }
        guard text.count <= maxTextLength else { throw .rejected("Message text must be at most \(maxTextLength) characters") }
        try refuseSpecialCharacters(in: text, what: "Message text", allowed: ["\n", "\t", "\u{200C}", "\u{200D}"])
        return text
    }

    private static func refuseSpecialCharacters(in text: String, what: String, allowed: Set<Unicode.Scalar>) throws(APIError) {
        let refused = text.unicodeScalars.first { scalar in
            guard !allowed.contains(scalar) else { return false }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator: return true
            default: return false
            }
        }
        guard let refused else { return }
        let code = String(refused.value, radix: 16, uppercase: true)
        throw .rejected("\(what) must not contain control or format characters (U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code))")
    }
}

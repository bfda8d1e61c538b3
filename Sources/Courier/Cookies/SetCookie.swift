import Foundation

/// One `Set-Cookie` field parsed by RFC 6265 §5.2, before the jar decides whether to keep it.
struct SetCookie: Equatable, Sendable {
    /// The longest name plus value kept, in bytes (RFC 6265 §6.1 asks for at least 4096); a
    /// longer cookie is ignored whole.
    static let maximumNameValueSize = 4_096
    /// The longest attribute value read (RFC 6265bis); a longer attribute is ignored.
    static let maximumAttributeValueSize = 1_024

    var name: String
    var value: String
    /// `Expires`, when it parsed.
    var expires: Date?
    /// `Max-Age` in seconds, when it parsed; it wins over `Expires`.
    var maxAge: Int?
    /// `Domain`, lowercased, without a leading dot; `nil` when absent or empty.
    var domain: String?
    /// `Path`, when it was given and starts with `/`.
    var path: String?
    var isSecure = false
    var isHTTPOnly = false
    var sameSite: Cookie.SameSite?

    /// Parses a `Set-Cookie` field value; `nil` when RFC 6265 says to ignore it (no `=` in the
    /// name-value pair, an empty name), when it holds control characters, or when it is too long.
    init?(_ line: String) {
        let pieces = line.split(separator: ";", omittingEmptySubsequences: false)
        guard let pair = pieces.first, let equals = pair.firstIndex(of: "=") else { return nil }
        let name = Self.trimmed(pair[..<equals])
        let value = Self.trimmed(pair[pair.index(after: equals)...])
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= Self.maximumNameValueSize,
              !Self.hasControlCharacter(name), !Self.hasControlCharacter(value) else { return nil }
        self.name = name
        self.value = value
        for piece in pieces.dropFirst() {
            let attributeName: String
            let attributeValue: String
            if let equals = piece.firstIndex(of: "=") {
                attributeName = Self.trimmed(piece[..<equals])
                attributeValue = Self.trimmed(piece[piece.index(after: equals)...])
            } else {
                attributeName = Self.trimmed(piece[...])
                attributeValue = ""
            }
            guard attributeValue.utf8.count <= Self.maximumAttributeValueSize else { continue }
            apply(attributeName.lowercased(), attributeValue)
        }
    }

    /// Records one attribute (§5.2.1 to §5.2.6, and `SameSite` from RFC 6265bis); the last of
    /// each name wins, and unknown or malformed attributes are ignored.
    private mutating func apply(_ attribute: String, _ value: String) {
        switch attribute {
        case "expires":
            if let date = CookieDate.parse(value) { expires = date }
        case "max-age":
            guard let first = value.first, first == "-" || first.isASCII && first.isNumber,
                  value.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }) else { return }
            // A huge number of seconds is clamped rather than refused: it means "a long time".
            maxAge = Int(value) ?? (first == "-" ? Int.min : Int.max)
        case "domain":
            guard !value.isEmpty else { return }
            let trimmed = value.hasPrefix(".") ? String(value.dropFirst()) : value
            domain = trimmed.isEmpty ? nil : trimmed.lowercased()
        case "path":
            path = value.hasPrefix("/") ? value : nil
        case "secure":
            isSecure = true
        case "httponly":
            isHTTPOnly = true
        case "samesite":
            sameSite = Cookie.SameSite(rawValue: value.lowercased())
        default:
            break
        }
    }

    /// The expiry this cookie asks for at `now`: `Max-Age` first (zero or less: already
    /// expired), then `Expires`; `nil` for a session cookie.
    func expiry(now: Date) -> Date? {
        if let maxAge {
            guard maxAge > 0 else { return .distantPast }
            let limit = Date.distantFuture.timeIntervalSince(now)
            return now.addingTimeInterval(min(TimeInterval(maxAge), limit))
        }
        return expires
    }

    /// The cookies of one field value that Foundation's URLSession joined from several
    /// `Set-Cookie` fields, separated by commas (``URLSessionTransport`` alone calls this: the
    /// native transport keeps each field, and a field is one cookie). A comma starts a new
    /// cookie when what follows it is a name and `=` (no space, `;` or `,` before the `=`); the
    /// comma in an `Expires` date (`Wed, 09 Jun 2021 …`) is not followed by one, and a cookie's
    /// name and value cannot hold a comma (RFC 6265 §4.1.1), so a field holding one cookie is
    /// never split.
    static func split(_ value: String) -> [String] {
        var pieces: [String] = []
        var current = Substring(value)
        var searchFrom = current.startIndex
        while let comma = current[searchFrom...].firstIndex(of: ",") {
            let rest = current[current.index(after: comma)...].drop { $0 == " " || $0 == "\t" }
            let name = rest.prefix { $0 != "=" && $0 != ";" && $0 != "," && $0 != " " }
            if !name.isEmpty, rest.dropFirst(name.count).first == "=" {
                pieces.append(String(current[..<comma]))
                current = rest
                searchFrom = current.startIndex
            } else {
                searchFrom = current.index(after: comma)
            }
        }
        pieces.append(String(current))
        return pieces
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    /// Control characters other than tab (RFC 6265bis §5.6 ignores such cookies): they could end
    /// a header line when the cookie is sent back.
    private static func hasControlCharacter(_ text: String) -> Bool {
        text.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
    }
}

/// An ordered list of HTTP header fields with case-insensitive names.
///
/// Repeated fields are kept in the order they were added, as HTTP allows
/// (`Set-Cookie`, `Vary`, …). Lookups compare names without regard to ASCII case.
/// The `description` redacts credentials, so headers can be logged safely.
public struct HTTPHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field: a name and a value. Its `description` and `debugDescription` are
    /// `Name: value` with a credential's value replaced by `<redacted>` (see ``isSensitive(_:)``).
    public struct Field: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The field name, as it was given (case is preserved on the wire).
        public var name: String
        /// The field value.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// `Name: value`, or `Name: <redacted>` when the field carries a credential.
        public var description: String {
            "\(name): \(HTTPHeaders.isSensitive(name) ? "<redacted>" : value)"
        }

        /// The same as ``description``: the value of a credential is never shown.
        public var debugDescription: String { description }
    }

    /// The fields, in order.
    public private(set) var fields: [Field]

    /// Creates headers from fields, keeping their order.
    /// - Parameter fields: the fields; empty by default.
    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    /// Creates headers from `(name, value)` pairs, keeping their order.
    public init(_ pairs: [(String, String)]) {
        self.fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Creates headers from a literal such as `["Accept": "application/json"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of fields, repeated ones counted separately.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The first value for `name`, or `nil`. Setting a value replaces every field
    /// with that name; setting `nil` removes them.
    public subscript(name: String) -> String? {
        get { fields.first { Self.sameName($0.name, name) }?.value }
        set {
            if let newValue { set(newValue, for: name) } else { remove(name) }
        }
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        fields.lazy.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.sameName($0.name, name) }
    }

    /// Appends a field, keeping any existing ones with the same name.
    public mutating func add(_ value: String, for name: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` with one field holding `value`,
    /// at the position of the first one (or at the end).
    public mutating func set(_ value: String, for name: String) {
        if let index = fields.firstIndex(where: { Self.sameName($0.name, name) }) {
            fields[index].value = value
            var next = index + 1
            while next < fields.count {
                if Self.sameName(fields[next].name, name) { fields.remove(at: next) } else { next += 1 }
            }
        } else {
            fields.append(Field(name: name, value: value))
        }
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    /// Adds every field of `other`, replacing fields of the same names.
    public mutating func merge(_ other: HTTPHeaders) {
        if !fields.isEmpty && !other.fields.isEmpty {
            fields.removeAll { field in other.fields.contains { Self.sameName($0.name, field.name) } }
        }
        fields.append(contentsOf: other.fields)
    }

    /// The fields as `Name: value` lines, with credentials replaced by `<redacted>`.
    public var description: String {
        fields.map(\.description).joined(separator: "\n")
    }

    /// Whether two header lists hold the same fields in the same order (names compared without case).
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { sameName($0.name, $1.name) && $0.value == $1.value }
    }

    /// Whether a header of this name carries a credential and must never be logged or follow a
    /// redirect to another origin: its lowercased name contains one of ``secretWords`` (so
    /// `Authorization`, `Cookie`, `X-Magic-Auth`, `Api-Key`, `X-Session-Id`, `X-Password`, …),
    /// except the standard fields whose names merely contain such a word (``publicFieldNames``:
    /// `Idempotency-Key`, `Sec-WebSocket-Key`, …). A request may name more such fields: see
    /// ``TransportRequest/isCredential(_:)``.
    public static func isSensitive(_ name: String) -> Bool {
        let lower = name.lowercased()
        return secretWords.contains { lower.contains($0) } && !publicFieldNames.contains(lower)
    }

    /// Standard fields that carry no secret although their names contain a secret word.
    static let publicFieldNames: Set<String> = [
        "idempotency-key", "sec-websocket-key", "sec-websocket-accept", "www-authenticate",
        "proxy-authenticate",
    ]

    /// The words that mark a header or query parameter name as a secret when the name contains one.
    static let secretWords = ["token", "key", "password", "passwd", "secret", "auth", "signature", "session",
                              "credential", "cookie"]

    /// ASCII case-insensitive comparison of two field names, without allocating.
    static func sameName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }  // O(1) for native strings
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case let (x?, y?):
                if x == y { continue }
                if x | 0x20 == y | 0x20, (x | 0x20) >= 0x61, (x | 0x20) <= 0x7A { continue }
                return false
            default: return false
            }
        }
    }
}

extension HTTPHeaders: Sequence {
    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}

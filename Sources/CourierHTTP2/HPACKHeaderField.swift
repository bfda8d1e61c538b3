/// One field of an HTTP/2 field block, as HPACK encodes and decodes it.
///
/// HTTP/2 field names are lowercase (RFC 9113 §8.2.1); the encoder sends `name` as given, and
/// the decoder returns what the peer sent. Octets that are not valid UTF-8 are decoded with
/// replacement characters, so such a field does not round-trip byte for byte.
public struct HPACKHeaderField: Sendable, Equatable, Hashable {
    /// The field name, e.g. `:status` or `content-type`.
    public var name: String
    /// The field value.
    public var value: String
    /// How the encoder may represent this field; the decoder reports the representation the
    /// field arrived in (`.never` for never-indexed literals, `.withoutIndexing` for literals
    /// without indexing, `.automatic` otherwise). Ignored by `==`.
    public var indexing: HPACKIndexing

    /// Creates a field.
    /// - Parameters:
    ///   - name: The field name (lowercase for HTTP/2).
    ///   - value: The field value.
    ///   - indexing: How the encoder may represent the field (`.never` for a secret; the
    ///     encoder also uses `.never` for the names in its `neverIndexedNames`).
    public init(name: String, value: String, indexing: HPACKIndexing = .automatic) {
        self.name = name
        self.value = value
        self.indexing = indexing
    }

    /// The size the dynamic table charges for this field: its name and value octets plus 32
    /// (§4.1); also the size `SETTINGS_MAX_HEADER_LIST_SIZE` counts (RFC 9113 §6.5.2).
    public var size: Int { name.utf8.count + value.utf8.count + 32 }

    /// Compares names and values; `indexing` is ignored.
    /// - Parameters:
    ///   - lhs: A field.
    ///   - rhs: Another field.
    /// - Returns: `true` when names and values are equal.
    public static func == (lhs: HPACKHeaderField, rhs: HPACKHeaderField) -> Bool {
        lhs.name == rhs.name && lhs.value == rhs.value
    }

    /// Hashes the name and value (consistently with `==`).
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(value)
    }
}

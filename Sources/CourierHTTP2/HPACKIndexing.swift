/// How an HPACK encoder may represent one field (RFC 7541 §6.2).
public enum HPACKIndexing: Sendable, Equatable {
    /// Use the table: an index when an entry matches, else a literal that is added to the
    /// dynamic table (unless the field is larger than the table, or its name is one of the
    /// encoder's `neverIndexedNames`).
    case automatic
    /// A literal that is not added to the dynamic table (§6.2.2); intermediaries may index it.
    case withoutIndexing
    /// A literal never-indexed representation (§6.2.3): neither this hop nor any intermediary
    /// may put the field in a dynamic table. For credentials and other secrets.
    case never
}

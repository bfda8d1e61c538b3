/// The HPACK static table (RFC 7541 Appendix A): 61 fixed entries, indexes 1 to 61.
enum HPACKStaticTable {
    /// The entries in index order; `entries[0]` is index 1.
    static let entries: [(name: String, value: String)] = [
        (":authority", ""),
        (":method", "GET"),
        (":method", "POST"),
        (":path", "/"),
        (":path", "/index.html"),
        (":scheme", "http"),
        (":scheme", "https"),
        (":status", "200"),
        (":status", "204"),
        (":status", "206"),
        (":status", "304"),
        (":status", "400"),
        (":status", "404"),
        (":status", "500"),
        ("accept-charset", ""),
        ("accept-encoding", "gzip, deflate"),
        ("accept-language", ""),
        ("accept-ranges", ""),
        ("accept", ""),
        ("access-control-allow-origin", ""),
        ("age", ""),
        ("allow", ""),
        ("authorization", ""),
        ("cache-control", ""),
        ("content-disposition", ""),
        ("content-encoding", ""),
        ("content-language", ""),
        ("content-length", ""),
        ("content-location", ""),
        ("content-range", ""),
        ("content-type", ""),
        ("cookie", ""),
        ("date", ""),
        ("etag", ""),
        ("expect", ""),
        ("expires", ""),
        ("from", ""),
        ("host", ""),
        ("if-match", ""),
        ("if-modified-since", ""),
        ("if-none-match", ""),
        ("if-range", ""),
        ("if-unmodified-since", ""),
        ("last-modified", ""),
        ("link", ""),
        ("location", ""),
        ("max-forwards", ""),
        ("proxy-authenticate", ""),
        ("proxy-authorization", ""),
        ("range", ""),
        ("referer", ""),
        ("refresh", ""),
        ("retry-after", ""),
        ("server", ""),
        ("set-cookie", ""),
        ("strict-transport-security", ""),
        ("transfer-encoding", ""),
        ("user-agent", ""),
        ("vary", ""),
        ("via", ""),
        ("www-authenticate", ""),
    ]

    /// The number of entries (61).
    static var count: Int { entries.count }

    /// For each name: the lowest index of an entry with it, and the value and index of every
    /// entry with it (at most seven, so a value is compared, not hashed).
    private static let byName: [String: (lowest: Int, entries: [(value: String, index: Int)])] = {
        var map: [String: (lowest: Int, entries: [(value: String, index: Int)])] = [:]
        for (offset, entry) in entries.enumerated() {
            map[entry.name, default: (offset + 1, [])].entries.append((entry.value, offset + 1))
        }
        return map
    }()

    /// Looks `name` up once: the index of the entry whose value matches too, and the lowest
    /// index of an entry with the name.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    /// - Returns: The indexes (1...61), `nil` where there is none.
    static func lookup(name: String, value: String) -> (field: Int?, name: Int?) {
        guard let known = byName[name] else { return (nil, nil) }
        return (known.entries.first { $0.value == value }?.index, known.lowest)
    }
}

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

    /// The lowest index of each name.
    private static let nameIndex: [String: Int] = {
        var map: [String: Int] = [:]
        for (offset, entry) in entries.enumerated() where map[entry.name] == nil {
            map[entry.name] = offset + 1
        }
        return map
    }()

    /// The index of each entry, keyed by name and value.
    private static let fieldIndex: [String: [String: Int]] = {
        var map: [String: [String: Int]] = [:]
        for (offset, entry) in entries.enumerated() {
            map[entry.name, default: [:]][entry.value] = offset + 1
        }
        return map
    }()

    /// The index of the entry whose name and value both match, if any.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    /// - Returns: The index (1...61), or `nil`.
    static func index(name: String, value: String) -> Int? {
        fieldIndex[name]?[value]
    }

    /// The lowest index of an entry with this name, if any.
    /// - Parameter name: The field name.
    /// - Returns: The index (1...61), or `nil`.
    static func index(name: String) -> Int? {
        nameIndex[name]
    }
}

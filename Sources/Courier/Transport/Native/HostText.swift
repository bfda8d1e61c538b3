/// How a host is written beside a port, and read back: an IPv6 literal goes in brackets.
enum HostText {
    /// `host` as written before `:port`: an IPv6 literal (the only host with a colon) in
    /// brackets, any other host as it is. Looks at bytes only (no Foundation search).
    static func bracketed(_ host: String) -> String {
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
    }

    /// `name` without the brackets of an IPv6 literal (`[::1]` → `::1`); any other name as it is.
    static func unbracketed(_ name: Substring) -> Substring {
        name.hasPrefix("[") && name.hasSuffix("]") ? name.dropFirst().dropLast() : name
    }
}

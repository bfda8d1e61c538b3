import CourierWire

/// The hosts that bypass the proxy, as `NO_PROXY` lists them, matched by curl's rules.
///
/// The text is a list of patterns separated by commas, blanks (spaces and tabs), or both, as
/// curl 7.88 reads it. A host bypasses the proxy when:
/// - the whole text is `*` (only on its own: `*` inside a list matches nothing);
/// - the host is a name and a pattern equals it, or is a domain suffix of it at a dot boundary:
///   `example.com` and `.example.com` both match `example.com` and `www.example.com`, never
///   `notexample.com`. Case is ignored, and so is one trailing dot on either side;
/// - the host is an IPv4 or IPv6 address and a pattern is the same address, or a CIDR range
///   (`10.0.0.0/8`, `fd00::/8`) holding it. A pattern in brackets (`[::1]`) matches nothing, as
///   in curl.
///
/// Not supported, as in curl: ports (`example.com:8080` matches nothing), wildcards inside a
/// pattern (`*.example.com` matches nothing) and matching a name against an address pattern
/// (no name is resolved).
public struct NoProxyList: Sendable, Hashable {
    /// The text as given.
    public let text: String

    /// A list from `NO_PROXY`'s text.
    /// - Parameter text: comma-separated patterns, or `*`. Default: empty (nothing bypasses).
    public init(_ text: String = "") {
        self.text = text
    }

    /// Whether `host` bypasses the proxy.
    /// - Parameter host: a host name or address; an IPv6 address with or without brackets.
    public func matches(host: String) -> Bool {
        if text.isEmpty || host.isEmpty { return false }
        if text == "*" { return true }
        var name = HostText.unbracketed(Substring(host.lowercased()))
        let address = SocketAddress(ip: String(name), port: 0)
        if address == nil, name.hasSuffix(".") { name = name.dropLast() }
        for pattern in patterns() {
            if let address {
                if Self.addressMatches(address, pattern: pattern) { return true }
            } else if Self.nameMatches(name, pattern: pattern) {
                return true
            }
        }
        return false
    }

    /// The patterns: the text split at commas and blanks.
    private func patterns() -> [Substring] {
        Substring(text).split { $0 == "," || $0 == " " || $0 == "\t" }
    }

    /// A name against a name pattern: equal, or a suffix at a dot boundary.
    private static func nameMatches(_ name: Substring, pattern: Substring) -> Bool {
        var pattern = Substring(pattern.lowercased())
        if pattern.hasSuffix(".") { pattern = pattern.dropLast() }
        if pattern.hasPrefix(".") { pattern = pattern.dropFirst() }
        if pattern.isEmpty { return false }
        if pattern == name { return true }
        return name.hasSuffix("." + pattern)
    }

    /// An address against an address or CIDR pattern of the same family.
    private static func addressMatches(_ address: SocketAddress, pattern: Substring) -> Bool {
        var ip = pattern
        var bits = 0
        if let slash = pattern.firstIndex(of: "/") {
            ip = pattern[..<slash]
            // Like C's atoi, as curl reads it: the leading digits, 0 without any.
            let digits = pattern[pattern.index(after: slash)...].prefix { $0.isASCII && $0.isNumber }.prefix(4)
            bits = Int(digits) ?? 0
        }
        guard !ip.hasPrefix("["), let network = SocketAddress(ip: String(ip), port: 0),
              network.family == address.family else { return false }
        let width = network.addressBytes.count * 8
        let prefix = bits == 0 ? width : bits
        guard prefix <= width else { return false }
        for index in 0..<network.addressBytes.count {
            let remaining = prefix - index * 8
            if remaining <= 0 { break }
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if network.addressBytes[index] & mask != address.addressBytes[index] & mask { return false }
        }
        return true
    }
}

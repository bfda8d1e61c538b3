/// The key under which a client address is counted by the sign-in and sign-up throttles.
enum PeerKey {
    /// The key of a client address: an IPv4 address; for an IPv4-mapped IPv6 address
    /// (`::ffff:a.b.c.d`, how a dual-stack listener sees IPv4 clients) the IPv4 address it
    /// maps; otherwise the /64 prefix of an IPv6 address (one subscriber usually holds a
    /// whole /64); `"peer:unknown"` without an address.
    static func of(addressBytes: [UInt8]?) -> String {
        guard let bytes = addressBytes else { return "peer:unknown" }
        let prefix: ArraySlice<UInt8>
        if bytes.count == 4 {
            prefix = bytes[...]
        } else if bytes.count == 16, bytes.prefix(12).elementsEqual(Self.mappedIPv4Prefix) {
            prefix = bytes.suffix(4)
        } else {
            prefix = bytes.prefix(8)
        }
        return "peer:" + prefix.map(String.init).joined(separator: ".")
    }

    /// The first 12 bytes of an IPv4-mapped IPv6 address, `::ffff:0:0/96`.
    static let mappedIPv4Prefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
}

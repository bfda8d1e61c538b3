import CourierWire

extension NativeTransport {
    /// Addresses to connect to for one host and port instead of asking DNS, like curl's
    /// `--resolve` or AsyncHTTPClient's `dnsOverride`: for pinned deployments, and for tests.
    ///
    /// Only where the transport connects changes: the `Host` field, TLS server name (SNI) and
    /// certificate host name checks still use the URL's host, and so does the pool (connections
    /// are shared per scheme, URL host and port). The addresses race as DNS answers would
    /// (Happy Eyeballs, see ``Configuration/connectionAttemptDelay``).
    ///
    /// ```swift
    /// var configuration = NativeTransport.Configuration()
    /// configuration.addressOverrides = [
    ///     try .init(host: "api.example.com", port: 443, addresses: ["10.0.0.7", "[fd00::7]:8443"]),
    /// ]
    /// ```
    public struct AddressOverride: Sendable, Hashable {
        /// The URL host this override applies to, lower-cased (IPv6 literals without brackets).
        public let host: String
        /// The URL port this override applies to (the scheme's default port when the URL has none).
        public let port: Int
        /// The addresses connected to, in the order given (before the families are interleaved),
        /// as `"127.0.0.1:8080"` or `"[::1]:8080"`.
        public var addresses: [String] { socketAddresses.map(\.description) }
        /// The parsed addresses.
        let socketAddresses: [SocketAddress]

        /// Creates an override after checking every address.
        ///
        /// - Parameters:
        ///   - host: The host as written in URLs, e.g. `"api.example.com"`; any case.
        ///   - port: The port in URLs, 1...65535 (443 for an `https` URL without a port).
        ///   - addresses: At least one numeric IPv4 or IPv6 address, optionally with its own port:
        ///     `"10.0.0.7"`, `"10.0.0.7:8443"`, `"fd00::7"`, `"[fd00::7]"`, `"[fd00::7]:8443"`.
        ///     An address without a port uses `port`.
        /// - Throws: ``InvalidAddressOverride`` naming the host, port or address that cannot be used.
        public init(host: String, port: Int, addresses: [String]) throws(InvalidAddressOverride) {
            let name = HostText.unbracketed(Substring(host.lowercased()))
            guard !name.isEmpty else { throw InvalidAddressOverride(entry: host, reason: "the host is empty") }
            guard (1...65535).contains(port) else {
                throw InvalidAddressOverride(entry: "\(host):\(port)", reason: "the port is not 1...65535")
            }
            guard !addresses.isEmpty else {
                throw InvalidAddressOverride(entry: "\(host):\(port)", reason: "no address is given")
            }
            var parsed: [SocketAddress] = []
            for text in addresses {
                guard let address = Self.parse(text, defaultPort: port) else {
                    throw InvalidAddressOverride(
                        entry: text, reason: "not a numeric IPv4 or IPv6 address with an optional port 1...65535")
                }
                parsed.append(address)
            }
            self.host = String(name)
            self.port = port
            self.socketAddresses = parsed
        }

        /// `"10.0.0.7"`, `"10.0.0.7:80"`, `"::1"`, `"[::1]"` or `"[::1]:80"`.
        private static func parse(_ text: String, defaultPort: Int) -> SocketAddress? {
            var literal = Substring(text)
            var portText: Substring?
            if literal.hasPrefix("["), let close = literal.firstIndex(of: "]") {
                let rest = literal[literal.index(after: close)...]
                if rest.hasPrefix(":") { portText = rest.dropFirst() } else if !rest.isEmpty { return nil }
                literal = literal[literal.index(after: literal.startIndex)..<close]
            } else if literal.filter({ $0 == ":" }).count == 1, let colon = literal.firstIndex(of: ":") {
                portText = literal[literal.index(after: colon)...]
                literal = literal[..<colon]
            }
            var port = defaultPort
            if let portText {
                guard portText.count <= 5, let value = Int(portText), (1...65535).contains(value) else { return nil }
                port = value
            }
            return SocketAddress(ip: String(literal), port: port)
        }
    }

    /// An ``AddressOverride`` that cannot be used: an empty host, a port outside 1...65535, no
    /// address, or an address that is not a numeric IP literal.
    public struct InvalidAddressOverride: Error, Sendable, Hashable, CustomStringConvertible {
        /// The text that was refused.
        public let entry: String
        /// Why it was refused.
        public let reason: String

        /// `"invalid address override 'db.local': not a numeric IPv4 or IPv6 address …"`.
        public var description: String { "invalid address override '\(entry)': \(reason)" }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An IPv4 or IPv6 address with a port, as used by `bind`, `connect` and `accept`.
///
/// The value is stored in a platform-neutral form (family, address bytes, port,
/// IPv6 scope) and converted to a `sockaddr_in` / `sockaddr_in6` on demand, so it
/// is cheap to copy, `Hashable` and `Sendable`.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address family.
    public enum Family: Sendable, Hashable {
        /// IPv4 (`AF_INET`).
        case ipv4
        /// IPv6 (`AF_INET6`).
        case ipv6
    }

    /// The address family.
    public let family: Family
    /// The raw address bytes in network order: 4 for IPv4, 16 for IPv6.
    public let addressBytes: [UInt8]
    /// The port number (0...65535).
    public let port: Int
    /// The IPv6 scope (interface index); 0 for IPv4 and for global addresses.
    public let scopeID: UInt32

    /// Parses a numeric IP literal (`"127.0.0.1"`, `"::1"`, `"[::1]"`).
    ///
    /// Names such as `localhost` are not resolved here; use ``Resolver`` for them.
    ///
    /// - Parameters:
    ///   - ip: An IPv4 dotted quad or an IPv6 literal, with or without brackets.
    ///   - port: The port, 0...65535.
    /// - Returns: `nil` if `ip` is not a numeric literal or `port` is out of range.
    public init?(ip: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var literal = Substring(ip)
        if literal.hasPrefix("["), literal.hasSuffix("]") {
            literal = literal.dropFirst().dropLast()
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(literal), &v4) == 1 {
            self.family = .ipv4
            self.addressBytes = withUnsafeBytes(of: &v4) { Array($0) }
            self.port = port
            self.scopeID = 0
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, String(literal), &v6) == 1 {
            self.family = .ipv6
            self.addressBytes = withUnsafeBytes(of: &v6) { Array($0) }
            self.port = port
            self.scopeID = 0
            return
        }
        return nil
    }

    /// Reads an address from a `sockaddr` filled in by the kernel or `getaddrinfo`.
    ///
    /// - Parameters:
    ///   - address: The socket address.
    ///   - length: Its length in bytes.
    /// - Returns: `nil` for families other than IPv4 and IPv6, or a too-short length.
    public init?(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            guard Int(length) >= MemoryLayout<sockaddr_in>.size else { return nil }
            let v4 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self)
            var raw = v4.sin_addr
            self.family = .ipv4
            self.addressBytes = withUnsafeBytes(of: &raw) { Array($0) }
            self.port = Int(UInt16(bigEndian: v4.sin_port))
            self.scopeID = 0
        case AF_INET6:
            guard Int(length) >= MemoryLayout<sockaddr_in6>.size else { return nil }
            let v6 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self)
            var raw = v6.sin6_addr
            self.family = .ipv6
            self.addressBytes = withUnsafeBytes(of: &raw) { Array($0) }
            self.port = Int(UInt16(bigEndian: v6.sin6_port))
            self.scopeID = v6.sin6_scope_id
        default:
            return nil
        }
    }

    /// Reads an address from a `sockaddr_storage`.
    ///
    /// - Parameters:
    ///   - storage: The storage filled in by `accept`, `getsockname` or `getpeername`.
    ///   - length: The length the kernel reported.
    /// - Returns: `nil` for families other than IPv4 and IPv6.
    public init?(storage: sockaddr_storage, length: socklen_t) {
        var copy = storage
        let parsed = withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The same address with another port.
    ///
    /// - Parameter port: The new port, 0...65535 (values outside are clamped).
    /// - Returns: The address with `port`.
    public func withPort(_ port: Int) -> SocketAddress {
        SocketAddress(family: family, addressBytes: addressBytes, port: min(max(port, 0), 65535), scopeID: scopeID)
    }

    private init(family: Family, addressBytes: [UInt8], port: Int, scopeID: UInt32) {
        self.family = family
        self.addressBytes = addressBytes
        self.port = port
        self.scopeID = scopeID
    }

    /// The numeric host text: `"127.0.0.1"` or `"::1"` (no brackets).
    public var host: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        let ok = addressBytes.withUnsafeBytes { bytes in
            buffer.withUnsafeMutableBufferPointer { out in
                inet_ntop(domain, bytes.baseAddress, out.baseAddress, socklen_t(out.count)) != nil
            }
        }
        guard ok else { return "?" }
        let text = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: text, as: UTF8.self)
    }

    /// `"127.0.0.1:8080"` or `"[::1]:8080"`.
    public var description: String {
        family == .ipv4 ? "\(host):\(port)" : "[\(host)]:\(port)"
    }

    /// Whether this is a loopback address (127.0.0.0/8 or ::1).
    public var isLoopback: Bool {
        switch family {
        case .ipv4: return addressBytes.first == 127
        case .ipv6: return addressBytes == [UInt8](repeating: 0, count: 15) + [1]
        }
    }

    /// Calls `body` with this address as a `sockaddr` and its length.
    ///
    /// - Parameter body: Receives the pointer (valid only during the call) and the length.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withSockAddr<Result>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result
    ) rethrows -> Result {
        switch family {
        case .ipv4:
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
            withUnsafeMutableBytes(of: &v4.sin_addr) { raw in
                for (index, byte) in addressBytes.prefix(raw.count).enumerated() { raw[index] = byte }
            }
            return try withUnsafePointer(to: &v4) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6:
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = UInt16(truncatingIfNeeded: port).bigEndian
            v6.sin6_scope_id = scopeID
            withUnsafeMutableBytes(of: &v6.sin6_addr) { raw in
                for (index, byte) in addressBytes.prefix(raw.count).enumerated() { raw[index] = byte }
            }
            return try withUnsafePointer(to: &v6) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch

/// Resolves host names to socket addresses with `getaddrinfo`, off the event loops.
///
/// `getaddrinfo` blocks (it may read files and query DNS), so it never runs on an
/// ``EventLoop`` thread: lookups run on a dispatch queue and their result is
/// delivered through a callback, optionally hopped onto a loop. Numeric literals
/// (`"127.0.0.1"`, `"::1"`, `"[::1]"`) skip the lookup.
///
/// Results keep the order `getaddrinfo` chose (RFC 6724 preference), without duplicates.
/// Both IPv4 and IPv6 answers are returned; `localhost` typically yields `::1` and `127.0.0.1`.
///
/// ``Override``s replace the lookup for chosen host and port pairs, like curl's `--resolve`.
public struct Resolver: Sendable {
    /// Addresses to use for one host and port instead of asking `getaddrinfo`.
    public struct Override: Sendable, Hashable {
        /// The host name as it appears in URLs; matched without regard to case, IPv6 brackets removed.
        public let host: String
        /// The port the override applies to.
        public let port: Int
        /// The addresses returned, in this order; each keeps its own port.
        public let addresses: [SocketAddress]

        /// Creates an override.
        ///
        /// - Parameters:
        ///   - host: The host name (or literal) to override.
        ///   - port: The port to override.
        ///   - addresses: What the host resolves to; each address carries the port to connect to.
        public init(host: String, port: Int, addresses: [SocketAddress]) {
            self.host = Resolver.normalized(host)
            self.port = port
            self.addresses = addresses
        }
    }

    private struct Key: Hashable {
        let host: String
        let port: Int
    }

    private let queue: DispatchQueue
    private let overrides: [Key: [SocketAddress]]

    /// The queue used by resolvers created without one.
    private static let sharedQueue = DispatchQueue(label: "courier.resolver", attributes: .concurrent)

    /// Creates a resolver.
    ///
    /// - Parameters:
    ///   - queue: Where lookups run; defaults to a shared concurrent queue.
    ///   - overrides: Host and port pairs answered without a lookup; for a pair given twice, the
    ///     last one wins. Defaults to none.
    public init(queue: DispatchQueue? = nil, overrides: [Override] = []) {
        self.queue = queue ?? Resolver.sharedQueue
        var table: [Key: [SocketAddress]] = [:]
        for override in overrides { table[Key(host: override.host, port: override.port)] = override.addresses }
        self.overrides = table
    }

    /// The addresses known without a lookup: an override's, or a numeric literal's.
    ///
    /// - Parameters:
    ///   - host: A name or a numeric literal (brackets around IPv6 literals are accepted).
    ///   - port: The port.
    /// - Returns: The override's addresses (which may be empty), the literal with `port`, or
    ///   `nil` when the name needs a lookup.
    public func knownAddresses(host: String, port: Int) -> [SocketAddress]? {
        if let overridden = overrides[Key(host: Resolver.normalized(host), port: port)] { return overridden }
        return SocketAddress(ip: host, port: port).map { [$0] }
    }

    /// Lower-cased, without the brackets of an IPv6 literal.
    private static func normalized(_ host: String) -> String {
        var text = Substring(host.lowercased())
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        return String(text)
    }

    /// Resolves `host` asynchronously. Overrides and numeric literals are answered without
    /// a lookup (still through `completion`, on `loop` when one is given).
    ///
    /// - Parameters:
    ///   - host: A name (`"localhost"`, `"example.com"`) or a numeric IPv4/IPv6 literal.
    ///   - port: The port to put into every address, 0...65535.
    ///   - loop: Where `completion` runs; `nil` (the default) runs it on the resolver's queue.
    ///     If the loop is shut down the completion is dropped.
    ///   - completion: Receives the addresses (never empty on success, except for an override
    ///     without addresses) or a ``SocketError``.
    public func resolve(
        host: String,
        port: Int,
        on loop: EventLoop? = nil,
        completion: @escaping @Sendable (Result<[SocketAddress], SocketError>) -> Void
    ) {
        let deliver: @Sendable (Result<[SocketAddress], SocketError>) -> Void = { result in
            if let loop {
                loop.execute { completion(result) }
            } else {
                completion(result)
            }
        }
        if let known = knownAddresses(host: host, port: port) {
            deliver(.success(known))
            return
        }
        queue.async {
            do throws(SocketError) {
                deliver(.success(try Resolver.resolveBlocking(host: host, port: port)))
            } catch {
                deliver(.failure(error))
            }
        }
    }

    /// Resolves `host` on the calling thread. Never call this on an event loop thread.
    ///
    /// - Parameters:
    ///   - host: A name or a numeric literal (brackets around IPv6 literals are accepted).
    ///   - port: The port to put into every address, 0...65535.
    ///   - passive: `true` for addresses to bind (`AI_PASSIVE`); defaults to `false`.
    /// - Returns: The addresses, never empty.
    /// - Throws: ``SocketError`` with ``SocketError/isResolutionFailure`` set when the
    ///   name cannot be resolved, or for a port out of range.
    public static func resolveBlocking(host: String, port: Int, passive: Bool = false) throws(SocketError) -> [SocketAddress] {
        guard (0...65535).contains(port) else {
            throw SocketError(operation: "getaddrinfo(\(host))", message: "port \(port) is outside 0...65535")
        }
        if let literal = SocketAddress(ip: host, port: port) { return [literal] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        if status != 0 { throw SocketError.resolution(code: status, host: host) }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let raw = entry.pointee.ai_addr,
               let address = SocketAddress(raw, length: entry.pointee.ai_addrlen),
               !addresses.contains(address) {
                addresses.append(address)
            }
            cursor = entry.pointee.ai_next
        }
        if addresses.isEmpty {
            throw SocketError(operation: "getaddrinfo(\(host))", message: "no IPv4 or IPv6 address")
        }
        return addresses
    }
}

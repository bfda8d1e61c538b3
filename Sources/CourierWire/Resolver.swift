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
public struct Resolver: Sendable {
    private let queue: DispatchQueue

    /// The queue used by resolvers created without one.
    private static let sharedQueue = DispatchQueue(label: "courier.resolver", attributes: .concurrent)

    /// Creates a resolver.
    ///
    /// - Parameter queue: Where lookups run; defaults to a shared concurrent queue.
    public init(queue: DispatchQueue? = nil) {
        self.queue = queue ?? Resolver.sharedQueue
    }

    /// Resolves `host` asynchronously.
    ///
    /// - Parameters:
    ///   - host: A name (`"localhost"`, `"example.com"`) or a numeric IPv4/IPv6 literal.
    ///   - port: The port to put into every address, 0...65535.
    ///   - loop: Where `completion` runs; `nil` (the default) runs it on the resolver's queue.
    ///     If the loop is shut down the completion is dropped.
    ///   - completion: Receives the addresses (never empty on success) or a ``SocketError``.
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

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinuxSystem

extension Socket {
    /// Creates a non-blocking TCP listener bound to `host:port`.
    ///
    /// `SO_REUSEADDR` is set so that a restarted server can bind a port in
    /// `TIME_WAIT`. The host is resolved with `getaddrinfo` (numeric literals and
    /// names such as `localhost`; this may block briefly, which is acceptable while
    /// setting up a server). The first address that binds wins.
    ///
    /// - Parameters:
    ///   - host: The address to bind: `"127.0.0.1"`, `"::1"`, `"0.0.0.0"`, `"localhost"`...
    ///   - port: The port; 0 lets the kernel pick one (read it back with ``localAddress()``).
    ///   - backlog: The accept queue length; defaults to 4096 (the kernel caps it at `somaxconn`).
    /// - Returns: The listening socket. The caller owns it.
    /// - Throws: ``SocketError`` from resolution, `socket`, `bind` or `listen`.
    public static func listen(host: String, port: Int, backlog: Int32 = 4096) throws(SocketError) -> Socket {
        guard (0...65535).contains(port) else {
            throw SocketError(operation: "listen", message: "port \(port) is outside 0...65535")
        }
        let addresses: [SocketAddress]
        if let literal = SocketAddress(ip: host, port: port) {
            addresses = [literal]
        } else {
            addresses = try Resolver.resolveBlocking(host: host, port: port, passive: true)
        }
        var lastError = SocketError(operation: "listen", message: "no address for \(host)")
        for address in addresses {
            do {
                return try listen(on: address, backlog: backlog)
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// Creates a non-blocking TCP listener bound to `address`.
    ///
    /// - Parameters:
    ///   - address: The address and port to bind (port 0: the kernel picks).
    ///   - backlog: The accept queue length; defaults to 4096.
    /// - Returns: The listening socket.
    /// - Throws: ``SocketError`` from `socket`, `setsockopt`, `bind` or `listen`.
    public static func listen(on address: SocketAddress, backlog: Int32 = 4096) throws(SocketError) -> Socket {
        let socket = try makeStreamSocket(family: address.family)
        do throws(SocketError) {
            try socket.setOption(level: SOL_SOCKET, name: SO_REUSEADDR, value: 1, operation: "setsockopt(SO_REUSEADDR)")
            let bound = address.withSockAddr { Glibc.bind(socket.descriptor, $0, $1) }
            if bound != 0 { throw SocketError.current("bind(\(address))") }
            if Glibc.listen(socket.descriptor, backlog) != 0 { throw SocketError.current("listen") }
            return socket
        } catch {
            socket.close()
            throw error
        }
    }

    /// Accepts one pending connection (`accept4` with `SOCK_NONBLOCK | SOCK_CLOEXEC`).
    ///
    /// Transient failures (`EINTR`, `ECONNABORTED`, `EPROTO`) are retried; an
    /// exhausted descriptor table (`EMFILE`, `ENFILE`) is thrown so the caller can
    /// back off instead of spinning.
    ///
    /// - Returns: The accepted socket and the peer's address, or ``AcceptResult/wouldBlock``.
    /// - Throws: ``SocketError`` from `accept4`.
    public func accept() throws(SocketError) -> AcceptResult {
        let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        // Bounded retries: transient errors do not repeat indefinitely in practice.
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { courier_accept4(descriptor, $0, &length, flags) }
            }
            if fd >= 0 {
                return .accepted(Socket(descriptor: fd), SocketAddress(storage: storage, length: length))
            }
            let code = Glibc.errno
            switch code {
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EINTR, ECONNABORTED, EPROTO: continue
            default: throw SocketError(operation: "accept4", errno: code)
            }
        }
        return .wouldBlock
    }

    /// Starts a non-blocking TCP connection to `address`.
    ///
    /// When the result is ``ConnectResult/inProgress``, register the socket for
    /// writability on an ``EventLoop`` and call ``finishConnect()`` once it is
    /// writable (or reports an error).
    ///
    /// - Parameter address: Where to connect.
    /// - Returns: The new socket (the caller owns it) and whether it is already connected.
    /// - Throws: ``SocketError`` from `socket` or `connect` (for example `ECONNREFUSED`
    ///   reported immediately on loopback). The socket is closed in that case.
    public static func connect(to address: SocketAddress) throws(SocketError) -> (socket: Socket, result: ConnectResult) {
        let socket = try makeStreamSocket(family: address.family)
        while true {
            let status = address.withSockAddr { Glibc.connect(socket.descriptor, $0, $1) }
            if status == 0 { return (socket, .connected) }
            let code = Glibc.errno
            switch code {
            case EINTR: continue
            case EINPROGRESS: return (socket, .inProgress)
            default:
                socket.close()
                throw SocketError(operation: "connect(\(address))", errno: code)
            }
        }
    }

    /// Completes a non-blocking connect by reading `SO_ERROR`.
    ///
    /// - Throws: ``SocketError`` with operation `"connect"` and the pending error
    ///   (for example `ECONNREFUSED`, `ETIMEDOUT`), or from `getsockopt`.
    public func finishConnect() throws(SocketError) {
        var pending: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &pending, &length) != 0 {
            throw SocketError.current("getsockopt(SO_ERROR)")
        }
        if pending != 0 { throw SocketError(operation: "connect", errno: pending) }
    }

    private static func makeStreamSocket(family: SocketAddress.Family) throws(SocketError) -> Socket {
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = Glibc.socket(domain, type, 0)
        if fd < 0 { throw SocketError.current("socket") }
        return Socket(descriptor: fd)
    }
}

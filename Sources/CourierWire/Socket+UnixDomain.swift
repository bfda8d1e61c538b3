#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Socket {
    /// The longest Unix domain socket path, in bytes: `sun_path` holds 108 bytes with the
    /// terminating NUL.
    public static let maxUnixPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Connects a non-blocking socket to the Unix domain stream socket at `path`.
    ///
    /// On Linux a Unix socket connects at once or fails at once; a listener whose accept queue is
    /// full makes it fail with `EAGAIN` rather than wait.
    ///
    /// - Parameter path: the socket's file system path, 1 to ``maxUnixPathLength`` bytes.
    /// - Returns: the connected socket; the caller owns it.
    /// - Throws: ``SocketError`` from `socket` or `connect`: `ENOENT` (no such file), `EACCES`
    ///   (no permission), `ECONNREFUSED` (nothing listens there, or the file is not a socket),
    ///   `EAGAIN` (the accept queue is full); `ENAMETOOLONG` for a path that does not fit, `EINVAL` for an empty one
    ///   or one holding NUL.
    public static func connect(unixPath path: String) throws(SocketError) -> Socket {
        var address = try unixAddress(path, operation: "connect(unix:\(path))")
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw SocketError.current("socket(AF_UNIX)") }
        let socket = Socket(descriptor: fd)
        while true {
            let status = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if status == 0 { return socket }
            let code = Glibc.errno
            if code == EINTR { continue }
            socket.close()
            throw SocketError(operation: "connect(unix:\(path))", errno: code)
        }
    }

    /// Creates a non-blocking Unix domain stream listener at `path`, which must not exist yet.
    ///
    /// - Parameters:
    ///   - path: the socket's file system path, 1 to ``maxUnixPathLength`` bytes.
    ///   - backlog: the accept queue length; defaults to 4096.
    /// - Returns: the listening socket. The caller owns it and removes the file when done.
    /// - Throws: ``SocketError`` from `socket`, `bind` (`EADDRINUSE` when the path exists) or `listen`.
    public static func listen(unixPath path: String, backlog: Int32 = 4096) throws(SocketError) -> Socket {
        var address = try unixAddress(path, operation: "bind(unix:\(path))")
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw SocketError.current("socket(AF_UNIX)") }
        let socket = Socket(descriptor: fd)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if bound != 0 {
            let error = SocketError.current("bind(unix:\(path))")
            socket.close()
            throw error
        }
        if Glibc.listen(fd, backlog) != 0 {
            let error = SocketError.current("listen(unix:\(path))")
            socket.close()
            throw error
        }
        return socket
    }

    /// The `sockaddr_un` for `path`.
    private static func unixAddress(_ path: String, operation: String) throws(SocketError) -> sockaddr_un {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, !bytes.contains(0) else { throw SocketError(operation: operation, errno: EINVAL) }
        guard bytes.count <= maxUnixPathLength else { throw SocketError(operation: operation, errno: ENAMETOOLONG) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A non-blocking TCP socket: a thin, typed wrapper around a file descriptor.
///
/// `Socket` is a value holding a descriptor; it does not close it on its own.
/// Whoever creates one owns it and must call ``close()`` exactly once. Every
/// socket made here is non-blocking and close-on-exec. Writes use
/// `MSG_NOSIGNAL`, so a peer that went away never raises `SIGPIPE`.
///
/// Reads and writes report ``IOResult``: some bytes, ``IOResult/wouldBlock``
/// (wait for readiness on an ``EventLoop``) or ``IOResult/closed``; anything else
/// throws a ``SocketError``.
public struct Socket: Sendable, Hashable, CustomStringConvertible {
    /// The outcome of a non-blocking read or write.
    public enum IOResult: Sendable, Hashable {
        /// This many bytes were transferred (always more than 0).
        case bytes(Int)
        /// Nothing can be transferred now; wait for readiness.
        case wouldBlock
        /// For reads: the peer closed its sending side (end of stream).
        /// For writes: the connection is gone (`EPIPE`).
        case closed
    }

    /// The outcome of ``accept()``.
    public enum AcceptResult: Sendable, Hashable {
        /// A new connection, already non-blocking and close-on-exec, with the peer's address.
        case accepted(Socket, SocketAddress?)
        /// No connection is waiting.
        case wouldBlock
    }

    /// The outcome of starting a non-blocking ``connect(to:)``.
    public enum ConnectResult: Sendable, Hashable {
        /// The connection is established (common on loopback).
        case connected
        /// Wait until the socket is writable, then call ``finishConnect()``.
        case inProgress
    }

    /// The file descriptor.
    public let descriptor: Int32

    /// Wraps an existing descriptor. The caller keeps responsibility for it being
    /// a non-blocking stream socket.
    ///
    /// - Parameter descriptor: An open socket descriptor.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// `"Socket(fd: 12)"`.
    public var description: String { "Socket(fd: \(descriptor))" }

    /// Closes the descriptor. Call exactly once; the value must not be used afterwards.
    public func close() {
        // On Linux the descriptor is released even when close reports EINTR, so
        // there is nothing to retry.
        _ = Glibc.close(descriptor)
    }

    /// Shuts down the sending side (sends FIN); reading stays possible.
    ///
    /// - Throws: ``SocketError`` from `shutdown`, except `ENOTCONN` which is ignored.
    public func shutdownWrite() throws(SocketError) {
        if Glibc.shutdown(descriptor, Int32(SHUT_WR)) != 0 {
            let code = Glibc.errno
            if code == ENOTCONN { return }
            throw SocketError(operation: "shutdown", errno: code)
        }
    }

    /// Turns Nagle's algorithm off (`TCP_NODELAY`) or back on.
    ///
    /// - Parameter enabled: `true` (the usual choice for HTTP) disables Nagle's algorithm.
    /// - Throws: ``SocketError`` from `setsockopt`.
    public func setNoDelay(_ enabled: Bool = true) throws(SocketError) {
        try setOption(level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: enabled ? 1 : 0, operation: "setsockopt(TCP_NODELAY)")
    }

    /// Sets an integer socket option.
    ///
    /// - Parameters:
    ///   - level: The protocol level, for example `SOL_SOCKET`.
    ///   - name: The option, for example `SO_RCVBUF`.
    ///   - value: The value.
    ///   - operation: The name reported in a ``SocketError``; defaults to `"setsockopt"`.
    /// - Throws: ``SocketError`` from `setsockopt`.
    public func setOption(level: Int32, name: Int32, value: Int32, operation: String = "setsockopt") throws(SocketError) {
        var option = value
        if setsockopt(descriptor, level, name, &option, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            throw SocketError.current(operation)
        }
    }

    /// The local address the socket is bound to (`getsockname`).
    ///
    /// - Returns: The address; for a listener bound to port 0 it holds the port the kernel chose.
    /// - Throws: ``SocketError`` from `getsockname`, or for an unsupported family.
    public func localAddress() throws(SocketError) -> SocketAddress {
        try address(operation: "getsockname") { getsockname(descriptor, $0, $1) }
    }

    /// The peer's address (`getpeername`).
    ///
    /// - Returns: The address.
    /// - Throws: ``SocketError`` from `getpeername` (`ENOTCONN` when not connected).
    public func remoteAddress() throws(SocketError) -> SocketAddress {
        try address(operation: "getpeername") { getpeername(descriptor, $0, $1) }
    }

    private func address(
        operation: String,
        _ call: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) throws(SocketError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { call($0, &length) }
        }
        if result != 0 { throw SocketError.current(operation) }
        guard let address = SocketAddress(storage: storage, length: length) else {
            throw SocketError(operation: operation, message: "unsupported address family")
        }
        return address
    }

    /// Creates a connected pair of non-blocking stream sockets (`socketpair(AF_UNIX)`),
    /// useful for tests and for waking threads.
    ///
    /// - Returns: The two ends; the caller owns and closes both.
    /// - Throws: ``SocketError`` from `socketpair`.
    public static func makePair() throws(SocketError) -> (Socket, Socket) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if socketpair(AF_UNIX, type, 0, &fds) != 0 { throw SocketError.current("socketpair") }
        return (Socket(descriptor: fds[0]), Socket(descriptor: fds[1]))
    }
}

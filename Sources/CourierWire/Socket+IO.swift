#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Socket {
    /// Reads up to `buffer.count` bytes without blocking.
    ///
    /// - Parameter buffer: Where to put the bytes.
    /// - Returns: ``IOResult/bytes(_:)`` with the count read, ``IOResult/wouldBlock``,
    ///   or ``IOResult/closed`` at end of stream.
    /// - Throws: ``SocketError`` from `read` (for example `ECONNRESET`).
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> IOResult {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .wouldBlock }
        while true {
            let count = Glibc.read(descriptor, base, buffer.count)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .closed }
            let code = Glibc.errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SocketError(operation: "read", errno: code)
            }
        }
    }

    /// Writes as many of `bytes` as the socket accepts now (`send` with `MSG_NOSIGNAL`).
    ///
    /// - Parameter bytes: The bytes to send.
    /// - Returns: ``IOResult/bytes(_:)`` with the count written (possibly fewer than
    ///   `bytes.count`), ``IOResult/wouldBlock``, or ``IOResult/closed`` (`EPIPE`).
    /// - Throws: ``SocketError`` from `send` (for example `ECONNRESET`).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> IOResult {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .bytes(0) }
        while true {
            let count = send(descriptor, base, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .bytes(count) }
            let code = Glibc.errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EPIPE: return .closed
            default: throw SocketError(operation: "send", errno: code)
            }
        }
    }

    /// Writes several buffers in one system call (`sendmsg` with `MSG_NOSIGNAL`).
    ///
    /// At most `IOV_MAX` (1024) buffers are passed per call; the caller advances
    /// through its buffers by the returned count.
    ///
    /// - Parameter buffers: The buffers, in order. Empty buffers are allowed.
    /// - Returns: ``IOResult/bytes(_:)`` with the total count written,
    ///   ``IOResult/wouldBlock``, or ``IOResult/closed`` (`EPIPE`).
    /// - Throws: ``SocketError`` from `sendmsg`.
    public func writev(_ buffers: some Collection<UnsafeRawBufferPointer>) throws(SocketError) -> IOResult {
        let count = min(buffers.count, 1024)
        if count == 0 { return .bytes(0) }
        let result: Result<IOResult, SocketError> = withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) { vectors in
            var index = 0
            for buffer in buffers.prefix(count) {
                vectors[index] = iovec(iov_base: UnsafeMutableRawPointer(mutating: buffer.baseAddress), iov_len: buffer.count)
                index += 1
            }
            var message = msghdr()
            message.msg_iov = vectors.baseAddress
            message.msg_iovlen = index
            while true {
                let written = sendmsg(descriptor, &message, Int32(MSG_NOSIGNAL))
                if written >= 0 { return .success(.bytes(written)) }
                let code = Glibc.errno
                switch code {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .success(.wouldBlock)
                case EPIPE: return .success(.closed)
                default: return .failure(SocketError(operation: "sendmsg", errno: code))
                }
            }
        }
        return try result.get()
    }

    /// Raises this process's soft limit on open files (`RLIMIT_NOFILE`) to its hard limit.
    ///
    /// Servers holding thousands of connections call this once at start. Failing
    /// to raise the limit is not an error: the current limit is returned.
    ///
    /// - Returns: The soft limit in effect afterwards.
    @discardableResult
    public static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return Int(clamping: raised.rlim_cur) }
        }
        return Int(clamping: limit.rlim_cur)
    }
}

import COpenSSL
import CourierTestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Server-side TLS for the in-process test peers (``TLSOriginServer``, an `https://`
/// ``ProxyChaosPeer``): an OpenSSL server context holding one certificate and its key, shared
/// by every connection (OpenSSL allows that across threads).
final class ServerTLSContext: @unchecked Sendable {  // the SSL_CTX is only read once made
    /// The OpenSSL context.
    let context: OpaquePointer

    /// A context serving the PEM `certificate` (chain) and `key` files.
    init(certificate: String, key: String) throws {
        guard let method = TLS_server_method(), let context = SSL_CTX_new(method) else { throw PeerError("SSL_CTX_new failed") }
        guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1,
              SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
            SSL_CTX_free(context)
            throw PeerError("the test certificate or key could not be loaded")
        }
        self.context = context
    }

    deinit {
        SSL_CTX_free(context)
    }
}

/// One accepted connection of an in-process test peer, used by one thread: blocking reads and
/// writes on its socket, plain or under server-side TLS (an OpenSSL session over memory
/// buffers, whose records this stream sends with `MSG_NOSIGNAL`, so that a client that went
/// away never raises `SIGPIPE`). Every wait is bounded (10 s at most), so a peer thread never
/// outlives its test for long.
final class PeerStream: @unchecked Sendable {  // used by the one thread that serves its connection
    /// The socket.
    let fd: Int32
    private var ssl: OpaquePointer?
    /// The session's ciphertext input and output (owned by `ssl`).
    private var input: OpaquePointer?
    private var output: OpaquePointer?
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    /// A plain stream on `fd`.
    init(fd: Int32) {
        self.fd = fd
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Runs the server side of a TLS handshake on the stream; what follows is read and written
    /// through the session.
    /// - Throws: ``PeerError`` when the handshake fails, the client closes during it, or it
    ///   waits 10 s for the client.
    /// - Parameter configure: called with the new `SSL` object before the handshake starts (to
    ///   pick its certificate, say); it returns `false` to refuse the connection.
    func acceptTLS(_ context: ServerTLSContext, configure: (OpaquePointer) -> Bool = { _ in true }) throws {
        guard let ssl = SSL_new(context.context), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            throw PeerError("SSL_new or BIO_new failed")
        }
        guard configure(ssl) else {
            SSL_free(ssl)
            BIO_free(input)
            BIO_free(output)
            throw PeerError("the connection's TLS settings could not be applied")
        }
        SSL_set_bio(ssl, input, output)
        SSL_set_accept_state(ssl)
        (self.ssl, self.input, self.output) = (ssl, input, output)
        while true {
            let result = SSL_do_handshake(ssl)
            guard flushTLS() else { throw PeerError("the client left during the TLS handshake") }
            if result == 1 { return }
            guard SSL_get_error(ssl, result) == SSL_ERROR_WANT_READ, let bytes = readSocket(waitingAtMost: 10_000), !bytes.isEmpty else {
                throw PeerError("the TLS handshake failed")
            }
            _ = bytes.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) }
        }
    }

    /// Whether bytes already read from the socket wait in the TLS session (a reader must not
    /// wait on the socket then).
    var hasBuffered: Bool {
        guard let ssl, let input else { return false }
        return SSL_has_pending(ssl) == 1 || BIO_ctrl_pending(input) > 0
    }

    /// The next bytes from the client: waits at most `milliseconds` for them.
    /// - Returns: the bytes; empty when none came in time; `nil` when the client closed (or
    ///   the connection broke).
    func read(waitingAtMost milliseconds: Int32 = 10_000) -> [UInt8]? {
        guard let ssl, let input else { return readSocket(waitingAtMost: milliseconds) }
        while true {
            if hasBuffered {
                let count = buffer.withUnsafeMutableBytes { Int(SSL_read(ssl, $0.baseAddress, Int32($0.count))) }
                guard flushTLS() else { return nil }
                if count > 0 { return Array(buffer[..<count]) }
                guard SSL_get_error(ssl, Int32(count)) == SSL_ERROR_WANT_READ else { return nil }
            }
            guard let bytes = readSocket(waitingAtMost: milliseconds) else { return nil }
            if bytes.isEmpty { return [] }
            _ = bytes.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) }
        }
    }

    /// The next bytes on the socket itself: empty when none came within `milliseconds`, `nil`
    /// when the client closed.
    private func readSocket(waitingAtMost milliseconds: Int32) -> [UInt8]? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, milliseconds)
        if ready == 0 { return [] }
        if ready < 0 { return nil }
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        return count > 0 ? Array(buffer[..<count]) : nil
    }

    /// Sends the ciphertext the TLS session has produced.
    /// - Returns: `false` when the connection is gone.
    private func flushTLS() -> Bool {
        guard let output else { return true }
        var ciphertext = [UInt8](repeating: 0, count: 16_384)
        while BIO_ctrl_pending(output) > 0 {
            let count = ciphertext.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { return true }
            guard sendSocket(Array(ciphertext[..<Int(count)])) else { return false }
        }
        return true
    }

    /// Writes all of `bytes` to the socket.
    private func sendSocket(_ bytes: [UInt8]) -> Bool {
        Self.send(bytes, to: fd)
    }

    /// Writes all of `bytes` to the socket `fd` (without raising `SIGPIPE`).
    /// - Returns: `false` when the connection is gone.
    static func send(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Reads until `bytes` holds at least `count` bytes.
    /// - Returns: `false` when the client closed or 10 s passed first.
    func fill(_ bytes: inout [UInt8], toCount count: Int) -> Bool {
        while bytes.count < count {
            guard let more = read(), !more.isEmpty else { return false }
            bytes += more
        }
        return true
    }

    /// Takes an HTTP head (through its blank line) from the front of `bytes`, reading more
    /// until it is complete.
    /// - Returns: the head's text, without its blank line; `nil` when the client closed, 10 s
    ///   passed, or 64 KiB came without a blank line.
    func readHead(_ bytes: inout [UInt8]) -> String? {
        let blank: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = bytes.firstRange(of: blank) {
                let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
                bytes.removeSubrange(..<end.upperBound)
                return head
            }
            guard bytes.count < 65_536, let more = read(), !more.isEmpty else { return nil }
            bytes += more
        }
    }

    /// Writes all of `bytes` (through the TLS session, if any).
    /// - Returns: `false` when the connection is gone.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        guard let ssl else { return sendSocket(bytes) }
        guard !bytes.isEmpty else { return true }
        let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
        return written == Int32(bytes.count) && flushTLS()
    }

    /// Writes `text` as UTF-8.
    @discardableResult
    func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// Frees the TLS session, if any (the socket is closed by whoever accepted it).
    /// The server-side `SSL` object once ``acceptTLS(_:configure:)`` succeeded (to ask it, say,
    /// whether the session was resumed); `nil` on a plain stream.
    var tlsSession: OpaquePointer? { ssl }

    func release() {
        if let ssl { SSL_free(ssl) }
        (ssl, input, output) = (nil, nil, nil)
    }
}

/// The sockets a test peer accepted and has not closed yet, so that stopping the peer can shut
/// them all down; a number is closed under the lock, so one shut down here is never a number
/// the process has reused since.
final class AcceptedSockets: Sendable {
    private let open = Mutex<Set<Int32>>([])

    /// Adds an accepted socket.
    func add(_ fd: Int32) {
        open.withLock { _ = $0.insert(fd) }
    }

    /// Shuts down and closes `fd`, once.
    func close(_ fd: Int32) {
        open.withLock { all in
            guard all.remove(fd) != nil else { return }
            Glibc.shutdown(fd, Int32(SHUT_RDWR))
            Glibc.close(fd)
        }
    }

    /// Shuts down every open socket (their threads then close them).
    func shutDownAll() {
        open.withLock { all in
            for fd in all { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}

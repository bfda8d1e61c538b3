import COpenSSL
import Glibc

/// One TLS client connection, driven entirely through memory buffers.
///
/// The session never touches a socket. Its owner (a transport on an event
/// loop, or a test with a blocking socket) moves bytes between the socket and
/// the session:
///
/// 1. Create the session and call ``handshake()``; it queues the ClientHello.
/// 2. Whenever ``takeCiphertext()`` returns bytes, write them to the socket.
///    Do this after *every* call into the session: handshakes, reads (TLS 1.3
///    key updates), writes, ``close()`` and failed handshakes (alerts) all
///    produce ciphertext.
/// 3. When the socket is readable, pass what it returned to
///    ``feedCiphertext(_:)`` (or ``feedEndOfInput()`` when it returned 0), then
///    call ``handshake()`` again until it returns ``HandshakeState/complete``.
/// 4. Send with ``writePlaintext(_:)``; receive by feeding ciphertext and
///    calling ``readPlaintext(into:)`` until it returns
///    ``ReadResult/wantsMoreInput``.
/// 5. ``close()`` queues a close_notify alert.
///
/// Certificate verification happens inside the handshake: chain and host name
/// by OpenSSL (`SSL_VERIFY_PEER`, `X509_VERIFY_PARAM_set1_host` /
/// `set1_ip_asc`) unless the context verified the same chain for the same name
/// recently (``reusedVerifiedChain``), then the configured pins on the leaf
/// certificate (and its name, when the chain is not verified), all as soon as
/// the server's certificate arrives, before the client sends its own; a
/// resumed session checks the pins and name against its certificate when the
/// handshake ends.
///
/// A session is not `Sendable`: it belongs to one connection and must be used
/// from one thread at a time (OpenSSL's error queue is per thread). Once a call
/// throws, the session is failed and every later call rethrows the same error.
public final class TLSClientSession {
    /// The progress of the handshake.
    public enum HandshakeState: Sendable, Equatable {
        /// The handshake finished and every configured check passed.
        case complete
        /// The handshake needs more bytes from the server; write out any
        /// pending ciphertext, then feed what the socket returns.
        case wantsMoreInput
    }

    /// The outcome of ``readPlaintext(into:)``.
    public enum ReadResult: Sendable, Equatable {
        /// This many plaintext bytes were stored in the buffer (at least one,
        /// unless the buffer was empty).
        case bytes(Int)
        /// No complete record is buffered; feed more ciphertext.
        case wantsMoreInput
        /// The server sent close_notify: the stream ended cleanly.
        case closed
    }

    let configuration: TLSConfiguration
    /// Keeps the shared context (and its trust store) alive for this session.
    private let context: TLSContext
    /// The `SSL` object, owned by this session; it owns both BIOs.
    let ssl: OpaquePointer
    /// The memory BIO that OpenSSL reads ciphertext from (fed by the owner).
    private let inputBIO: OpaquePointer
    /// The memory BIO that OpenSSL writes ciphertext to (drained by the owner).
    private let outputBIO: OpaquePointer
    /// The server name as used for verification (brackets and trailing dot removed).
    let verificationName: String
    /// Whether ``verificationName`` is an IPv4 or IPv6 literal.
    let serverNameIsIPAddress: Bool

    /// The cache key of the peer (`host:port`), for session resumption.
    let peer: String
    /// The context's session cache; `nil` when resumption is off.
    let sessionCache: TLSSessionCache?
    /// The context's verified chains; `nil` when chain verification is off.
    let verifiedChains: VerifiedChainCache?
    /// Whether the server's chain was found among the chains the context verified before,
    /// instead of being verified again (see ``TLSContext``).
    public internal(set) var reusedVerifiedChain = false
    /// Why the server's certificate failed the session's own checks (pins, or the host name
    /// when the chain is not verified) when it arrived (``verifyPresentedCertificate(_:)``).
    var presentedCertificateFailure: TLSError?
    /// Whether a cached session was offered in the ClientHello.
    public internal(set) var offeredResumption = false
    /// Sessions issued during the handshake (TLS 1.2), cached only once every check passed.
    var unverifiedSessions: [CachedSession] = []
    /// Whether the server sent a CertificateRequest (see ``certificateRequestedCallback``).
    var serverRequestedCertificate = false

    var handshakeComplete = false
    private var sentCloseNotify = false
    private var receivedCloseNotify = false
    /// Whether ``feedEndOfInput()`` was called: the socket reached end of file.
    private var inputEnded = false
    var failure: TLSError?

    /// Creates a client session for one connection.
    ///
    /// - Parameters:
    ///   - context: the shared context holding the configuration and trust store.
    ///   - serverName: the host name or IP address the connection was opened
    ///     to, as in the URL (`example.com`, `127.0.0.1`, `::1` or `[::1]`).
    ///     Sent as SNI unless it is an IP literal, and verified against the
    ///     certificate's subjectAltName when the configuration asks for it.
    ///   - port: the server's TCP port; with the name it picks the sessions
    ///     that may be resumed (see ``TLSConfiguration/resumesSessions``).
    ///     Default: 443.
    /// - Throws: ``TLSError/invalidConfiguration`` if the name is empty, holds a
    ///   NUL byte or is not acceptable to OpenSSL; ``TLSError/internalError`` if
    ///   OpenSSL cannot allocate the session.
    public init(context: TLSContext, serverName: String, port: Int = 443) throws(TLSError) {
        let name = Self.normalizedServerName(serverName)
        let isIPAddress = Self.isIPAddress(name)
        guard !name.isEmpty, !name.utf8.contains(0), name.utf8.count <= 255,
              isIPAddress || !name.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty)
        else {
            throw TLSError.invalidConfiguration.with(
                detail: "the server name must be 1 to 255 bytes without NUL or empty labels, "
                    + "got \(serverName.utf8.count) bytes")
        }
        OpenSSL.clearErrorQueue()
        guard let ssl = SSL_new(context.context) else {
            throw TLSError.internalError.with(detail: "SSL_new failed: \(OpenSSL.drainErrorQueue())")
        }
        guard let input = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError.internalError.with(detail: "BIO_new failed: \(OpenSSL.drainErrorQueue())")
        }
        guard let output = BIO_new(BIO_s_mem()) else {
            BIO_free(input)
            SSL_free(ssl)
            throw TLSError.internalError.with(detail: "BIO_new failed: \(OpenSSL.drainErrorQueue())")
        }
        // An empty input BIO means "try again later" until feedEndOfInput().
        OpenSSL.setMemoryEOFReturn(input, -1)
        OpenSSL.setMemoryEOFReturn(output, -1)
        SSL_set_bio(ssl, input, output) // the SSL object now owns both BIOs
        SSL_set_connect_state(ssl)

        self.configuration = context.configuration
        self.context = context
        self.ssl = ssl
        self.inputBIO = input
        self.outputBIO = output
        self.verificationName = name
        self.serverNameIsIPAddress = isIPAddress
        self.peer = name.utf8.contains(UInt8(ascii: ":")) ? "[\(name)]:\(port)" : "\(name):\(port)"
        self.sessionCache = context.sessionCache
        self.verifiedChains = context.verifiedChains

        // From here on, deinit frees `ssl` if configuring it fails.
        // Unretained: the SSL object, and with it every callback, lives no longer than `self`.
        SSL_set_ex_data(ssl, Self.ownerIndex, Unmanaged.passUnretained(self).toOpaque())
        try configureServerName()
        offerCachedSession()
    }

    deinit {
        keepSessionResumable()
        SSL_free(ssl)
    }

    // MARK: - Ciphertext in and out

    /// Hands bytes read from the socket to the session.
    ///
    /// Call ``handshake()`` or ``readPlaintext(into:)`` afterwards to process
    /// them. Bytes fed after the session failed are discarded.
    ///
    /// - Parameter bytes: ciphertext exactly as received.
    public func feedCiphertext(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let chunk = Int32(clamping: remaining)
            let written = BIO_write(inputBIO, base, chunk)
            guard written > 0 else {
                failure = TLSError.internalError.with(
                    detail: "cannot buffer received ciphertext: \(OpenSSL.drainErrorQueue())")
                return
            }
            base += Int(written)
            remaining -= Int(written)
        }
    }

    /// Hands bytes read from the socket to the session.
    ///
    /// - Parameter bytes: ciphertext exactly as received.
    public func feedCiphertext(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feedCiphertext($0) }
    }

    /// Tells the session that the socket reached end of file (the server
    /// closed its side of the TCP connection).
    ///
    /// Bytes already fed are still processed. Afterwards a read that needs more
    /// input returns ``ReadResult/closed`` if close_notify arrived, and throws
    /// ``TLSError/uncleanShutdown`` otherwise; a handshake that needs more input
    /// throws ``TLSError/handshakeFailed``.
    public func feedEndOfInput() {
        inputEnded = true
        OpenSSL.setMemoryEOFReturn(inputBIO, 0)
    }

    /// The number of ciphertext bytes waiting to be written to the socket.
    public var pendingCiphertextCount: Int {
        Int(clamping: BIO_ctrl_pending(outputBIO))
    }

    /// Removes and returns all ciphertext waiting to be written to the socket.
    ///
    /// - Returns: the bytes, or `nil` if nothing is pending.
    public func takeCiphertext() -> [UInt8]? {
        let pending = pendingCiphertextCount
        guard pending > 0 else { return nil }
        let bytes = [UInt8](unsafeUninitializedCapacity: pending) { buffer, count in
            count = takeCiphertext(into: UnsafeMutableRawBufferPointer(buffer))
        }
        return bytes.isEmpty ? nil : bytes
    }

    /// Moves pending ciphertext into a caller-owned buffer (for example a
    /// transport's reusable write buffer), avoiding an allocation.
    ///
    /// - Parameter buffer: where to store the bytes.
    /// - Returns: the number of bytes stored: at most `buffer.count`, 0 when
    ///   nothing is pending. Bytes that did not fit stay pending.
    public func takeCiphertext(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let read = BIO_read(outputBIO, base, Int32(clamping: buffer.count))
        return read > 0 ? Int(read) : 0
    }

    // MARK: - Handshake

    /// Advances the handshake with the ciphertext fed so far.
    ///
    /// The first call queues the ClientHello. When the server's certificate
    /// arrives it is verified; when the handshake finishes, the host name (if
    /// chain verification is off) and the pins are checked. Write out pending
    /// ciphertext after every call, including one that throws (the alert tells
    /// the server why).
    ///
    /// - Returns: ``HandshakeState/complete`` once the session is ready for
    ///   application data (also on every later call), otherwise
    ///   ``HandshakeState/wantsMoreInput``.
    /// - Throws: a certificate error (``TLSError/untrustedCertificate``,
    ///   ``TLSError/expiredCertificate``, ``TLSError/notYetValidCertificate``,
    ///   ``TLSError/invalidCertificate``, ``TLSError/hostnameMismatch``,
    ///   ``TLSError/pinMismatch``), ``TLSError/protocolVersionUnsupported``,
    ///   ``TLSError/handshakeFailed``, or ``TLSError/invalidState`` after
    ///   ``close()`` before the handshake completed.
    public func handshake() throws(TLSError) -> HandshakeState {
        if let failure { throw failure }
        if handshakeComplete { return .complete }
        if sentCloseNotify {
            throw TLSError.invalidState.with(detail: "the session was closed before the handshake completed")
        }
        OpenSSL.clearErrorQueue()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            do {
                try verifyAfterHandshake()
            } catch {
                forgetPeerSessions()
                throw fail(error)
            }
            handshakeComplete = true
            cacheVerifiedSessions()
            return .complete
        }
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .wantsMoreInput
        default:
            forgetPeerSessions()
            throw fail(handshakeError(sslError: code))
        }
    }

    /// Whether the handshake finished and every configured check passed.
    public var isHandshakeComplete: Bool { handshakeComplete }

    // MARK: - Application data

    /// Encrypts application data; the records become pending ciphertext.
    ///
    /// All bytes are always consumed (memory BIOs never block).
    ///
    /// - Parameter bytes: the plaintext to send. An empty buffer is a no-op.
    /// - Throws: ``TLSError/invalidState`` before the handshake completed or
    ///   after ``close()``; the session's failure if it failed earlier;
    ///   ``TLSError/protocolError`` if OpenSSL refuses the write.
    public func writePlaintext(_ bytes: UnsafeRawBufferPointer) throws(TLSError) {
        if let failure { throw failure }
        guard handshakeComplete, !sentCloseNotify else {
            throw TLSError.invalidState.with(detail: handshakeComplete
                ? "cannot write after close()" : "cannot write before the handshake completed")
        }
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        // Bounded: every successful iteration consumes at least one byte.
        while offset < bytes.count {
            OpenSSL.clearErrorQueue()
            var written = 0
            let result = SSL_write_ex(ssl, base + offset, bytes.count - offset, &written)
            guard result == 1, written > 0 else {
                let code = SSL_get_error(ssl, result)
                throw fail(TLSError.protocolError.with(
                    detail: "SSL_write failed (SSL error \(code)): \(OpenSSL.drainErrorQueue())"))
            }
            offset += written
        }
    }

    /// Encrypts application data; the records become pending ciphertext.
    ///
    /// - Parameter bytes: the plaintext to send.
    /// - Throws: see ``writePlaintext(_:)-(UnsafeRawBufferPointer)``.
    public func writePlaintext(_ bytes: [UInt8]) throws(TLSError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(TLSError) in try writePlaintext(buffer) }
        }
        try result.get()
    }

    /// Decrypts buffered ciphertext into a caller-owned buffer.
    ///
    /// Call repeatedly until it returns ``ReadResult/wantsMoreInput``: one call
    /// returns at most one record's worth of data (up to 16 KiB).
    ///
    /// - Parameter buffer: where to store the plaintext.
    /// - Returns: ``ReadResult/bytes(_:)`` with the count stored (0 only for an
    ///   empty buffer), ``ReadResult/wantsMoreInput``, or ``ReadResult/closed``
    ///   once the server sent close_notify (also on every later call).
    /// - Throws: ``TLSError/uncleanShutdown`` if input ended without
    ///   close_notify; ``TLSError/protocolError`` for corrupt records or a fatal
    ///   alert; ``TLSError/invalidState`` before the handshake completed; the
    ///   session's failure if it failed earlier.
    public func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> ReadResult {
        if let failure { throw failure }
        guard handshakeComplete else {
            throw TLSError.invalidState.with(detail: "cannot read before the handshake completed")
        }
        if receivedCloseNotify { return .closed }
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .bytes(0) }
        // OpenSSL has no record data pending (SSL_has_pending: none decrypted and unread, no
        // whole record unprocessed), no bytes wait in the input buffer, and the input has not
        // ended: SSL_read_ex could only ask for more input, so the call is skipped (every drain
        // of the received records ends with such a call).
        if !inputEnded, SSL_has_pending(ssl) == 0, BIO_ctrl_pending(inputBIO) == 0 { return .wantsMoreInput }
        OpenSSL.clearErrorQueue()
        var count = 0
        let result = SSL_read_ex(ssl, base, buffer.count, &count)
        if result == 1 { return .bytes(count) }
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .wantsMoreInput
        case SSL_ERROR_ZERO_RETURN:
            receivedCloseNotify = true
            return .closed
        default:
            let error = readError(sslError: code)
            if error != .uncleanShutdown { forgetPeerSessions() }
            throw fail(error)
        }
    }

    /// Decrypts buffered ciphertext and appends it to an array.
    ///
    /// - Parameters:
    ///   - buffer: the array to append plaintext to.
    ///   - maximumCount: the most bytes to append in this call; values below 1
    ///     count as 1. Default: 16 KiB (one full TLS record).
    /// - Returns: see ``readPlaintext(into:)-(UnsafeMutableRawBufferPointer)``.
    /// - Throws: see ``readPlaintext(into:)-(UnsafeMutableRawBufferPointer)``.
    public func readPlaintext(into buffer: inout [UInt8], maximumCount: Int = 16_384) throws(TLSError) -> ReadResult {
        let capacity = max(1, maximumCount)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 1)
        defer { scratch.deallocate() }
        let result = try readPlaintext(into: scratch)
        if case .bytes(let count) = result {
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
        }
        return result
    }

    /// Queues a close_notify alert (write it out with ``takeCiphertext()``).
    ///
    /// Does not wait for the server's close_notify; reading may continue until
    /// ``ReadResult/closed``. Writing is no longer allowed. Calling `close()`
    /// again, before the handshake completed, or after a failure does nothing
    /// beyond marking the session closed.
    public func close() {
        guard !sentCloseNotify else { return }
        sentCloseNotify = true
        guard failure == nil, handshakeComplete else { return }
        OpenSSL.clearErrorQueue()
        _ = SSL_shutdown(ssl)
        OpenSSL.clearErrorQueue()
    }

    // MARK: - Negotiated parameters

    /// The ALPN protocol the server selected (e.g. `"http/1.1"`), or `nil` if
    /// ALPN was not negotiated.
    public var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The negotiated protocol version in OpenSSL's spelling (`"TLSv1.3"`), or
    /// `nil` before the handshake completed.
    public var protocolVersion: String? {
        guard handshakeComplete, let name = SSL_get_version(ssl) else { return nil }
        return String(cString: name)
    }

    /// The negotiated protocol version, or `nil` before the handshake completed.
    public var negotiatedVersion: TLSVersion? {
        guard handshakeComplete else { return nil }
        return TLSVersion(openSSLValue: SSL_version(ssl))
    }

    /// Whether the handshake resumed a cached session (no certificate was sent;
    /// the pins and host name were checked against the certificate of the
    /// handshake that created the session). `false` before the handshake completed.
    public var isResumed: Bool {
        handshakeComplete && SSL_session_reused(ssl) == 1
    }

    /// The negotiated cipher suite in OpenSSL's spelling
    /// (`"TLS_AES_256_GCM_SHA384"`), or `nil` before the handshake completed.
    public var cipherSuite: String? {
        guard handshakeComplete, let cipher = SSL_get_current_cipher(ssl),
              let name = SSL_CIPHER_get_name(cipher) else { return nil }
        return String(cString: name)
    }

    // MARK: - Private

    /// Records a failure so that every later call rethrows it.
    private func fail(_ error: TLSError) -> TLSError {
        failure = error
        return error
    }

    /// Removes URL brackets around IPv6 literals and one trailing dot (the
    /// DNS root), which SNI and certificate names never carry.
    private static func normalizedServerName(_ name: String) -> String {
        var result = Substring(name)
        if result.hasPrefix("["), result.hasSuffix("]"), result.count >= 2 {
            result = result.dropFirst().dropLast()
        }
        if result.hasSuffix(".") {
            result = result.dropLast()
        }
        return String(result)
    }

    /// Whether a name is an IPv4 or IPv6 address literal.
    static func isIPAddress(_ name: String) -> Bool {
        var address = in6_addr()
        return name.withCString { pointer in
            inet_pton(AF_INET, pointer, &address) == 1 || inet_pton(AF_INET6, pointer, &address) == 1
        }
    }
}

/// A session is confined to the connection (and thread) that owns it.
@available(*, unavailable)
extension TLSClientSession: Sendable {}

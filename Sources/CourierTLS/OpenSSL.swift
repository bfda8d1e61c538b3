import COpenSSL

/// Small named wrappers around OpenSSL macros that Swift cannot import, and
/// helpers for reading OpenSSL's thread-local error queue.
///
/// OpenSSL implements many of its settings as function-like macros over the
/// generic `*_ctrl` functions (`SSL_CTX_set_min_proto_version`,
/// `SSL_set_tlsext_host_name`, `BIO_set_mem_eof_return`, ...). Swift imports
/// only the underlying functions and the integer `SSL_CTRL_*` constants, so
/// each macro used by CourierTLS is re-created here under the macro's meaning.
enum OpenSSL {
    // MARK: - Encoding

    /// Runs an OpenSSL `i2d_*` encoder twice: once for the length, once to encode.
    /// - Returns: the DER bytes, or `nil` when the encoder fails.
    static func derEncoding(
        _ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32
    ) -> [UInt8]? {
        let length = encode(nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return encode(&cursor)
        }
        return written == length ? bytes : nil
    }

    // MARK: - Context settings

    /// `SSL_CTX_set_min_proto_version(ctx, version)`.
    ///
    /// - Parameters:
    ///   - context: the `SSL_CTX` to configure.
    ///   - version: a protocol constant such as `TLS1_2_VERSION`.
    /// - Returns: `true` when OpenSSL accepted the version.
    static func setMinimumProtocolVersion(_ context: OpaquePointer, _ version: Int32) -> Bool {
        SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(version), nil) == 1
    }

    /// `SSL_CTX_set_mode(ctx, mode)`: adds mode bits to a context.
    ///
    /// - Parameters:
    ///   - context: the `SSL_CTX` to configure.
    ///   - mode: the `SSL_MODE_*` bits to add.
    static func addMode(_ context: OpaquePointer, _ mode: UInt32) {
        _ = SSL_CTX_ctrl(context, SSL_CTRL_MODE, Int(mode), nil)
    }

    /// `SSL_CTX_set_session_cache_mode(ctx, mode)`.
    ///
    /// - Parameters:
    ///   - context: the `SSL_CTX` to configure.
    ///   - mode: `SSL_SESS_CACHE_*` bits.
    static func setSessionCacheMode(_ context: OpaquePointer, _ mode: Int32) {
        _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_SESS_CACHE_MODE, Int(mode), nil)
    }

    /// `SSL_CTX_add1_chain_cert(ctx, x509)`: adds an intermediate certificate to the chain
    /// sent with the context's own certificate; the context takes a reference of its own.
    ///
    /// - Parameters:
    ///   - context: the `SSL_CTX` to configure.
    ///   - certificate: the `X509` to add.
    /// - Returns: `true` when OpenSSL accepted it.
    static func addChainCertificate(_ context: OpaquePointer, _ certificate: OpaquePointer) -> Bool {
        SSL_CTX_ctrl(context, SSL_CTRL_CHAIN_CERT, 1, UnsafeMutableRawPointer(certificate)) == 1
    }

    // MARK: - Connection settings

    /// `SSL_set_tlsext_host_name(ssl, name)`: the Server Name Indication sent in the ClientHello.
    ///
    /// - Parameters:
    ///   - ssl: the connection.
    ///   - name: the DNS host name (never an IP literal, RFC 6066 §3).
    /// - Returns: `true` when OpenSSL accepted the name.
    static func setServerNameIndication(_ ssl: OpaquePointer, _ name: String) -> Bool {
        name.withCString { pointer in
            SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name),
                     UnsafeMutableRawPointer(mutating: pointer)) == 1
        }
    }

    // MARK: - Memory BIOs

    /// `BIO_set_mem_eof_return(bio, value)`: what a read from an empty memory BIO returns.
    ///
    /// `-1` (with the retry flag set) means "no data yet, try again later";
    /// `0` means end of file.
    ///
    /// - Parameters:
    ///   - bio: a memory BIO.
    ///   - value: the return value for reads from the empty BIO.
    static func setMemoryEOFReturn(_ bio: OpaquePointer, _ value: Int) {
        _ = BIO_ctrl(bio, BIO_C_SET_BUF_MEM_EOF_RETURN, value, nil)
    }

    // MARK: - Error queue

    /// Empties this thread's OpenSSL error queue: before an `SSL_*` call, so that
    /// `SSL_get_error` after it sees only that call's errors, and after one, so that
    /// nothing is left for other code on the thread.
    ///
    /// `ERR_clear_error` resets all 16 slots of the queue; an empty queue (the
    /// usual case) needs only the check, so this clears only when an entry waits.
    /// (`SSL_get_error` answers want-read, want-write and zero-return only when
    /// the queue is empty, so those answers need no clearing after them.)
    static func clearErrorQueue() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    /// Drains this thread's OpenSSL error queue into one readable line.
    ///
    /// Entries are separated by `"; "`, oldest first, in OpenSSL's
    /// `error:XXXXXXXX:library::reason` form. The queue never contains key
    /// material or application data.
    ///
    /// - Returns: the joined entries, or an empty string if the queue was empty.
    static func drainErrorQueue() -> String {
        var entries: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        // Bounded: the queue holds at most ERR_NUM_ERRORS (16) entries.
        for _ in 0..<32 {
            let code = ERR_get_error()
            if code == 0 { break }
            buffer.withUnsafeMutableBufferPointer { pointer in
                ERR_error_string_n(code, pointer.baseAddress, pointer.count)
            }
            entries.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) },
                                  as: UTF8.self))
        }
        ERR_clear_error()
        return entries.joined(separator: "; ")
    }

    /// The reason codes (`ERR_GET_REASON`) of the entries in this thread's error
    /// queue, without removing them.
    ///
    /// - Returns: the reason codes of the first (oldest) and last (newest)
    ///   entries; both are 0 when the queue is empty.
    static func peekErrorReasons() -> (first: Int32, last: Int32) {
        (ERR_GET_REASON(ERR_peek_error()), ERR_GET_REASON(ERR_peek_last_error()))
    }

    /// OpenSSL's description of a certificate verification result
    /// (`X509_verify_cert_error_string`).
    ///
    /// - Parameter code: a value returned by `SSL_get_verify_result`.
    /// - Returns: a readable string such as `"certificate has expired"`.
    static func verifyErrorString(_ code: Int) -> String {
        guard let text = X509_verify_cert_error_string(code) else { return "verify error \(code)" }
        return String(cString: text)
    }
}

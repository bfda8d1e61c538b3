import CourierTLS

/// An origin's TLS session running inside an `https://` proxy's session (an `https` origin in
/// the proxy's tunnel): the one place that moves records between the two, for the HTTP/1.1 and
/// the HTTP/2 connection alike.
///
/// Outward, the origin's ciphertext is the proxy session's plaintext; inward, what the proxy's
/// session decrypts is the origin's ciphertext.
enum NestedTLS {
    /// Feeds bytes read from the socket (or, with `nil`, the socket's end) to `origin` through
    /// `proxy`: every complete proxy record is decrypted into the origin's session. With no proxy
    /// session (or no buffer), the bytes go to `origin` as they are.
    ///
    /// The proxy's close, with close_notify or without, ends the origin's input. Records the
    /// proxy's session writes on its own while reading go to `send`.
    /// - Parameters:
    ///   - bytes: what the socket gave, or `nil` at its end.
    ///   - proxy: the proxy's session, or `nil` when the origin's session is the socket's own.
    ///   - origin: the origin's session, inside it.
    ///   - buffer: room for one decrypted record.
    ///   - send: takes ciphertext for the socket.
    /// - Returns: the proxy session's failure (a corrupt record, a fatal alert), or `nil`.
    static func feed(_ bytes: UnsafeRawBufferPointer?, through proxy: TLSClientSession?, into origin: TLSClientSession,
                     buffer: UnsafeMutableRawBufferPointer?, send: ([UInt8]) -> Void) -> TLSError? {
        guard let proxy, let buffer else {
            if let bytes { origin.feedCiphertext(bytes) } else { origin.feedEndOfInput() }
            return nil
        }
        if let bytes { proxy.feedCiphertext(bytes) } else { proxy.feedEndOfInput() }
        // Bounded: each pass consumes a record of the proxy's buffered input, or returns.
        while true {
            switch Result(catching: { () throws(TLSError) in try proxy.readPlaintext(into: buffer) }) {
            case .success(.bytes(let count)):
                if count == 0 { return nil }
                origin.feedCiphertext(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            case .success(.wantsMoreInput):
                if proxy.pendingCiphertextCount > 0, let written = proxy.takeCiphertext() { send(written) }
                return nil
            case .success(.closed):
                origin.feedEndOfInput()
                return nil
            case .failure(let error):
                guard error == .uncleanShutdown else { return error }
                origin.feedEndOfInput()
                return nil
            }
        }
    }

    /// The proxy's records carrying `bytes` (the origin session's ciphertext, or `nil` for
    /// none), with whatever else the proxy's session had to write before them.
    /// - Throws: the proxy session's ``TLSError`` when it cannot encrypt.
    static func wrap(_ bytes: [UInt8]?, in proxy: TLSClientSession) throws(TLSError) -> [UInt8]? {
        if let bytes { try proxy.writePlaintext(bytes) }
        return proxy.takeCiphertext()
    }
}

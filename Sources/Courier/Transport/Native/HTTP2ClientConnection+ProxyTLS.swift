import CourierTLS

/// An HTTP/2 connection to an `https` origin in a tunnel through an `https://` proxy: the
/// origin's session (``HTTP2ClientConnection/tls``) runs inside the proxy's
/// (``HTTP2ClientConnection/proxyTLS``), as on the ``HTTP1ClientConnection`` it took over from.
/// What the origin's session writes is encrypted again by the proxy's before it reaches the
/// socket, and what the socket reads is decrypted by the proxy's before the origin's sees it.
/// Without a proxy session each step passes the bytes straight through.
extension HTTP2ClientConnection {
    /// Hands bytes read from the socket to ``tls``, through the proxy's session when there is one.
    func feedTLS(_ bytes: UnsafeRawBufferPointer) {
        guard let tls else { return }
        guard let proxyTLS else {
            tls.feedCiphertext(bytes)
            return
        }
        proxyTLS.feedCiphertext(bytes)
        unwrapProxyRecords(into: tls)
    }

    /// The socket reached its end: tells ``tls``, through the proxy's session when there is one.
    func feedTLSEndOfInput() {
        guard let tls else { return }
        guard let proxyTLS else {
            tls.feedEndOfInput()
            return
        }
        proxyTLS.feedEndOfInput()
        unwrapProxyRecords(into: tls)
    }

    /// Queues the origin session's ciphertext for the socket, encrypted again by the proxy's
    /// session when there is one. A proxy session that refuses them loses the connection.
    func queueForSocket(_ bytes: [UInt8]) {
        guard let proxyTLS else {
            outbound.append(contentsOf: bytes)
            return
        }
        do throws(TLSError) {
            try proxyTLS.writePlaintext(bytes)
        } catch {
            lost(proxyError(error))
            return
        }
        takeProxyCiphertext()
    }

    /// Ends the proxy's session with close_notify, after everything queued for it.
    func closeProxySession() {
        guard let proxyTLS else { return }
        proxyTLS.close()
        takeProxyCiphertext()
    }

    /// Moves what the proxy's session wrote (records carrying the origin's, or its own) to the
    /// socket's queue.
    private func takeProxyCiphertext() {
        guard let proxyTLS, let bytes = proxyTLS.takeCiphertext() else { return }
        outbound.append(contentsOf: bytes)
    }

    /// Decrypts every complete record of the proxy's session into the origin's session. The
    /// proxy's close (clean or not) ends the origin's input; a corrupt record loses the connection.
    private func unwrapProxyRecords(into tls: TLSClientSession) {
        guard let proxyTLS, let context else { return }
        let plain = context.plainBuffer
        while !isClosed {
            switch Result(catching: { () throws(TLSError) in try proxyTLS.readPlaintext(into: plain) }) {
            case .success(.bytes(let count)):
                if count == 0 { return }
                tls.feedCiphertext(UnsafeRawBufferPointer(rebasing: plain[..<count]))
            case .success(.wantsMoreInput):
                if proxyTLS.pendingCiphertextCount > 0 { takeProxyCiphertext() }
                return
            case .success(.closed):
                tls.feedEndOfInput()
                return
            case .failure(let error):
                if error == .uncleanShutdown {
                    tls.feedEndOfInput()
                } else {
                    lost(proxyError(error))
                }
                return
            }
        }
    }

    /// ``HTTPConnectionError/proxyTLSFailed``, naming the proxy.
    private func proxyError(_ error: TLSError) -> HTTPConnectionError {
        let name = key.proxy.map { "\($0)" } ?? "the proxy"
        return .proxyTLSFailed.with(detail: "TLS to \(name) failed: \(error)", underlying: error)
    }
}

import CourierTLS

/// An HTTP/2 connection to an `https` origin in a tunnel through an `https://` proxy: the
/// origin's session (``HTTP2ClientConnection/tls``) runs inside the proxy's
/// (``HTTP2ClientConnection/proxyTLS``), as on the ``HTTP1ClientConnection`` it took over from
/// (``NestedTLS`` moves the records). Without a proxy session each step passes the bytes straight
/// through.
extension HTTP2ClientConnection {
    /// Hands bytes read from the socket (`nil`: its end) to ``tls``, through the proxy's session
    /// when there is one.
    func feedTLS(_ bytes: UnsafeRawBufferPointer?) {
        guard let tls else { return }
        let failure = NestedTLS.feed(bytes, through: proxyTLS, into: tls, buffer: context?.plainBuffer) { outbound.append(contentsOf: $0) }
        if let failure { lost(proxyError(failure)) }
    }

    /// Queues the origin session's ciphertext for the socket, encrypted again by the proxy's
    /// session when there is one. A proxy session that refuses them loses the connection.
    func queueForSocket(_ bytes: [UInt8]) {
        guard let proxyTLS else {
            outbound.append(contentsOf: bytes)
            return
        }
        do throws(TLSError) {
            if let wrapped = try NestedTLS.wrap(bytes, in: proxyTLS) { outbound.append(contentsOf: wrapped) }
        } catch {
            lost(proxyError(error))
        }
    }

    /// Ends the proxy's session with close_notify, after everything queued for it.
    func closeProxySession() {
        guard let proxyTLS else { return }
        proxyTLS.close()
        if let bytes = proxyTLS.takeCiphertext() { outbound.append(contentsOf: bytes) }
    }

    /// ``HTTPConnectionError/proxyTLSFailed``, naming the proxy.
    private func proxyError(_ error: TLSError) -> HTTPConnectionError {
        guard let proxy = key.proxy else { return NativeErrors.tls(error) }
        return NativeErrors.proxyTLS(error, proxy: proxy)
    }
}

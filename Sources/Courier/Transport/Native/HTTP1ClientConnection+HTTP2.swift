import CourierWire

extension HTTP1ClientConnection {
    /// What the established connection speaks.
    enum NegotiatedProtocol {
        case http1
        case http2
        /// HTTP/2 is required (prior knowledge over TLS) and the server did not pick it.
        case refused(HTTPConnectionError)
    }

    /// What the established connection speaks: over TLS what ALPN picked, in the cleartext
    /// HTTP/2 by prior knowledge when configured. Through a forwarding proxy, HTTP/1.1 (whose
    /// TLS session, if any, is the proxy's, offering `http/1.1` alone).
    var negotiatedProtocol: NegotiatedProtocol {
        if key.forwardsThroughProxy { return .http1 }
        guard let tls else {
            return settings.httpVersion == .http2PriorKnowledge ? .http2 : .http1
        }
        if tls.negotiatedProtocol == "h2" { return .http2 }
        if settings.httpVersion == .http2PriorKnowledge {
            return .refused(.badResponse.with(
                detail: "\(key) did not pick h2 with ALPN, and the transport speaks HTTP/2 only (http2PriorKnowledge)"))
        }
        return .http1
    }

    /// Hands the socket and the TLS session (and the `https://` proxy's session it runs inside,
    /// if any) to a new ``HTTP2ClientConnection``, which takes this connection's place (and id)
    /// in the pool; this one is finished without closing the socket.
    func handOverToHTTP2() {
        guard let socket, let pool else { return }
        loop.deregister(fd: socket.descriptor)
        let unwritten = cipherOffset < cipherOut.count ? Array(cipherOut[cipherOffset...]) : []
        let successor = HTTP2ClientConnection(key: key, loop: loop, settings: settings, poolID: poolID, timeline: timeline,
                                              socket: socket, tls: tls, proxyTLS: proxyTLS, pendingOutput: unwritten)
        successor.selfBound = LoopBound(successor, on: loop)
        self.socket = nil
        self.tls = nil
        proxyTLS = nil
        interest = .none
        _ = machine.close()
        _ = tearDown()
        pool.connectionUpgraded(self, to: successor)
        successor.start()
    }
}

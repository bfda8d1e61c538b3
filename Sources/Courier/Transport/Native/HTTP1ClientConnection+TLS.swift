import CourierTLS
import CourierWire

extension HTTP1ClientConnection {
    /// Starts the TLS handshake the machine asked for: to the origin, or, for plain `http`
    /// forwarded by an `https://` proxy, to the proxy (its name, its own ``Proxy/tls`` options).
    func startHandshake() {
        if handshakesWithProxy, let proxy = key.proxy {
            do throws(HTTPConnectionError) {
                startTLS(try settings.proxyTLS.context(for: proxy), serverName: proxy.host, port: proxy.port)
            } catch {
                perform(machine.establishmentFailed(error))
            }
        } else if let tlsContext {
            startTLS(tlsContext, serverName: key.host, port: key.port)
        }
    }

    /// Whether the connection's TLS handshake (``tls``) is with the proxy rather than the origin.
    var handshakesWithProxy: Bool {
        key.tlsToProxy && key.forwardsThroughProxy
    }

    /// The request's error for a failed TLS session: the certificate and handshake kinds for the
    /// origin, ``HTTPConnectionError/proxyTLSFailed`` (naming the proxy) for a proxy.
    func tlsError(_ error: TLSError, proxy: Bool) -> HTTPConnectionError {
        guard proxy, let name = key.proxy else { return NativeErrors.tls(error) }
        return NativeErrors.proxyTLS(error, proxy: name)
    }

    /// The error for a socket that closed or broke (`error`) during a TLS handshake, whether a
    /// read or a write met it first: ``HTTPConnectionError/tlsFailed`` for the origin's
    /// handshake, ``HTTPConnectionError/proxyTLSFailed`` for a proxy's (the connection's
    /// description names the proxy).
    func handshakeBroke(_ error: (any Error)?, withProxy: Bool) -> HTTPConnectionError {
        let broken = withProxy ? HTTPConnectionError.proxyTLSFailed : .tlsFailed
        return broken.with(detail: "the connection to \(key) broke during the TLS handshake\(withProxy ? " with the proxy" : "")",
                           underlying: error)
    }

    /// Starts the TLS handshake on a connected socket (SNI, verification and ALPN per the context).
    private func startTLS(_ context: TLSContext, serverName: String, port: Int) {
        do {
            tls = try TLSClientSession(context: context, serverName: serverName, port: port)
        } catch {
            perform(machine.establishmentFailed(tlsError(error, proxy: handshakesWithProxy)))
            return
        }
        setInterest(.readable)
        handshakeStep()
    }

    /// The most reads one readiness event handles during the handshake; level-triggered epoll
    /// reports the rest.
    static let handshakeReadsPerWakeup = 16

    /// Reads handshake bytes from the server and advances the handshake after every read, so the
    /// session never buffers more than one read of unprocessed ciphertext, however fast the peer
    /// sends: a peer that streams garbage fails at its first record.
    func readHandshake() {
        guard let context, let socket, tls != nil else { return }
        let buffer = context.readBuffer
        for _ in 0..<Self.handshakeReadsPerWakeup where isHandshaking {
            let result: Socket.IOResult
            do {
                result = try socket.read(into: buffer)
            } catch {
                perform(machine.establishmentFailed(handshakeBroke(error, withProxy: handshakesWithProxy)))
                return
            }
            switch result {
            case .bytes(let count):
                feedTLS(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                handshakeStep()
                if count < buffer.count { return }
            case .wouldBlock:
                return
            case .closed:
                feedTLS(nil)
                handshakeStep()
                return
            }
        }
    }

    /// Runs the handshake as far as the bytes received allow, and sends what it produced.
    ///
    /// The flight that completes the handshake (the client's Finished) goes out with what the
    /// ready connection writes first, in one write: the first request's records, or over HTTP/2
    /// the connection preface. That saves a system call per new connection, and the server a
    /// read.
    private func handshakeStep() {
        guard let tls else { return }
        let outcome = Result { () throws(TLSError) in try tls.handshake() }
        takeCiphertext()
        if case .success(.complete) = outcome, isHandshaking {
            onlyHandshakePending = cipherOffset < cipherOut.count
            perform(machine.handshakeCompleted(at: EventLoop.now()))
            // Nothing was encrypted after it (no request waiting): the Finished goes out now.
            if onlyHandshakePending { flush() }
            // Application data that arrived with the last handshake flight.
            drainPlaintext()
            return
        }
        flush()
        guard isHandshaking, case .failure(let error) = outcome else { return }
        perform(machine.establishmentFailed(tlsError(error, proxy: handshakesWithProxy)))
    }

    /// Whether the machine is in the TLS handshake.
    private var isHandshaking: Bool {
        if case .handshaking = machine.state { return true }
        return false
    }
}

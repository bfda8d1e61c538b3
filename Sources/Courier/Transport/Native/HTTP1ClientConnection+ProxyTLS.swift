import CourierTLS
import CourierWire

/// TLS to an `https://` proxy that carries a tunnel: ``HTTP1ClientConnection/proxyTLS``.
///
/// The proxy's session runs first, in the machine's `tunnelling` state: its handshake, then the
/// `CONNECT` exchange as its plaintext. Once the tunnel is open the origin's session
/// (``HTTP1ClientConnection/tls``) runs inside it: what the origin's session writes is encrypted
/// again by the proxy's before it reaches the socket, and what the socket reads is decrypted by
/// the proxy's session before the origin's sees it. (Plain `http` forwarded by an `https://`
/// proxy needs no nesting: its one session, ``HTTP1ClientConnection/tls``, is the proxy's.)
extension HTTP1ClientConnection {
    /// Starts the TLS handshake with the proxy; `machine` runs once it completes.
    func startProxyTLS(_ proxy: Proxy, then machine: ProxyTunnel.Machine) {
        do throws(HTTPConnectionError) {
            let context = try settings.proxyTLS.context(for: proxy)
            do throws(TLSError) {
                proxyTLS = try TLSClientSession(context: context, serverName: proxy.host, port: proxy.port)
            } catch {
                throw tlsError(error, proxy: true)
            }
        } catch {
            perform(self.machine.establishmentFailed(error))
            return
        }
        tunnel = ProxyTunnel(machine: machine)
        proxyHandshakeStep()
    }

    /// Runs the proxy's handshake as far as the bytes received allow and sends what it produced;
    /// when it completes, the tunnel's machine starts.
    func proxyHandshakeStep() {
        guard let proxyTLS else { return }
        let outcome = Result { () throws(TLSError) in try proxyTLS.handshake() }
        if let bytes = proxyTLS.takeCiphertext() {
            tunnel?.pending += bytes
            flushTunnel()
        }
        guard case .tunnelling = machine.state, tunnel != nil else { return }
        switch outcome {
        case .success(.complete):
            handleTunnel(tunnel?.start() ?? .none)
        case .success(.wantsMoreInput):
            return
        case .failure(let error):
            tunnel = nil
            perform(machine.establishmentFailed(tlsError(error, proxy: true)))
        }
    }

    /// Bytes from the proxy while tunnelling over TLS: handshake records, or the proxy's answer
    /// to `CONNECT` (handed to the tunnel's machine).
    func receivedFromTLSProxy(_ bytes: UnsafeRawBufferPointer) {
        guard let proxyTLS, let context else { return }
        proxyTLS.feedCiphertext(bytes)
        if !proxyTLS.isHandshakeComplete {
            proxyHandshakeStep()
            if !proxyTLS.isHandshakeComplete { return }
        }
        let plain = context.plainBuffer
        while tunnel != nil, case .tunnelling = machine.state {
            switch Result(catching: { () throws(TLSError) in try proxyTLS.readPlaintext(into: plain) }) {
            case .success(.bytes(let count)):
                if count == 0 { return }
                handleTunnel(tunnel?.received(UnsafeRawBufferPointer(rebasing: plain[..<count])) ?? .none)
            case .success(.wantsMoreInput):
                return
            case .success(.closed):
                handleTunnel(tunnel?.peerClosed(nil) ?? .none)
                return
            case .failure(let error):
                if error == .uncleanShutdown {
                    handleTunnel(tunnel?.peerClosed(error) ?? .none)
                } else {
                    tunnel = nil
                    perform(machine.establishmentFailed(tlsError(error, proxy: true)))
                }
                return
            }
        }
    }

    /// The proxy closed the connection while tunnelling over TLS.
    func tlsProxyClosed() {
        guard let proxyTLS else { return }
        proxyTLS.feedEndOfInput()
        if proxyTLS.isHandshakeComplete {
            handleTunnel(tunnel?.peerClosed(nil) ?? .none)
        } else {
            proxyHandshakeStep()
        }
    }

    /// The proxy's ciphertext carrying `bytes` (the origin session's ciphertext), or `bytes` as
    /// they are without a proxy session. A proxy session that refuses them closes the connection.
    func wrappedForProxy(_ bytes: [UInt8]?) -> [UInt8]? {
        guard let proxyTLS else { return bytes }
        if let bytes {
            do throws(TLSError) {
                try proxyTLS.writePlaintext(bytes)
            } catch {
                perform(machine.close(failing: tlsError(error, proxy: true)))
                return nil
            }
        }
        return proxyTLS.takeCiphertext()
    }

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

    /// Decrypts every complete record of the proxy's session into the origin's session. The
    /// proxy's close (clean or not) ends the origin's input; a corrupt record fails the connection.
    private func unwrapProxyRecords(into tls: TLSClientSession) {
        guard let proxyTLS, let context else { return }
        let plain = context.plainBuffer
        while true {
            switch Result(catching: { () throws(TLSError) in try proxyTLS.readPlaintext(into: plain) }) {
            case .success(.bytes(let count)):
                if count == 0 { return }
                tls.feedCiphertext(UnsafeRawBufferPointer(rebasing: plain[..<count]))
            case .success(.wantsMoreInput):
                if proxyTLS.pendingCiphertextCount > 0, let bytes = proxyTLS.takeCiphertext() {
                    cipherOut.append(contentsOf: bytes)
                }
                return
            case .success(.closed):
                tls.feedEndOfInput()
                return
            case .failure(let error):
                if error == .uncleanShutdown {
                    tls.feedEndOfInput()
                } else {
                    perform(machine.close(failing: tlsError(error, proxy: true)))
                }
                return
            }
        }
    }
}

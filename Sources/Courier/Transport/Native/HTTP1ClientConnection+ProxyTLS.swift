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
        do throws(TLSError) {
            return try NestedTLS.wrap(bytes, in: proxyTLS)
        } catch {
            perform(machine.close(failing: tlsError(error, proxy: true)))
            return nil
        }
    }

    /// Hands bytes read from the socket (`nil`: its end) to ``tls``, through the proxy's session
    /// when there is one (``NestedTLS``).
    func feedTLS(_ bytes: UnsafeRawBufferPointer?) {
        guard let tls else { return }
        let failure = NestedTLS.feed(bytes, through: proxyTLS, into: tls, buffer: context?.plainBuffer) { cipherOut.append(contentsOf: $0) }
        if let failure { perform(machine.close(failing: tlsError(failure, proxy: true))) }
    }
}

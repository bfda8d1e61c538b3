import CourierWire

extension HTTP1ClientConnection {
    /// Opens the tunnel to the origin through the proxy the socket is connected to: `CONNECT`
    /// for an HTTP proxy (after a TLS handshake with an `https://` one), the SOCKS5 handshake
    /// otherwise. A `socks5` proxy (not `socks5h`) is given an address: a host name is resolved
    /// here first (the address overrides apply).
    func startTunnel() {
        guard let proxy = key.proxy else {
            perform(machine.establishmentFailed(.transportFailed.with(detail: "\(key): a tunnel without a proxy")))
            return
        }
        let literal = SocketAddress(ip: key.host, port: key.port)
        switch proxy.kind {
        case .http:
            begin(.connect(HTTPConnectTunnelMachine(host: key.host, port: key.port, proxy: proxy, limits: settings.limits)))
        case .https:
            startProxyTLS(proxy, then: .connect(HTTPConnectTunnelMachine(host: key.host, port: key.port, proxy: proxy, limits: settings.limits)))
        case .socks5h:
            let destination = literal.map(SOCKS5HandshakeMachine.Destination.address) ?? .name(key.host)
            begin(.socks5(SOCKS5HandshakeMachine(destination: destination, port: key.port, proxy: proxy)))
        case .socks5:
            if let address = literal ?? settings.resolver.knownAddresses(host: key.host, port: key.port)?.first {
                begin(.socks5(SOCKS5HandshakeMachine(destination: .address(address), port: key.port, proxy: proxy)))
                return
            }
            guard let selfBound else { return }
            settings.resolver.resolve(host: key.host, port: key.port, on: loop) { result in
                selfBound.value.resolvedForSOCKS(result, proxy: proxy)
            }
        }
    }

    /// The origin's name was resolved for a `socks5` proxy: the handshake starts with its first address.
    private func resolvedForSOCKS(_ result: Result<[SocketAddress], SocketError>, proxy: Proxy) {
        guard case .tunnelling = machine.state else { return }
        switch result {
        case .success(let addresses):
            guard let address = addresses.first else {
                perform(machine.establishmentFailed(.cannotResolveHost.with(detail: "\(key.host): no address to give the SOCKS5 proxy")))
                return
            }
            begin(.socks5(SOCKS5HandshakeMachine(destination: .address(address), port: key.port, proxy: proxy)))
        case .failure(let error):
            perform(machine.establishmentFailed(NativeErrors.connect(error, key: NativePoolKey(secure: key.secure, host: key.host, port: key.port))))
        }
    }

    /// Starts the handshake `machine`.
    private func begin(_ machine: ProxyTunnel.Machine) {
        tunnel = ProxyTunnel(machine: machine)
        let action = tunnel?.start() ?? .none
        handleTunnel(action)
    }

    /// Carries out what the handshake decided. Over TLS to the proxy, what it writes is encrypted first.
    func handleTunnel(_ action: ProxyTunnelAction) {
        switch action {
        case .none:
            break
        case .write(let bytes):
            guard let wrapped = wrappedForProxy(bytes) else { return }
            tunnel?.pending += wrapped
            flushTunnel()
        case .established:
            tunnel = nil
            setInterest(.readable)
            perform(machine.tunnelEstablished(at: EventLoop.now()))
        case .fail(let error):
            tunnel = nil
            perform(machine.establishmentFailed(error))
        }
    }

    /// Writes what the handshake has pending, as far as the socket takes it.
    func flushTunnel() {
        guard let socket, let tunnel else { return }
        var written = tunnel.written
        defer { self.tunnel?.written = written }
        while written < tunnel.pending.count {
            let offset = written
            let result = tunnel.pending.withUnsafeBytes { all in
                Result { () throws(SocketError) in try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
            }
            switch result {
            case .success(.bytes(let count)):
                written += count
            case .success(.wouldBlock):
                setInterest([.readable, .writable])
                return
            case .success(.closed):
                tunnelBroke(nil)
                return
            case .failure(let error):
                tunnelBroke(error)
                return
            }
        }
        self.tunnel?.pending = []
        written = 0
        setInterest(.readable)
    }

    /// The socket to the proxy closed or broke (`error`, when known) while tunnelling. During
    /// the TLS handshake with an `https://` proxy that is the handshake failing
    /// (``HTTPConnectionError/proxyTLSFailed``, as when the session itself sees the close);
    /// after it, the proxy closed before the tunnel was open (the tunnel machine's error).
    private func tunnelBroke(_ error: (any Error)?) {
        if let proxyTLS, !proxyTLS.isHandshakeComplete {
            tunnel = nil
            perform(machine.establishmentFailed(handshakeBroke(error, withProxy: true)))
            return
        }
        handleTunnel(tunnel?.peerClosed(error) ?? .none)
    }

    /// Reads the proxy's answer and hands it to the handshake.
    func readTunnel() {
        guard let context, let socket else { return }
        let buffer = context.readBuffer
        for _ in 0..<Self.handshakeReadsPerWakeup {
            guard tunnel != nil, case .tunnelling = machine.state else { return }
            let result: Socket.IOResult
            do {
                result = try socket.read(into: buffer)
            } catch {
                tunnelBroke(error)
                return
            }
            switch result {
            case .bytes(let count):
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                if proxyTLS != nil {
                    receivedFromTLSProxy(bytes)
                } else {
                    handleTunnel(tunnel?.received(bytes) ?? .none)
                }
                if count < buffer.count { return }
            case .wouldBlock:
                return
            case .closed:
                if proxyTLS != nil {
                    tlsProxyClosed()
                } else {
                    handleTunnel(tunnel?.peerClosed(nil) ?? .none)
                }
                return
            }
        }
    }
}

/// The proxy handshake of one connection: a ``HTTPConnectTunnelMachine`` or a
/// ``SOCKS5HandshakeMachine``, and the bytes it asked to write that the socket has not taken yet.
struct ProxyTunnel {
    /// The handshake in progress.
    enum Machine {
        /// `CONNECT` through an HTTP proxy.
        case connect(HTTPConnectTunnelMachine)
        /// SOCKS5.
        case socks5(SOCKS5HandshakeMachine)
    }

    /// The handshake in progress.
    var machine: Machine
    /// Bytes to write to the proxy.
    var pending: [UInt8] = []
    /// How many of ``pending`` were written.
    var written = 0

    /// The first action of the handshake.
    mutating func start() -> ProxyTunnelAction {
        switch machine {
        case .connect(var inner): defer { machine = .connect(inner) }; return inner.start()
        case .socks5(var inner): defer { machine = .socks5(inner) }; return inner.start()
        }
    }

    /// Bytes arrived from the proxy.
    mutating func received(_ bytes: UnsafeRawBufferPointer) -> ProxyTunnelAction {
        switch machine {
        case .connect(var inner): defer { machine = .connect(inner) }; return inner.received(bytes)
        case .socks5(var inner): defer { machine = .socks5(inner) }; return inner.received(bytes)
        }
    }

    /// The proxy closed the connection, or reading from it failed with `error`.
    mutating func peerClosed(_ error: (any Error)?) -> ProxyTunnelAction {
        switch machine {
        case .connect(var inner): defer { machine = .connect(inner) }; return inner.peerClosed(error)
        case .socks5(var inner): defer { machine = .socks5(inner) }; return inner.peerClosed(error)
        }
    }
}

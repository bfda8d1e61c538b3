/// What the driver of a proxy handshake (``HTTPConnectTunnelMachine``,
/// ``SOCKS5HandshakeMachine``) does after an event.
enum ProxyTunnelAction: Equatable {
    /// Nothing yet: wait for more bytes from the proxy.
    case none
    /// Write these bytes to the proxy, then wait for its answer.
    case write([UInt8])
    /// The tunnel is open: the connection now reaches the origin (TLS, if any, starts now).
    case established
    /// The tunnel could not be opened: close the connection and fail with this error.
    case fail(HTTPConnectionError)
}

import CourierWire

/// Opens a tunnel through a SOCKS5 proxy (RFC 1928), with username and password authentication
/// (RFC 1929) when the proxy has credentials, as a value type: bytes in, ``ProxyTunnelAction``
/// out. ``HTTP1ClientConnection`` drives it on the socket to the proxy; its tests feed it bytes.
///
/// The exchange:
/// 1. ``start()``: the greeting offers "no authentication" (`0x00`), and also
///    "username/password" (`0x02`) when there are credentials.
/// 2. The proxy picks one. `0x02` is answered with the RFC 1929 request; status 0 accepts it.
///    "No acceptable methods" (`0xFF`), `0x02` without credentials, a refused password, or any
///    other method is ``HTTPConnectionError/proxyAuthenticationRequired`` (or
///    ``HTTPConnectionError/proxyBadResponse`` for a method that was not offered).
/// 3. `CONNECT` to the destination: a domain name (ATYP 3, for `socks5h`) or an IPv4/IPv6
///    address (ATYP 1/4), and the port.
/// 4. The reply: `0x00` opens the tunnel. Each failure code of RFC 1928 §6 is a named error whose
///    detail quotes the RFC's words: `0x02` ``HTTPConnectionError/proxyForbidden``;
///    `0x03`–`0x06` ``HTTPConnectionError/proxyCannotReachOrigin``; `0x01`, `0x07`, `0x08` and
///    unassigned codes ``HTTPConnectionError/proxyRejected``.
///
/// Every message has a known length, so any byte the proxy sends beyond it, a wrong version
/// byte or an unknown address type is ``HTTPConnectionError/proxyBadResponse``, and a close
/// before the reply is ``HTTPConnectionError/proxyClosedConnection``. The RFC 1929 reply's
/// version byte may be 1 (the RFC) or 5 (sent by some servers).
struct SOCKS5HandshakeMachine {
    /// Where the tunnel leads.
    enum Destination: Equatable {
        /// A host name, resolved by the proxy (`socks5h`); at most 255 bytes.
        case name(String)
        /// An IPv4 or IPv6 address (its port is not used).
        case address(SocketAddress)
    }

    /// Where the exchange is.
    enum State: Equatable {
        /// ``start()`` not called yet.
        case initial
        /// The greeting was sent; waiting for the chosen method (2 bytes).
        case awaitingMethod
        /// The username and password were sent; waiting for the status (2 bytes).
        case awaitingAuthentication
        /// The CONNECT request was sent; waiting for the reply.
        case awaitingReply
        /// The tunnel is open.
        case open
        /// The tunnel failed; the connection must close.
        case failed
    }

    /// The protocol version byte of RFC 1928.
    static let version: UInt8 = 5
    /// The meaning of each reply code, in the words of RFC 1928 §6.
    static let replyMeanings: [UInt8: String] = [
        0x01: "general SOCKS server failure",
        0x02: "connection not allowed by ruleset",
        0x03: "Network unreachable",
        0x04: "Host unreachable",
        0x05: "Connection refused",
        0x06: "TTL expired",
        0x07: "Command not supported",
        0x08: "Address type not supported",
    ]

    /// Where the exchange is.
    private(set) var state = State.initial
    /// Where the tunnel leads.
    let destination: Destination
    /// The destination port.
    let port: Int
    /// The proxy, with its credentials if any; named in errors (without them).
    let proxy: Proxy
    /// Bytes of the current answer received so far (at most one message: 262 bytes).
    private var received: [UInt8] = []

    /// A machine for a tunnel to `destination`:`port` through `proxy`.
    init(destination: Destination, port: Int, proxy: Proxy) {
        self.destination = destination
        self.port = port
        self.proxy = proxy
    }

    /// The destination as errors show it.
    private var target: String {
        switch destination {
        case .name(let name): "\(name):\(port)"
        case .address(let address): address.withPort(port).description
        }
    }

    /// The greeting to write; fails at once for credentials or a name RFC 1928/1929 cannot carry.
    mutating func start() -> ProxyTunnelAction {
        guard state == .initial else { return .none }
        if let credentials = proxy.credentials {
            let user = credentials.username.utf8.count, password = credentials.password.utf8.count
            guard (1...255).contains(user), (1...255).contains(password) else {
                return fail(.invalidRequest.with(detail: "SOCKS5 usernames and passwords are 1 to 255 bytes (RFC 1929)"))
            }
        }
        if case .name(let name) = destination, !(1...255).contains(name.utf8.count) {
            return fail(.invalidURL.with(detail: "a SOCKS5 host name is 1 to 255 bytes (RFC 1928)"))
        }
        state = .awaitingMethod
        return .write(proxy.credentials == nil ? [Self.version, 1, 0x00] : [Self.version, 2, 0x00, 0x02])
    }

    /// Bytes arrived from the proxy.
    mutating func received(_ bytes: UnsafeRawBufferPointer) -> ProxyTunnelAction {
        switch state {
        case .initial, .failed:
            return .none
        case .open:
            return fail(.proxyBadResponse.with(detail: "\(proxy) sent bytes after opening the tunnel to \(target)"))
        case .awaitingMethod, .awaitingAuthentication, .awaitingReply:
            break
        }
        received.append(contentsOf: bytes)
        guard let length = expectedLength() else { return .none }
        if received.count < length { return .none }
        if received.count > length {
            return fail(.proxyBadResponse.with(detail: "\(proxy) sent \(received.count - length) bytes more than the SOCKS5 message"))
        }
        let message = received
        received.removeAll(keepingCapacity: true)
        switch state {
        case .awaitingMethod: return methodChosen(message)
        case .awaitingAuthentication: return authenticated(message)
        default: return replied(message)
        }
    }

    /// The proxy closed the connection (or it broke) before the tunnel was open.
    mutating func peerClosed(_ underlying: (any Error)? = nil) -> ProxyTunnelAction {
        switch state {
        case .open, .failed: return .none
        default:
            return fail(.proxyClosedConnection.with(detail: "\(proxy) closed the connection during the SOCKS5 handshake for \(target)",
                                                    underlying: underlying))
        }
    }

    /// The length of the message being received, once enough of it is known; `nil` until then.
    /// A reply's length depends on its address type (the 5th byte, and the 6th for a name).
    private func expectedLength() -> Int? {
        guard state == .awaitingReply else { return 2 }
        guard received.count >= 4 else { return nil }
        switch received[3] {
        case 0x01: return 4 + 4 + 2
        case 0x04: return 4 + 16 + 2
        case 0x03:
            guard received.count >= 5 else { return nil }
            return 4 + 1 + Int(received[4]) + 2
        default: return 4  // reported as a bad address type once the version is checked
        }
    }

    /// The proxy chose an authentication method.
    private mutating func methodChosen(_ message: [UInt8]) -> ProxyTunnelAction {
        guard message[0] == Self.version else { return badVersion(message[0]) }
        switch message[1] {
        case 0x00:
            return sendConnect()
        case 0x02:
            guard let credentials = proxy.credentials else {
                return fail(.proxyAuthenticationRequired.with(detail: "\(proxy) requires a username and password (SOCKS5 method 0x02); none were configured"))
            }
            state = .awaitingAuthentication
            var bytes: [UInt8] = [0x01, UInt8(credentials.username.utf8.count)]
            bytes += credentials.username.utf8
            bytes.append(UInt8(credentials.password.utf8.count))
            bytes += credentials.password.utf8
            return .write(bytes)
        case 0xFF:
            let offered = proxy.credentials == nil ? "no authentication" : "no authentication or a username and password"
            return fail(.proxyAuthenticationRequired.with(detail: "\(proxy) accepts none of the offered SOCKS5 methods (\(offered))"))
        default:
            return fail(.proxyBadResponse.with(detail: "\(proxy) chose SOCKS5 method \(hex(message[1])), which was not offered"))
        }
    }

    /// The proxy answered the username and password.
    private mutating func authenticated(_ message: [UInt8]) -> ProxyTunnelAction {
        guard message[0] == 0x01 || message[0] == Self.version else { return badVersion(message[0]) }
        guard message[1] == 0x00 else {
            return fail(.proxyAuthenticationRequired.with(detail: "\(proxy) rejected the SOCKS5 username and password (status \(hex(message[1])))"))
        }
        return sendConnect()
    }

    /// The CONNECT request.
    private mutating func sendConnect() -> ProxyTunnelAction {
        state = .awaitingReply
        var bytes: [UInt8] = [Self.version, 0x01, 0x00]
        switch destination {
        case .name(let name):
            bytes.append(0x03)
            bytes.append(UInt8(name.utf8.count))
            bytes += name.utf8
        case .address(let address):
            bytes.append(address.family == .ipv4 ? 0x01 : 0x04)
            bytes += address.addressBytes
        }
        bytes.append(UInt8(port >> 8))
        bytes.append(UInt8(port & 0xFF))
        return .write(bytes)
    }

    /// The proxy replied to CONNECT.
    private mutating func replied(_ message: [UInt8]) -> ProxyTunnelAction {
        guard message[0] == Self.version else { return badVersion(message[0]) }
        let code = message[1]
        guard code == 0x00 else {
            let meaning = Self.replyMeanings[code] ?? "unassigned reply code"
            let detail = "\(proxy) replied \(hex(code)) (\(meaning)) to CONNECT \(target)"
            switch code {
            case 0x02: return fail(.proxyForbidden.with(detail: detail))
            case 0x03...0x06: return fail(.proxyCannotReachOrigin.with(detail: detail))
            default: return fail(.proxyRejected.with(detail: detail))
            }
        }
        guard [0x01, 0x03, 0x04].contains(message[3]) else {
            return fail(.proxyBadResponse.with(detail: "\(proxy) replied with an unknown SOCKS5 address type \(hex(message[3]))"))
        }
        state = .open
        return .established
    }

    private mutating func badVersion(_ byte: UInt8) -> ProxyTunnelAction {
        fail(.proxyBadResponse.with(detail: "\(proxy) answered with version \(hex(byte)), not SOCKS5"))
    }

    private mutating func fail(_ error: HTTPConnectionError) -> ProxyTunnelAction {
        state = .failed
        received = []
        return .fail(error)
    }

    private func hex(_ byte: UInt8) -> String {
        "0x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
    }
}

import CourierHTTP1
import Foundation

/// Opens a tunnel through an HTTP proxy with `CONNECT host:port` (RFC 9110 §9.3.6), as a value
/// type: bytes in, ``ProxyTunnelAction`` out. ``HTTP1ClientConnection`` drives it on the socket
/// to the proxy; its tests feed it byte strings.
///
/// - ``start()`` returns the request: `CONNECT host:port HTTP/1.1`, `Host`, and
///   `Proxy-Authorization: Basic …` when the proxy has credentials. Nothing else is sent, so the
///   proxy learns no more than the origin's authority.
/// - The answer's head is parsed within the transport's head limits; interim (1xx) answers are
///   skipped, at most ``maxInterimResponses``.
/// - Any 2xx opens the tunnel. The bytes after that head belong to the origin, which does not
///   speak first in HTTP or TLS: any such byte fails as ``HTTPConnectionError/proxyBadResponse``.
/// - `407` is ``HTTPConnectionError/proxyAuthenticationRequired``, `403`
///   ``HTTPConnectionError/proxyForbidden``, `502`/`503`/`504`
///   ``HTTPConnectionError/proxyCannotReachOrigin``, any other status
///   ``HTTPConnectionError/proxyRejected``; a close before the answer is complete is
///   ``HTTPConnectionError/proxyClosedConnection``, a malformed or oversized head
///   ``HTTPConnectionError/proxyBadResponse``.
///
/// Error details name the proxy (never its credentials), the origin and the status.
struct HTTPConnectTunnelMachine {
    /// Where the exchange is.
    enum State: Equatable {
        /// ``start()`` not called yet.
        case initial
        /// The request was handed out; the answer is being read.
        case awaitingReply
        /// The tunnel is open.
        case open
        /// The tunnel failed; the connection must close.
        case failed
    }

    /// The most interim (1xx) answers accepted before the final one.
    static let maxInterimResponses = 10

    /// Where the exchange is.
    private(set) var state = State.initial
    /// The origin's authority: `host:port`, an IPv6 address in brackets.
    let authority: String
    /// The proxy, named in errors.
    let proxy: Proxy
    private var parser: ResponseHeadParser
    private var interimResponses = 0

    /// A machine for a tunnel to `host`:`port` through `proxy`.
    /// - Parameters:
    ///   - host: the origin's host (an IPv6 address without brackets).
    ///   - port: the origin's port.
    ///   - proxy: the HTTP proxy, with its credentials if any.
    ///   - limits: the head size and field count limits for the proxy's answer.
    init(host: String, port: Int, proxy: Proxy, limits: HTTP1Limits) {
        self.authority = "\(HostText.bracketed(host)):\(port)"
        self.proxy = proxy
        self.parser = ResponseHeadParser(limits: limits)
    }

    /// The request to write to the proxy.
    mutating func start() -> ProxyTunnelAction {
        guard state == .initial else { return .none }
        state = .awaitingReply
        var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let credentials = proxy.credentials {
            text += "Proxy-Authorization: \(credentials.basicAuthorization)\r\n"
        }
        text += "\r\n"
        return .write(Array(text.utf8))
    }

    /// Bytes arrived from the proxy.
    mutating func received(_ bytes: UnsafeRawBufferPointer) -> ProxyTunnelAction {
        guard state == .awaitingReply else {
            return state == .open ? fail(.proxyBadResponse.with(detail: "\(proxy) sent bytes after opening the tunnel to \(authority)")) : .none
        }
        var rest = bytes
        while true {
            let parsed: (head: HTTPResponseHead, consumed: Int)?
            do {
                parsed = try parser.parse(rest)
            } catch {
                return fail(.proxyBadResponse.with(detail: "\(proxy) answered CONNECT \(authority) with an invalid head", underlying: error))
            }
            guard let (head, consumed) = parsed else { return .none }
            rest = UnsafeRawBufferPointer(rebasing: rest[consumed...])
            switch head.status {
            case 100...199:
                interimResponses += 1
                if interimResponses > Self.maxInterimResponses {
                    return fail(.proxyBadResponse.with(detail: "\(proxy) sent more than \(Self.maxInterimResponses) interim answers to CONNECT"))
                }
                continue
            case 200...299:
                guard rest.isEmpty else {
                    return fail(.proxyBadResponse.with(detail: "\(proxy) sent \(rest.count) bytes after its \(head.status) answer to CONNECT \(authority)"))
                }
                state = .open
                return .established
            default:
                return fail(Self.error(for: head, proxy: proxy, authority: authority))
            }
        }
    }

    /// The proxy closed the connection (or it broke) before the tunnel was open.
    mutating func peerClosed(_ underlying: (any Error)? = nil) -> ProxyTunnelAction {
        guard state == .awaitingReply || state == .initial else { return .none }
        return fail(.proxyClosedConnection.with(detail: "\(proxy) closed the connection before answering CONNECT \(authority)",
                                                underlying: underlying))
    }

    private mutating func fail(_ error: HTTPConnectionError) -> ProxyTunnelAction {
        state = .failed
        return .fail(error)
    }

    /// The error for a final answer that is not 2xx.
    static func error(for head: HTTPResponseHead, proxy: Proxy, authority: String) -> HTTPConnectionError {
        let reason = String(head.reason.prefix(80))
        let answered = "\(proxy) answered CONNECT \(authority) with \(head.status)\(reason.isEmpty ? "" : " \(reason)")"
        switch head.status {
        case 407:
            let offered = head.value(for: "Proxy-Authenticate").map { "; it asks for \(String($0.prefix(80)))" } ?? ""
            let sent = proxy.credentials == nil ? "no credentials were configured" : "the configured credentials were refused"
            // The proxy's answer (its head: the challenge) rides along for a ProxyAuthenticator.
            let response = URL(string: "https://\(authority)/").map {
                HTTPResponse(status: .init(code: 407, reason: reason), headers: HTTPHeaders(head.fields.map { ($0.name, $0.value) }), url: $0)
            }
            return .proxyAuthenticationRequired.with(detail: "\(answered): \(sent)\(offered)", response: response)
        case 403:
            return .proxyForbidden.with(detail: answered)
        case 502, 503, 504:
            return .proxyCannotReachOrigin.with(detail: answered)
        default:
            return .proxyRejected.with(detail: answered)
        }
    }
}

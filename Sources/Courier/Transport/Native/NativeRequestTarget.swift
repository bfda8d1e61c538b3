import Foundation

/// Where one request goes, taken apart from its URL once: the pool it belongs to (its origin and
/// proxy), the `Host` field and the request target: origin form, or absolute form for an `http`
/// request forwarded by an HTTP proxy.
///
/// The URL's percent-encoded text is used as it is (never decoded and re-encoded), so the server
/// receives exactly the path and query the pipeline built.
struct NativeRequestTarget: Sendable {
    /// The pool key: scheme, lower-cased host (IPv6 without brackets) and port.
    let key: NativePoolKey
    /// The `Host` field value: the URL's host and explicit port, userinfo removed.
    let hostField: String
    /// The request target: path (at least `/`) and query, without the fragment; prefixed with
    /// `http://` and the authority when an HTTP proxy forwards the request.
    let path: String
    /// The `Proxy-Authorization` value for an HTTP proxy that forwards the request (never set
    /// when the request goes direct or through a tunnel, so it never reaches an origin).
    let proxyAuthorization: String?

    /// Takes `url` apart and picks its Unix socket route or its proxy.
    /// - Parameters:
    ///   - url: an absolute `http` or `https` URL.
    ///   - proxies: the proxy settings. Default: none (direct).
    ///   - unixSockets: the hosts reached over Unix sockets; a route that matches wins over the
    ///     proxy settings. Default: none.
    /// - Throws: ``HTTPConnectionError/invalidURL`` for another scheme, a missing host, a bad
    ///   port, or an unusable proxy setting for the URL.
    init(url: URL, proxies: ProxyConfiguration = .none, unixSockets: [NativeTransport.UnixSocketRoute] = []) throws(HTTPConnectionError) {
        var text = url.absoluteString
        text.makeContiguousUTF8()
        let split = text.utf8.withContiguousStorageIfAvailable(URLSplit.split) ?? .failure("its text is not contiguous UTF-8")
        let parts: URLSplit
        switch split {
        case .success(let value): parts = value
        case .failure(let reason): throw Self.invalid(url, reason.text)
        }
        let route = unixSockets.first { $0.matches(host: parts.host, port: parts.port) }
        let proxy = route == nil ? try proxies.proxy(secure: parts.secure, host: parts.host) : nil
        key = NativePoolKey(secure: parts.secure, host: parts.host, port: parts.port, proxy: proxy, unixSocketPath: route?.path)
        hostField = parts.hostField
        if key.forwardsThroughProxy, let proxy {
            path = "http://" + hostField + parts.originForm
            proxyAuthorization = proxy.credentials?.basicAuthorization
        } else {
            path = parts.originForm
            proxyAuthorization = nil
        }
    }

    /// The same target through the same proxy with other `credentials`: another pool, since the
    /// key holds the credentials, and another `Proxy-Authorization` for a forwarded request.
    func withProxyCredentials(_ credentials: ProxyCredentials?) -> NativeRequestTarget {
        guard let proxy = key.proxy else { return self }
        let changed = proxy.with(credentials: credentials)
        return NativeRequestTarget(key: NativePoolKey(secure: key.secure, host: key.host, port: key.port, proxy: changed),
                                   hostField: hostField, path: path,
                                   proxyAuthorization: key.forwardsThroughProxy ? credentials?.basicAuthorization : nil)
    }

    private init(key: NativePoolKey, hostField: String, path: String, proxyAuthorization: String?) {
        self.key = key
        self.hostField = hostField
        self.path = path
        self.proxyAuthorization = proxyAuthorization
    }

    /// The error for a URL the transport cannot use, its secrets redacted.
    private static func invalid(_ url: URL, _ reason: String) -> HTTPConnectionError {
        .invalidURL.with(detail: "'\(Redaction.url(url))': \(reason)")
    }
}

/// Identifies one connection pool: connections are shared only between requests to the same
/// scheme, host and port through the same proxy (or none), or over the same Unix socket.
struct NativePoolKey: Hashable, Sendable, CustomStringConvertible {
    /// Whether connections use TLS (`https`).
    let secure: Bool
    /// The host, lower-cased; IPv6 literals without brackets.
    let host: String
    /// The TCP port.
    let port: Int
    /// The proxy the connections go through; `nil` for direct connections.
    let proxy: Proxy?
    /// The Unix domain socket the connections go to instead of TCP; `nil` for TCP.
    let unixSocketPath: String?

    /// A key for the origin `host`:`port`, reached through `proxy` (or direct), or over the Unix
    /// socket at `unixSocketPath`.
    init(secure: Bool, host: String, port: Int, proxy: Proxy? = nil, unixSocketPath: String? = nil) {
        self.secure = secure
        self.host = host
        self.port = port
        self.proxy = proxy
        self.unixSocketPath = unixSocketPath
    }

    /// Where the TCP connection goes: the proxy, or the origin.
    var firstHop: (host: String, port: Int) {
        proxy.map { ($0.host, $0.port) } ?? (host, port)
    }

    /// Whether an HTTP proxy forwards the requests (plain `http` through an HTTP proxy): the
    /// connection goes to the proxy, and requests are written in absolute form.
    var forwardsThroughProxy: Bool {
        proxy?.speaksHTTP == true && !secure
    }

    /// Whether the connection runs TLS to the proxy (an ``Proxy/Kind/https`` proxy) before anything else.
    var tlsToProxy: Bool {
        proxy?.kind == .https
    }

    /// Whether the connection opens a tunnel to the origin through the proxy before anything
    /// else (`CONNECT` or SOCKS5).
    var tunnels: Bool {
        proxy != nil && !forwardsThroughProxy
    }

    /// `"https://example.com:443"`, followed by `" via http://proxy:3128"` through a proxy
    /// (never the proxy's credentials), or `" via unix:/path"` over a Unix socket.
    var description: String {
        let shown = HostText.bracketed(host)
        let via = proxy.map { " via \($0)" } ?? unixSocketPath.map { " via unix:\($0)" } ?? ""
        return "\(secure ? "https" : "http")://\(shown):\(port)\(via)"
    }
}

import CourierWire
import Foundation

/// Which proxy, if any, the native transport uses for each request
/// (``NativeTransport/Configuration/proxy``).
///
/// One proxy slot for `http://` URLs, one for `https://` URLs, and a ``NoProxyList`` of hosts
/// that go direct. Build it from the environment with curl's rules (``environment(_:)``), or
/// from explicit proxies (``init(http:https:noProxy:)``, ``init(all:noProxy:)``).
public struct ProxyConfiguration: Sendable, Hashable {
    /// One scheme's proxy setting.
    enum Slot: Sendable, Hashable {
        /// Direct.
        case direct
        /// Through this proxy.
        case proxy(Proxy)
        /// A setting that cannot be used: requests fail with ``HTTPConnectionError/invalidURL``
        /// rather than silently bypass the proxy the environment asked for.
        case unusable(variable: String, reason: String)
    }

    /// The setting for `http://` URLs.
    let http: Slot
    /// The setting for `https://` URLs.
    let https: Slot
    /// The hosts that go direct.
    public let noProxy: NoProxyList
    /// Whether requests to a loopback host go direct whatever the slots say: `localhost` and
    /// names ending in `.localhost` (RFC 6761), `127.0.0.0/8`, `::1` and `::ffff:127.0.0.0/104`.
    ///
    /// ``environment(_:)`` turns it on, as Go's `net/http` does: a proxy named by the environment
    /// runs elsewhere, where this machine's loopback cannot be reached, so sending local traffic
    /// to it is never what was meant (and a test server on 127.0.0.1 would break wherever CI
    /// exports `https_proxy`). The explicit initializers leave it off: a proxy the code names
    /// itself applies to loopback hosts too (a local debugging proxy, a test's own squid). Set
    /// it either way. curl has no such rule; it wants `localhost` in `no_proxy`.
    public var bypassesLoopback: Bool

    /// No proxy: every request goes direct.
    public static let none = ProxyConfiguration(http: Slot.direct, https: .direct, noProxy: NoProxyList(), bypassesLoopback: false)

    private init(http: Slot, https: Slot, noProxy: NoProxyList, bypassesLoopback: Bool) {
        self.http = http
        self.https = https
        self.noProxy = noProxy
        self.bypassesLoopback = bypassesLoopback
    }

    /// Explicit proxies per scheme.
    /// - Parameters:
    ///   - http: the proxy for `http://` URLs; `nil` for direct.
    ///   - https: the proxy for `https://` URLs; `nil` for direct.
    ///   - noProxy: the hosts that go direct (``NoProxyList``). Default: none.
    public init(http: Proxy?, https: Proxy?, noProxy: NoProxyList = NoProxyList()) {
        self.init(http: http.map(Slot.proxy) ?? .direct, https: https.map(Slot.proxy) ?? .direct, noProxy: noProxy,
                  bypassesLoopback: false)
    }

    /// One proxy for every URL.
    /// - Parameters:
    ///   - proxy: the proxy for `http://` and `https://` URLs.
    ///   - noProxy: the hosts that go direct (``NoProxyList``). Default: none.
    public init(all proxy: Proxy, noProxy: NoProxyList = NoProxyList()) {
        self.init(http: proxy, https: proxy, noProxy: noProxy)
    }

    /// The proxy settings of an environment, by curl's rules (curl's `libcurl-env` manual):
    /// - `http://` URLs use `http_proxy`. Only the lower-case name counts: `HTTP_PROXY` is ignored,
    ///   because a CGI program gets a request's `Proxy:` header as `HTTP_PROXY` ("httpoxy").
    /// - `https://` URLs use `https_proxy`, else `HTTPS_PROXY`.
    /// - Without those, both use `all_proxy`, else `ALL_PROXY`.
    /// - `no_proxy`, else `NO_PROXY`, lists the hosts that go direct (``NoProxyList``).
    /// - An empty variable counts as unset.
    /// - Unlike curl, loopback hosts go direct (``bypassesLoopback``), as in Go's `net/http`.
    ///
    /// A proxy URL is read by ``Proxy/init(url:tls:)`` (an `https://` proxy is verified with the
    /// default ``TLSOptions``). One that cannot be used (a `socks4://` proxy, a bad port) makes the requests it would carry fail with
    /// ``HTTPConnectionError/invalidURL`` instead of going direct.
    /// - Parameter environment: the variables. Default: this process's environment, read now.
    /// - Returns: the configuration.
    public static func environment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> ProxyConfiguration {
        func value(_ name: String) -> (name: String, value: String)? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return (name, value)
        }
        let all = value("all_proxy") ?? value("ALL_PROXY")
        let http = value("http_proxy") ?? all
        let https = value("https_proxy") ?? value("HTTPS_PROXY") ?? all
        let noProxy = value("no_proxy") ?? value("NO_PROXY")
        return ProxyConfiguration(http: slot(http), https: slot(https), noProxy: NoProxyList(noProxy?.value ?? ""),
                                  bypassesLoopback: true)
    }

    /// A variable's slot.
    private static func slot(_ variable: (name: String, value: String)?) -> Slot {
        guard let variable else { return .direct }
        do {
            return .proxy(try Proxy(url: variable.value))
        } catch {
            return .unusable(variable: variable.name, reason: error.detail ?? error.description)
        }
    }

    /// The proxy a request to `url` goes through, or `nil` when it goes direct.
    /// - Parameter url: an `http` or `https` URL.
    /// - Throws: ``HTTPConnectionError/invalidURL`` when the setting for the URL's scheme is unusable.
    public func proxy(for url: URL) throws(HTTPConnectionError) -> Proxy? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host else { return nil }
        return try proxy(secure: scheme == "https", host: host)
    }

    /// The proxy for a request to `host` over `https` (`secure`) or `http`, or `nil` for direct.
    func proxy(secure: Bool, host: String) throws(HTTPConnectionError) -> Proxy? {
        let slot = secure ? https : http
        if case .direct = slot { return nil }
        if bypassesLoopback && Self.isLoopback(host) { return nil }
        switch slot {
        case .direct:
            return nil
        case .proxy(let proxy):
            return noProxy.matches(host: host) ? nil : proxy
        case .unusable(let variable, let reason):
            if noProxy.matches(host: host) { return nil }
            throw .invalidURL.with(detail: "the proxy in \(variable) cannot be used: \(reason)")
        }
    }

    /// Whether `host` names this machine's loopback: `localhost`, a name ending in `.localhost`,
    /// an address in `127.0.0.0/8`, `::1`, or an IPv4-mapped loopback address.
    static func isLoopback(_ host: String) -> Bool {
        var name = HostText.unbracketed(Substring(host.lowercased()))
        if name.hasSuffix(".") { name = name.dropLast() }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        guard let address = SocketAddress(ip: String(name), port: 0) else { return false }
        let bytes = address.addressBytes
        if address.family == .ipv4 { return bytes[0] == 127 }
        if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }
        return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
    }
}

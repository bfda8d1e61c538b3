import Foundation

/// A proxy that the native transport sends requests through.
///
/// - ``Kind/http``: an HTTP proxy reached over plain TCP. `http://` requests go to it in absolute
///   form (`GET http://host/path HTTP/1.1`); `https://` requests go through a `CONNECT host:port`
///   tunnel, inside which TLS runs to the origin (SNI and certificate checks against the origin's
///   name, never the proxy's).
/// - ``Kind/https``: the same, with TLS to the proxy first (SNI and certificate checks against
///   the proxy's name, by the proxy's own ``tls`` options). An `https://` request then runs a
///   second TLS session, to the origin, inside the first.
/// - ``Kind/socks5`` and ``Kind/socks5h``: a SOCKS5 proxy (RFC 1928), with username and password
///   authentication (RFC 1929) when ``credentials`` are set. `socks5h` sends the host name for
///   the proxy to resolve; `socks5` resolves it locally and sends the address.
///
/// Credentials go only to the proxy (`Proxy-Authorization: Basic`, or the RFC 1929 exchange),
/// never to an origin, and never appear in ``description`` or in errors.
public struct Proxy: Sendable, Hashable, CustomStringConvertible {
    /// The protocol spoken to the proxy.
    public enum Kind: String, Sendable, Hashable {
        /// An HTTP proxy (forwarding for `http://`, `CONNECT` for `https://`).
        case http
        /// An HTTP proxy reached over TLS.
        case https
        /// SOCKS5; the client resolves host names and sends addresses.
        case socks5
        /// SOCKS5; the proxy resolves host names (the name is sent as it is).
        case socks5h
    }

    /// The port used when a proxy URL has none: 1080, as curl does, except for ``Kind/https``
    /// proxies (``defaultTLSPort``).
    public static let defaultPort = 1080
    /// The port of an ``Kind/https`` proxy without one: 443, as curl does.
    public static let defaultTLSPort = 443

    /// The protocol spoken to the proxy.
    public let kind: Kind
    /// The proxy's host name or address, lower-cased; an IPv6 address without brackets.
    public let host: String
    /// The proxy's TCP port.
    public let port: Int
    /// The credentials the proxy is given, if any.
    public let credentials: ProxyCredentials?
    /// How an ``Kind/https`` proxy's certificate is verified (against the proxy's name), and the
    /// client certificate it is shown, if any; independent of the origins' ``TLSOptions``.
    /// Unused for other kinds.
    public let tls: TLSOptions

    /// A proxy at `host` and `port`.
    /// - Parameters:
    ///   - kind: the protocol spoken to the proxy.
    ///   - host: its host name or address (an IPv6 address with or without brackets).
    ///   - port: its port. Default: ``defaultTLSPort`` for ``Kind/https``, else ``defaultPort``.
    ///   - credentials: the username and password it is given. Default: none.
    ///   - tls: how an ``Kind/https`` proxy is verified. Default: `TLSOptions()` (the system's
    ///     trust store, chain and host name checks).
    public init(_ kind: Kind, host: String, port: Int? = nil, credentials: ProxyCredentials? = nil, tls: TLSOptions = TLSOptions()) {
        self.kind = kind
        let name = HostText.unbracketed(Substring(host))
        self.host = name.lowercased()
        self.port = port ?? (kind == .https ? Proxy.defaultTLSPort : Proxy.defaultPort)
        self.credentials = credentials
        self.tls = tls
    }

    /// Whether HTTP is spoken to the proxy (``Kind/http`` or ``Kind/https``), rather than SOCKS5.
    public var speaksHTTP: Bool { kind == .http || kind == .https }

    /// Parses a proxy URL as curl does: `[scheme://][user:password@]host[:port][/]`.
    ///
    /// Without a scheme the proxy is an HTTP proxy; without a port it is ``defaultPort`` (443 for
    /// `https`). The user and password are percent-decoded. The schemes are `http`, `https` (TLS
    /// to the proxy, verified with `tls`), `socks5` and `socks5h` (case-insensitive);
    /// `socks4`/`socks4a` are not supported.
    /// - Parameters:
    ///   - url: the proxy URL, e.g. `http://user:secret@proxy.example:3128`.
    ///   - tls: how an `https` proxy is verified. Default: `TLSOptions()`.
    /// - Throws: ``HTTPConnectionError/invalidURL`` for an unsupported scheme, a missing host, a
    ///   bad port or a path; the detail never contains the credentials.
    public init(url: String, tls: TLSOptions = TLSOptions()) throws(HTTPConnectionError) {
        var rest = Substring(url.trimmingCharacters(in: .whitespaces))
        var kind = Kind.http
        if let range = rest.range(of: "://") {
            let scheme = rest[..<range.lowerBound].lowercased()
            guard let known = Kind(rawValue: scheme) else {
                throw Self.invalid("the proxy scheme '\(scheme)' is not supported (http, https, socks5 and socks5h are)")
            }
            kind = known
            rest = rest[range.upperBound...]
        }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...].allSatisfy({ $0 == "/" }) else { throw Self.invalid("a proxy URL has no path") }
            rest = rest[..<slash]
        }
        var credentials: ProxyCredentials?
        if let at = rest.lastIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = userinfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let user = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let password = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            credentials = ProxyCredentials(username: user, password: password)
        }
        var host = rest
        var portText: Substring = ""
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw Self.invalid("unterminated IPv6 address") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw Self.invalid("text after the IPv6 address") }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty else { throw Self.invalid("no proxy host") }
        var port = kind == .https ? Proxy.defaultTLSPort : Proxy.defaultPort
        if !portText.isEmpty {
            guard portText.utf8.count <= 5, let value = Int(portText), (1...65535).contains(value) else {
                throw Self.invalid("the proxy port '\(portText)' is not 1...65535")
            }
            port = value
        }
        self.init(kind, host: String(host), port: port, credentials: credentials, tls: tls)
    }

    /// `"http://proxy.example:3128"`: the kind, host and port, never the credentials.
    public var description: String {
        return "\(kind.rawValue)://\(HostText.bracketed(host)):\(port)"
    }

    /// The error for an unusable proxy URL (whose text is never repeated: it may hold a password).
    private static func invalid(_ reason: String) -> HTTPConnectionError {
        .invalidURL.with(detail: "unusable proxy URL: \(reason)")
    }
}

/// A username and password for a proxy: sent as `Proxy-Authorization: Basic` to an HTTP proxy,
/// or in the RFC 1929 exchange to a SOCKS5 proxy. Its description never shows them.
public struct ProxyCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The username.
    public let username: String
    /// The password.
    public let password: String

    /// Credentials for a proxy.
    /// - Parameters:
    ///   - username: the username.
    ///   - password: the password.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// `"<redacted>"`.
    public var description: String { "<redacted>" }
    /// `"<redacted>"`.
    public var debugDescription: String { "<redacted>" }
    /// A mirror without children, so that `dump` and reflection never show the username or password.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    /// The `Proxy-Authorization` value: `Basic` and base64 of `username:password` (RFC 7617).
    var basicAuthorization: String {
        "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
    }
}

import Foundation

/// Where one request goes, taken apart from its URL once: the pool it belongs to, the `Host`
/// field and the origin-form request target.
///
/// The URL's percent-encoded text is used as it is (never decoded and re-encoded), so the server
/// receives exactly the path and query the pipeline built.
struct NativeRequestTarget: Sendable {
    /// The pool key: scheme, lower-cased host (IPv6 without brackets) and port.
    let key: NativePoolKey
    /// The `Host` field value: the URL's host and explicit port, userinfo removed.
    let hostField: String
    /// The origin-form target: path (at least `/`) and query, without the fragment.
    let path: String

    /// Takes `url` apart.
    /// - Parameter url: an absolute `http` or `https` URL.
    /// - Throws: ``HTTPConnectionError/invalidURL`` for another scheme, a missing host or a bad port.
    init(url: URL) throws(HTTPConnectionError) {
        let text = url.absoluteString
        let bytes = text.utf8
        guard let schemeEnd = bytes.firstIndex(of: UInt8(ascii: ":")) else {
            throw Self.invalid(url, "no scheme")
        }
        let scheme = text[..<schemeEnd].lowercased()
        let secure: Bool
        switch scheme {
        case "http": secure = false
        case "https": secure = true
        default: throw Self.invalid(url, "the scheme must be http or https")
        }
        let afterScheme = text[schemeEnd...].dropFirst()
        guard afterScheme.hasPrefix("//") else { throw Self.invalid(url, "no authority") }
        let authorityAndRest = afterScheme.dropFirst(2)
        let authorityEnd = authorityAndRest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? authorityAndRest.endIndex
        var authority = authorityAndRest[..<authorityEnd]
        if let at = authority.utf8.lastIndex(of: UInt8(ascii: "@")) {
            authority = authority[authority.index(after: at)...]
        }
        var hostPart = authority
        var portPart: Substring = ""
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw Self.invalid(url, "unterminated IPv6 literal") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portPart = after.dropFirst() } else if !after.isEmpty {
                throw Self.invalid(url, "unexpected text after the IPv6 literal")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { throw Self.invalid(url, "no host") }
        var port = secure ? 443 : 80
        if !portPart.isEmpty {
            guard portPart.utf8.count <= 5, let value = Int(portPart), (1...65535).contains(value) else {
                throw Self.invalid(url, "the port '\(portPart)' is not 1...65535")
            }
            port = value
        }
        key = NativePoolKey(secure: secure, host: hostPart.lowercased(), port: port)
        hostField = String(authority)

        var rest = authorityAndRest[authorityEnd...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        path = rest.hasPrefix("/") ? String(rest) : "/" + rest
    }

    /// The error for a URL the transport cannot use, its secrets redacted.
    private static func invalid(_ url: URL, _ reason: String) -> HTTPConnectionError {
        .invalidURL.with(detail: "'\(Redaction.url(url))': \(reason)")
    }
}

/// Identifies one connection pool: connections are shared only between requests to the same
/// scheme, host and port.
struct NativePoolKey: Hashable, Sendable, CustomStringConvertible {
    /// Whether connections use TLS (`https`).
    let secure: Bool
    /// The host, lower-cased; IPv6 literals without brackets.
    let host: String
    /// The TCP port.
    let port: Int

    /// `"https://example.com:443"`.
    var description: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return "\(secure ? "https" : "http")://\(shown):\(port)"
    }
}

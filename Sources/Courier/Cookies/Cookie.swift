import Foundation

/// One cookie a ``CookieJar`` keeps, as RFC 6265 §5.3 stores it.
///
/// A cookie is sent back (RFC 6265 §5.4) to a URL whose host matches ``domain`` (exactly when
/// ``isHostOnly``, else the domain or any subdomain of it), whose path is ``path`` or below it,
/// over https when ``isSecure``, while it has not expired.
public struct Cookie: Sendable, Codable, Equatable, CustomStringConvertible {
    /// The `SameSite` attribute as the server sent it. Courier stores it and does not act on it:
    /// a client library has no notion of the site a request comes from.
    public enum SameSite: String, Sendable, Codable, Equatable {
        /// `SameSite=Strict`.
        case strict
        /// `SameSite=Lax`.
        case lax
        /// `SameSite=None`.
        case none
    }

    /// The name.
    public var name: String
    /// The value.
    public var value: String
    /// The lowercased host (when ``isHostOnly``) or domain the cookie belongs to.
    public var domain: String
    /// Whether only ``domain`` itself matches (no `Domain` attribute was given), not its subdomains.
    public var isHostOnly: Bool
    /// The path the cookie applies to: it is sent to this path and the paths below it.
    public var path: String
    /// When it expires; `nil` for a session cookie, kept only while the jar lives (never saved).
    public var expires: Date?
    /// Whether it is sent only over https (`Secure`).
    public var isSecure: Bool
    /// Whether the server marked it `HttpOnly`. Kept and sent like any cookie: Courier runs no
    /// scripts that it would be hidden from.
    public var isHTTPOnly: Bool
    /// The `SameSite` attribute, when the server gave a known value.
    public var sameSite: SameSite?
    /// When it was first stored; kept when a server replaces the cookie. A jar gives each cookie
    /// its own: one stored at the same instant as the previous (another field of the same
    /// response) is created a microsecond after it, so the `Cookie` order is the order of arrival.
    public var created: Date
    /// When it was last sent or stored; the least recently used go first when the jar is full.
    public var lastAccessed: Date

    /// Creates a cookie.
    public init(name: String, value: String, domain: String, isHostOnly: Bool = true, path: String = "/",
                expires: Date? = nil, isSecure: Bool = false, isHTTPOnly: Bool = false, sameSite: SameSite? = nil,
                created: Date = Date(), lastAccessed: Date? = nil) {
        self.name = name
        self.value = value
        self.domain = domain.lowercased()
        self.isHostOnly = isHostOnly
        self.path = path
        self.expires = expires
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.sameSite = sameSite
        self.created = created
        self.lastAccessed = lastAccessed ?? created
    }

    /// Whether the cookie survives the jar: it has an expiry date.
    public var isPersistent: Bool { expires != nil }

    /// Whether it has expired at `now`.
    public func isExpired(at now: Date) -> Bool {
        expires.map { $0 <= now } ?? false
    }

    /// Whether the cookie goes with a request to `url` (RFC 6265 §5.4, step 1): domain, path and
    /// `Secure` match. Expiry is not checked here.
    public func matches(_ url: URL) -> Bool {
        guard let target = Target(url) else { return false }
        return matches(target)
    }

    /// Whether the cookie goes with a request to `target`.
    func matches(_ target: Target) -> Bool {
        let hostMatches = isHostOnly ? target.host == domain : CookieDomain.domainMatches(target.host, domain)
        return hostMatches && CookiePath.matches(target.path, path) && (!isSecure || target.isSecure)
    }

    /// What the matching rules need of a request URL, worked out once for all the cookies.
    struct Target {
        /// The canonical host.
        let host: String
        /// The request path.
        let path: String
        /// Whether the scheme is https.
        let isSecure: Bool

        /// The target of `url`; `nil` when it has no usable host.
        init?(_ url: URL) {
            guard let host = CookieDomain.canonicalHost(of: url) else { return nil }
            self.host = host
            self.path = CookiePath.requestPath(of: url)
            self.isSecure = url.scheme?.lowercased() == "https"
        }
    }

    /// Whether two cookies are the same slot of a jar: same name, domain and path (§5.3 step 11).
    func sameSlot(as other: Cookie) -> Bool {
        name == other.name && domain == other.domain && path == other.path
    }

    /// `name=<redacted>; Domain=…; Path=…` and the flags: the value is a credential and never shown.
    public var description: String {
        var parts = ["\(name)=<redacted>", "\(isHostOnly ? "Host" : "Domain")=\(domain)", "Path=\(path)"]
        if let expires { parts.append("Expires=\(HTTPDate.format(expires))") }
        if isSecure { parts.append("Secure") }
        if isHTTPOnly { parts.append("HttpOnly") }
        if let sameSite { parts.append("SameSite=\(sameSite.rawValue)") }
        return parts.joined(separator: "; ")
    }
}

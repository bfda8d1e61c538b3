import Courier

/// An independent model of RFC 6265's storage (§5.3) and retrieval (§5.4) rules, with the
/// additions Courier documents (RFC 6265bis: only https sets `Secure`, and http may not shadow
/// a `Secure` cookie; 50 cookies per domain and 3000 in all, least recently used first).
///
/// It reads ``ModelSetCookie``s (what a field means, not its text) and predicts the `Cookie`
/// field of each request exactly: longer paths first, then earlier creation, where a cookie
/// created by an earlier field (of the same response too) counts as created earlier.
struct CookieModel {
    /// One stored cookie.
    struct Entry: Equatable {
        var name: String
        var value: String
        var domain: String
        var hostOnly: Bool
        var path: String
        /// Seconds since 1970; `nil` for a session cookie.
        var expiry: Double?
        var secure: Bool
        var httpOnly: Bool
        var sameSite: String?
        /// The order of creation: a counter, kept when the cookie is replaced.
        var created: Int
        /// When it was last stored or sent, in seconds since 1970.
        var lastAccess: Double

        /// Whether it has expired at `now`.
        func isExpired(at now: Double) -> Bool { expiry.map { $0 <= now } ?? false }

        /// The cookie as a comparable line: every stored attribute but the times of use.
        var summary: String {
            let expires = expiry.map { $0 > 1e10 ? "far" : String(Int($0)) } ?? "session"
            return "\(name)=\(value) \(hostOnly ? "host" : "domain")=\(domain) path=\(path) expires=\(expires)"
                + " secure=\(secure) httpOnly=\(httpOnly) sameSite=\(sameSite ?? "-")"
        }
    }

    /// A request or response URL as the model needs it.
    struct Place {
        /// The canonical (lowercased) host.
        var host: String
        /// The path as sent, percent-encoded, without the query; may be empty.
        var path: String
        /// Whether the scheme is https.
        var https: Bool
    }

    private(set) var entries: [Entry] = []
    var perDomain = 50
    var total = 3_000
    private var creations = 0

    /// Stores what `cookie`, received from `place` at `now`, asks for.
    mutating func receive(_ cookie: ModelSetCookie, from place: Place, now: Double) {
        guard let (name, value) = cookie.pair else { return }
        var expires: Double?
        var maxAge: Int?
        var domainAttribute: String?
        var pathAttribute: String?
        var secure = false
        var httpOnly = false
        var sameSite: String?
        for attribute in cookie.attributes {
            switch attribute {
            case .expires(let date): if let date { expires = date }
            case .maxAge(let seconds): if let seconds { maxAge = seconds }
            case .domain(let text):
                guard !text.isEmpty else { continue }
                domainAttribute = (text.first == "." ? String(text.dropFirst()) : text).lowercased()
            case .path(let text):
                pathAttribute = text.first == "/" ? text : Self.defaultPath(place.path)
            case .secure: secure = true
            case .httpOnly: httpOnly = true
            case .sameSite(let text):
                sameSite = ["strict", "lax", "none"].contains(text.lowercased()) ? text.lowercased() : nil
            case .ignored: continue
            }
        }
        let expiry: Double? = maxAge.map { $0 <= 0 ? -Double.infinity : now + Double($0) } ?? expires
        var domain = domainAttribute ?? ""
        if !domain.isEmpty, Self.isPublicSuffix(domain) {
            guard domain == place.host else { return }
            domain = ""
        }
        let hostOnly = domain.isEmpty
        if hostOnly {
            domain = place.host
        } else if !Self.domainMatches(place.host, domain) {
            return
        }
        let path = pathAttribute ?? Self.defaultPath(place.path)
        if secure, !place.https { return }
        if !place.https, entries.contains(where: { old in
            old.secure && old.name == name && !old.isExpired(at: now)
                && (Self.domainMatches(old.domain, domain) || Self.domainMatches(domain, old.domain))
                && Self.pathMatches(path, old.path)
        }) { return }
        var created = creations
        creations += 1
        entries.removeAll { $0.isExpired(at: now) }
        if let old = entries.firstIndex(where: { $0.name == name && $0.domain == domain && $0.path == path }) {
            created = entries[old].created
            entries.remove(at: old)
        }
        let entry = Entry(name: name, value: value, domain: domain, hostOnly: hostOnly, path: path, expiry: expiry,
                          secure: secure, httpOnly: httpOnly, sameSite: sameSite, created: created, lastAccess: now)
        guard !entry.isExpired(at: now) else { return }
        entries.append(entry)
        while entries.filter({ $0.domain == domain }).count > perDomain {
            removeLeastRecentlyUsed { $0.domain == domain }
        }
        while entries.count > total {
            removeLeastRecentlyUsed { _ in true }
        }
    }

    /// The `Cookie` field a request to `place` at `now` carries (`nil` for none); marks the
    /// cookies sent as used.
    mutating func header(for place: Place, now: Double) -> String? {
        let path = place.path.isEmpty ? "/" : place.path
        var chosen: [Int] = []
        for (index, entry) in entries.enumerated() where !entry.isExpired(at: now) {
            let hostMatches = entry.hostOnly ? place.host == entry.domain : Self.domainMatches(place.host, entry.domain)
            if hostMatches, Self.pathMatches(path, entry.path), !entry.secure || place.https { chosen.append(index) }
        }
        for index in chosen { entries[index].lastAccess = now }
        let ordered = chosen.map { entries[$0] }.sorted {
            $0.path.utf8.count != $1.path.utf8.count ? $0.path.utf8.count > $1.path.utf8.count : $0.created < $1.created
        }
        return ordered.isEmpty ? nil : ordered.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// The summaries of the cookies alive at `now`, sorted; `persistentOnly` leaves out session cookies.
    func summaries(at now: Double, persistentOnly: Bool = false) -> [String] {
        entries.filter { !$0.isExpired(at: now) && (!persistentOnly || $0.expiry != nil) }.map(\.summary).sorted()
    }

    /// Forgets the session cookies, as a jar read back from its file has none.
    mutating func dropSessionCookies() {
        entries.removeAll { $0.expiry == nil }
    }

    private mutating func removeLeastRecentlyUsed(among candidates: (Entry) -> Bool) {
        let victim = entries.indices.filter { candidates(entries[$0]) }.min { entries[$0].lastAccess < entries[$1].lastAccess }
        if let victim { entries.remove(at: victim) }
    }

    /// The summary a ``Cookie`` of the jar has, to compare with the model's.
    static func summary(of cookie: Cookie) -> String {
        let expiry = cookie.expires.map(\.timeIntervalSince1970)
        let entry = Entry(name: cookie.name, value: cookie.value, domain: cookie.domain, hostOnly: cookie.isHostOnly,
                          path: cookie.path, expiry: expiry, secure: cookie.isSecure, httpOnly: cookie.isHTTPOnly,
                          sameSite: cookie.sameSite?.rawValue, created: 0, lastAccess: 0)
        return entry.summary
    }

    /// Whether `host` is a dotted-quad IPv4 address (the only kind the tests use).
    static func isIPAddress(_ host: String) -> Bool {
        host.split(separator: ".").count == 4 && host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber }
    }

    /// §5.1.3: identical, or `host` is a name ending in `.` and `domain`.
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        host == domain || (!isIPAddress(host) && host.hasSuffix("." + domain))
    }

    /// §5.1.4 path-match.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        let request = Array(requestPath.utf8)
        let cookie = Array(cookiePath.utf8)
        guard request.starts(with: cookie) else { return false }
        return request.count == cookie.count || cookie.last == UInt8(ascii: "/") || request[cookie.count] == UInt8(ascii: "/")
    }

    /// §5.1.4 default-path of a request path.
    static func defaultPath(_ path: String) -> String {
        guard path.first == "/", path.filter({ $0 == "/" }).count > 1 else { return "/" }
        return String(path[..<path.lastIndex(of: "/")!])
    }

    /// Every single label, and the multi-label suffixes Courier lists.
    static func isPublicSuffix(_ domain: String) -> Bool {
        !domain.contains(".") || CookieJar.publicSuffixes.contains(domain)
    }
}

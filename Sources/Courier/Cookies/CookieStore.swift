import Foundation

/// The cookies of a ``CookieJar`` and RFC 6265's rules for them, as a value: it takes
/// `Set-Cookie` fields and requests, with the time, and answers with what to store and send.
/// The jar adds the lock and the file.
struct CookieStore: Sendable, Equatable {
    /// The cookies, unordered; expired ones are removed whenever the store changes.
    private(set) var cookies: [Cookie] = []
    /// The bounds on how many cookies are kept.
    let limits: CookieJar.Limits

    init(limits: CookieJar.Limits, cookies: [Cookie] = []) {
        self.limits = limits
        self.cookies = cookies
    }

    /// Why a `Set-Cookie` field was not stored.
    enum Refusal: Equatable, Sendable {
        /// It did not parse (RFC 6265 §5.2), or held control characters or too many bytes.
        case malformed
        /// The response's URL has no usable host.
        case noHost
        /// Its `Domain` is a public suffix other than the host itself.
        case publicSuffix
        /// The host is not within its `Domain`.
        case foreignDomain
        /// `Secure` over http, or over http it would replace a `Secure` cookie (RFC 6265bis).
        case insecure
    }

    /// Stores the cookie a `Set-Cookie` field of a response to `url` sets (RFC 6265 §5.3),
    /// replacing the one with the same name, domain and path, then evicts (see ``evict(now:)``).
    /// An expired cookie removes the one it replaces.
    /// - Returns: the refusal when the field is ignored, `nil` when it was applied.
    @discardableResult
    mutating func receive(_ line: String, from url: URL, now: Date) -> Refusal? {
        guard let parsed = SetCookie(line) else { return .malformed }
        guard let host = CookieDomain.canonicalHost(of: url) else { return .noHost }
        var domain = parsed.domain ?? ""
        if !domain.isEmpty, CookieDomain.isPublicSuffix(domain) {
            guard domain == host else { return .publicSuffix }
            domain = ""
        }
        if !domain.isEmpty, !CookieDomain.domainMatches(host, domain) { return .foreignDomain }
        let secureOrigin = url.scheme?.lowercased() == "https"
        if parsed.isSecure, !secureOrigin { return .insecure }
        var cookie = Cookie(name: parsed.name, value: parsed.value, domain: domain.isEmpty ? host : domain,
                            isHostOnly: domain.isEmpty, path: parsed.path ?? CookiePath.defaultPath(for: url),
                            expires: parsed.expiry(now: now), isSecure: parsed.isSecure, isHTTPOnly: parsed.isHTTPOnly,
                            sameSite: parsed.sameSite, created: now)
        // RFC 6265bis §5.7 step 16: an insecure origin may not shadow a Secure cookie of the same
        // name whose domain and path cover it.
        if !secureOrigin, cookies.contains(where: { existing in
            existing.isSecure && existing.name == cookie.name && !existing.isExpired(at: now)
                && (CookieDomain.domainMatches(existing.domain, cookie.domain) || CookieDomain.domainMatches(cookie.domain, existing.domain))
                && CookiePath.matches(cookie.path, existing.path)
        }) {
            return .insecure
        }
        if let index = cookies.firstIndex(where: { $0.sameSlot(as: cookie) }) {
            cookie.created = cookies[index].created
            cookies.remove(at: index)
        }
        if !cookie.isExpired(at: now) { cookies.append(cookie) }
        evict(now: now)
        return nil
    }

    /// The cookies to send to `url` in RFC 6265 §5.4's order (longest path first, then oldest
    /// first), marking them accessed at `now`.
    mutating func cookies(for url: URL, now: Date) -> [Cookie] {
        var chosen: [Int] = []
        for index in cookies.indices where !cookies[index].isExpired(at: now) && cookies[index].matches(url) {
            cookies[index].lastAccessed = now
            chosen.append(index)
        }
        return chosen.map { cookies[$0] }.sorted(by: Self.sendingOrder)
    }

    /// `a` goes before `b` in a `Cookie` field: the longer path first, then the earlier creation.
    static func sendingOrder(_ a: Cookie, _ b: Cookie) -> Bool {
        if a.path.utf8.count != b.path.utf8.count { return a.path.utf8.count > b.path.utf8.count }
        return a.created < b.created
    }

    /// The `Cookie` field value for `url`: `name=value` pairs joined by `; `, or `nil` for none.
    mutating func header(for url: URL, now: Date) -> String? {
        let chosen = cookies(for: url, now: now)
        return chosen.isEmpty ? nil : chosen.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Removes expired cookies, then the least recently used ones of any domain holding more than
    /// ``CookieJar/Limits/perDomain``, then the least recently used of all beyond
    /// ``CookieJar/Limits/total`` (RFC 6265 §5.3's eviction).
    mutating func evict(now: Date) {
        cookies.removeAll { $0.isExpired(at: now) }
        var byDomain: [String: Int] = [:]
        for cookie in cookies { byDomain[cookie.domain, default: 0] += 1 }
        for (domain, count) in byDomain where count > limits.perDomain {
            let victims = cookies.filter { $0.domain == domain }.sorted { $0.lastAccessed < $1.lastAccessed }
                .prefix(count - limits.perDomain)
            remove(victims)
        }
        if cookies.count > limits.total {
            remove(cookies.sorted { $0.lastAccessed < $1.lastAccessed }.prefix(cookies.count - limits.total))
        }
    }

    /// Removes every cookie, or those `where` selects.
    mutating func removeAll(where shouldRemove: (Cookie) -> Bool = { _ in true }) {
        cookies.removeAll(where: shouldRemove)
    }

    private mutating func remove(_ victims: ArraySlice<Cookie>) {
        for victim in victims {
            if let index = cookies.firstIndex(where: { $0.sameSlot(as: victim) }) { cookies.remove(at: index) }
        }
    }
}

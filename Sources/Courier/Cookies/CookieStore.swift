import Foundation

/// The cookies of a ``CookieJar`` and RFC 6265's rules for them, as a value: it takes
/// `Set-Cookie` fields and requests, with the time, and answers with what to store and send.
/// The jar adds the lock and the file.
struct CookieStore: Sendable, Equatable {
    /// The cookies by their ``Cookie/domain``, so that a request looks only at its host's
    /// domains, and a domain's limit is checked within its own bucket.
    private var buckets: [String: [Cookie]] = [:]
    /// How many cookies the buckets hold.
    private(set) var count = 0
    /// The bounds on how many cookies are kept.
    let limits: CookieJar.Limits
    /// The latest creation time given to a cookie: the next one is created later, so that the
    /// `Cookie` order of cookies stored at one instant (one response's fields) is their order.
    private var lastCreated = Date.distantPast

    init(limits: CookieJar.Limits, cookies: [Cookie] = []) {
        self.limits = limits
        for cookie in cookies { buckets[cookie.domain, default: []].append(cookie) }
        count = cookies.count
        lastCreated = cookies.map(\.created).max() ?? .distantPast
    }

    /// The creation time of a cookie stored at `now`: `now`, or a microsecond after the
    /// previous cookie's when that is not earlier (as Chromium does), so that no two cookies
    /// share one and RFC 6265 §5.4's "earlier creation first" always decides.
    private mutating func creationTime(at now: Date) -> Date {
        lastCreated = max(now, lastCreated.addingTimeInterval(0.000_001))
        return lastCreated
    }

    /// Every cookie, unordered (expired ones included until the store next changes).
    var cookies: [Cookie] { buckets.values.flatMap { $0 } }

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
                            sameSite: parsed.sameSite, created: creationTime(at: now))
        // RFC 6265bis §5.7 step 16: an insecure origin may not shadow a Secure cookie of the same
        // name whose domain and path cover it.
        if !secureOrigin, buckets.values.contains(where: { bucket in
            bucket.contains { existing in
                existing.isSecure && existing.name == cookie.name && !existing.isExpired(at: now)
                    && (CookieDomain.domainMatches(existing.domain, cookie.domain) || CookieDomain.domainMatches(cookie.domain, existing.domain))
                    && CookiePath.matches(cookie.path, existing.path)
            }
        }) {
            return .insecure
        }
        var bucket = buckets.removeValue(forKey: cookie.domain) ?? []
        // An expired cookie is gone (§5.3): one set again in its slot is new, created now.
        bucket.removeAll { $0.isExpired(at: now) }
        if let index = bucket.firstIndex(where: { $0.sameSlot(as: cookie) }) {
            cookie.created = bucket[index].created
            bucket.remove(at: index)
        }
        if !cookie.isExpired(at: now) { bucket.append(cookie) }
        if bucket.count > limits.perDomain {
            bucket.sort(by: Self.evictionOrder)
            bucket.removeFirst(bucket.count - limits.perDomain)
        }
        buckets[cookie.domain] = bucket.isEmpty ? nil : bucket
        recount()
        if count > limits.total { evict(now: now) }
        return nil
    }

    /// The cookies to send to `url` in RFC 6265 §5.4's order (longest path first, then oldest
    /// first), marking them accessed at `now`. Only the buckets of the host and of the domains
    /// above it are read.
    mutating func cookies(for url: URL, now: Date) -> [Cookie] {
        guard let target = Cookie.Target(url) else { return [] }
        var chosen: [Cookie] = []
        for domain in CookieDomain.domains(containing: target.host) {
            guard var bucket = buckets[domain] else { continue }
            for index in bucket.indices where !bucket[index].isExpired(at: now) && bucket[index].matches(target) {
                bucket[index].lastAccessed = now
                chosen.append(bucket[index])
            }
            buckets[domain] = bucket
        }
        return chosen.sorted(by: Self.sendingOrder)
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

    /// `a` is evicted before `b`: the less recently used first, and of cookies used at the same
    /// instant (sent in one request) the earlier created, so that which one goes never depends
    /// on the order of the store's buckets.
    static func evictionOrder(_ a: Cookie, _ b: Cookie) -> Bool {
        a.lastAccessed != b.lastAccessed ? a.lastAccessed < b.lastAccessed : a.created < b.created
    }

    /// Removes expired cookies, then the least recently used ones of any domain holding more than
    /// ``CookieJar/Limits/perDomain``, then the least recently used of all beyond
    /// ``CookieJar/Limits/total`` (RFC 6265 §5.3's eviction).
    mutating func evict(now: Date) {
        for (domain, bucket) in buckets {
            var kept = bucket.filter { !$0.isExpired(at: now) }
            if kept.count > limits.perDomain {
                kept.sort(by: Self.evictionOrder)
                kept.removeFirst(kept.count - limits.perDomain)
            }
            buckets[domain] = kept.isEmpty ? nil : kept
        }
        recount()
        guard count > limits.total else { return }
        let victims = cookies.sorted(by: Self.evictionOrder).prefix(count - limits.total)
        for victim in victims {
            buckets[victim.domain]?.removeAll { $0.sameSlot(as: victim) }
            if buckets[victim.domain]?.isEmpty == true { buckets[victim.domain] = nil }
        }
        recount()
    }

    /// Removes every cookie, or those `where` selects.
    mutating func removeAll(where shouldRemove: (Cookie) -> Bool = { _ in true }) {
        for (domain, bucket) in buckets {
            let kept = bucket.filter { !shouldRemove($0) }
            buckets[domain] = kept.isEmpty ? nil : kept
        }
        recount()
    }

    private mutating func recount() {
        count = buckets.values.reduce(0) { $0 + $1.count }
    }
}

@testable import Courier
import Foundation
import Testing

/// RFC 6265's parsing and matching rules, without sockets.
@Suite("Cookie rules")
struct CookieRuleTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: components)!
    }

    @Test("§5.1.1 cookie dates: the forms servers send, and the ones to refuse", arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", date(1994, 11, 6, 8, 49, 37)),
        ("Sunday, 06-Nov-94 08:49:37 GMT", date(1994, 11, 6, 8, 49, 37)),
        ("Sun Nov  6 08:49:37 1994", date(1994, 11, 6, 8, 49, 37)),
        ("Wed, 09 Jun 2021 10:18:14 GMT", date(2021, 6, 9, 10, 18, 14)),
        ("09-jun-21 10:18:14", date(2021, 6, 9, 10, 18, 14)),
        ("Thu, 01 Jan 1970 00:00:00 GMT", date(1970, 1, 1)),
        ("Mon, 29 Feb 2032 1:2:3 GMT", date(2032, 2, 29, 1, 2, 3)),
        ("Fri, 31 Dec 69 23:59:59 GMT", date(2069, 12, 31, 23, 59, 59)),
        ("Fri, 30 Feb 2024 10:00:00 GMT", nil),
        ("Sun, 06 Nov 1994 24:00:00 GMT", nil),
        ("Sun, 06 Nov 1600 08:49:37 GMT", nil),
        ("Sun, 06 1994 08:49:37 GMT", nil),
        ("tomorrow", nil),
        ("", nil),
    ] as [(String, Date?)])
    func cookieDates(text: String, expected: Date?) {
        #expect(CookieDate.parse(text) == expected, "\(text)")
    }

    @Test("§5.2 Set-Cookie parsing: name, value and each attribute")
    func parsing() throws {
        let full = try #require(SetCookie(" sid = abc 123 ; Path=/app; Domain=.Example.COM; Max-Age=60; Expires=Sun, 06 Nov 1994 08:49:37 GMT; Secure; HttpOnly; SameSite=Lax; Unknown=1"))
        #expect(full.name == "sid")
        #expect(full.value == "abc 123")
        #expect(full.path == "/app")
        #expect(full.domain == "example.com")
        #expect(full.maxAge == 60)
        #expect(full.isSecure && full.isHTTPOnly)
        #expect(full.sameSite == .lax)
        #expect(full.expiry(now: Self.now) == Self.now.addingTimeInterval(60), "Max-Age wins over Expires")

        let table: [(String, String?, String?)] = [  // line, name=value or nil when ignored, path
            ("a=1", "a=1", nil),
            ("a=", "a=", nil),
            ("a=b=c", "a=b=c", nil),
            ("noequals", nil, nil),
            ("=value", nil, nil),
            ("a=1\u{0}x", nil, nil),
            ("a=1\rSet-Cookie: b=2", nil, nil),
            ("a=1; Path=relative", "a=1", nil),
            ("a=1; Path=/x; Path=/y", "a=1", "/y"),
            ("a=1; path=/Q", "a=1", "/Q"),
            ("a=" + String(repeating: "v", count: 5_000), nil, nil),
        ]
        for (line, pair, path) in table {
            let parsed = SetCookie(line)
            #expect(parsed.map { "\($0.name)=\($0.value)" } == pair, "\(line.prefix(40))")
            #expect(parsed?.path == path, "\(line.prefix(40))")
        }
        #expect(SetCookie("a=1; Max-Age=0")?.expiry(now: Self.now) == .distantPast)
        #expect(SetCookie("a=1; Max-Age=-5")?.expiry(now: Self.now) == .distantPast)
        #expect(SetCookie("a=1; Max-Age=1x")?.maxAge == nil)
        #expect(SetCookie("a=1; Max-Age=99999999999999999999999")?.expiry(now: Self.now) == .distantFuture)
        #expect(SetCookie("a=1; Expires=garbage")?.expiry(now: Self.now) == nil)
        #expect(SetCookie("a=1; SameSite=Bogus")?.sameSite == nil)
        #expect(SetCookie("a=1; Domain=")?.domain == nil)
    }

    @Test("§5.1.3 domain matching and §5.1.4 path matching", arguments: [
        ("example.com", "example.com", true),
        ("www.example.com", "example.com", true),
        ("a.b.example.com", "example.com", true),
        ("badexample.com", "example.com", false),
        ("example.com", "www.example.com", false),
        ("1.2.3.4", "2.3.4", false),
        ("1.2.3.4", "1.2.3.4", true),
    ])
    func domainMatching(host: String, domain: String, matches: Bool) {
        #expect(CookieDomain.domainMatches(host, domain) == matches)
    }

    @Test("§5.1.4 path matching and default paths")
    func paths() {
        let table: [(String, String, Bool)] = [
            ("/", "/", true), ("/docs", "/", true), ("/docs", "/docs", true), ("/docs/", "/docs", true),
            ("/docs/a", "/docs", true), ("/docs/a", "/docs/", true), ("/docsx", "/docs", false),
            ("/doc", "/docs", false), ("/Docs", "/docs", false),
        ]
        for (request, cookie, matches) in table {
            #expect(CookiePath.matches(request, cookie) == matches, "\(request) vs \(cookie)")
        }
        let defaults: [(String, String)] = [
            ("http://h", "/"), ("http://h/", "/"), ("http://h/a", "/"), ("http://h/a/b", "/a"),
            ("http://h/a/b/", "/a/b"), ("http://h/a/b/c?x=/y", "/a/b"),
        ]
        for (url, path) in defaults {
            #expect(CookiePath.defaultPath(for: URL(string: url)!) == path, "\(url)")
        }
    }

    @Test("§5.3 storage: host-only, Domain, public suffixes, Secure, replacement and deletion")
    func storage() {
        var store = CookieStore(limits: .init())
        let page = URL(string: "https://www.example.com/app/page")!
        #expect(store.receive("host=1", from: page, now: Self.now) == nil)
        #expect(store.receive("wide=2; Domain=example.com; Path=/", from: page, now: Self.now) == nil)
        #expect(store.receive("up=3; Domain=com", from: page, now: Self.now) == .publicSuffix)
        #expect(store.receive("up=3; Domain=co.uk", from: URL(string: "https://shop.co.uk/")!, now: Self.now) == .publicSuffix)
        #expect(store.receive("self=4; Domain=co.uk", from: URL(string: "https://co.uk/")!, now: Self.now) == nil,
                "a Domain equal to the host becomes host-only, even for a public suffix")
        #expect(store.receive("other=5; Domain=other.com", from: page, now: Self.now) == .foreignDomain)
        #expect(store.receive("deeper=6; Domain=a.www.example.com", from: page, now: Self.now) == .foreignDomain)
        #expect(store.receive("s=7; Secure", from: URL(string: "http://www.example.com/")!, now: Self.now) == .insecure)
        #expect(store.receive("bad", from: page, now: Self.now) == .malformed)

        let host = store.cookies.first { $0.name == "host" }
        #expect(host?.isHostOnly == true && host?.domain == "www.example.com" && host?.path == "/app")
        #expect(store.cookies.first { $0.name == "wide" }?.isHostOnly == false)
        #expect(store.cookies.first { $0.name == "self" }.map { $0.isHostOnly && $0.domain == "co.uk" } == true)

        // Sent to the subdomain only when a Domain was given; host-only stays with its host.
        var header = store.header(for: URL(string: "https://api.example.com/app/x")!, now: Self.now)
        #expect(header == "wide=2")
        header = store.header(for: URL(string: "https://www.example.com/app/x")!, now: Self.now)
        #expect(header == "host=1; wide=2", "the longer path first")
        #expect(store.header(for: URL(string: "https://www.example.com/other")!, now: Self.now) == "wide=2")
        #expect(store.header(for: URL(string: "https://example.org/")!, now: Self.now) == nil)

        // Replacement keeps the creation time; an expired cookie deletes.
        let later = Self.now.addingTimeInterval(10)
        let created = store.cookies.first { $0.name == "wide" }?.created
        #expect(created.map { $0 > Self.now && $0 < Self.now.addingTimeInterval(0.001) } == true,
                "stored at the same instant as host=1, a microsecond after it")
        store.receive("wide=changed; Domain=example.com; Path=/", from: page, now: later)
        let replaced = store.cookies.filter { $0.name == "wide" }
        #expect(replaced.count == 1 && replaced.first?.value == "changed" && replaced.first?.created == created)
        store.receive("wide=; Domain=example.com; Path=/; Max-Age=0", from: page, now: later)
        #expect(!store.cookies.contains { $0.name == "wide" })
    }

    @Test("§5.4 Cookie header: Secure only over https, order by path length then creation, expiry")
    func sending() {
        var store = CookieStore(limits: .init())
        let secure = URL(string: "https://h.test/a/b/c")!
        store.receive("old=1; Path=/", from: secure, now: Self.now)
        store.receive("deep=2; Path=/a/b", from: secure, now: Self.now.addingTimeInterval(1))
        store.receive("new=3; Path=/", from: secure, now: Self.now.addingTimeInterval(2))
        store.receive("secret=4; Path=/; Secure", from: secure, now: Self.now.addingTimeInterval(3))
        store.receive("brief=5; Path=/; Max-Age=10", from: secure, now: Self.now.addingTimeInterval(4))
        let at = Self.now.addingTimeInterval(5)
        #expect(store.header(for: secure, now: at) == "deep=2; old=1; new=3; secret=4; brief=5")
        #expect(store.header(for: URL(string: "http://h.test/a/b/c")!, now: at) == "deep=2; old=1; new=3; brief=5")
        #expect(store.header(for: secure, now: Self.now.addingTimeInterval(60)) == "deep=2; old=1; new=3; secret=4")
        // An http response may not shadow the Secure cookie.
        #expect(store.receive("secret=evil; Path=/", from: URL(string: "http://h.test/")!, now: at) == .insecure)
    }

    @Test("§5.4 order: the fields of one response are sent in their order, whatever their domain, also after a replacement or a reload")
    func sameInstantOrder() throws {
        let url = URL(string: "http://a.example.test/")!
        var store = CookieStore(limits: .init())
        store.receive("wide=1; Domain=example.test; Max-Age=600", from: url, now: Self.now)
        store.receive("host=2; Max-Age=600", from: url, now: Self.now)
        store.receive("last=3; Max-Age=600", from: url, now: Self.now)
        #expect(store.header(for: url, now: Self.now) == "wide=1; host=2; last=3")
        store.receive("host=4; Max-Age=600", from: url, now: Self.now.addingTimeInterval(1))
        #expect(store.header(for: url, now: Self.now.addingTimeInterval(1)) == "wide=1; host=4; last=3",
                "a replaced cookie keeps its place")
        // A jar read back from its file keeps the order, whatever order the file lists them in.
        let reloaded = CookieStore(limits: .init(), cookies: store.cookies.reversed())
        var copy = reloaded
        #expect(copy.header(for: url, now: Self.now.addingTimeInterval(2)) == "wide=1; host=4; last=3")
        copy = CookieStore(limits: .init(), cookies: store.cookies.sorted { $0.name < $1.name })
        #expect(copy.header(for: url, now: Self.now.addingTimeInterval(2)) == "wide=1; host=4; last=3")
    }

    @Test("§5.3: a cookie set again after the previous one expired is a new cookie, created now, not in the expired one's place")
    func recreatedAfterExpiry() {
        let url = URL(string: "http://h.test/")!
        var store = CookieStore(limits: .init())
        store.receive("brief=1; Max-Age=60", from: url, now: Self.now)
        store.receive("stay=2", from: url, now: Self.now.addingTimeInterval(1))
        let later = Self.now.addingTimeInterval(120)
        #expect(store.header(for: url, now: later) == "stay=2")
        store.receive("brief=3", from: url, now: later)
        #expect(store.header(for: url, now: later) == "stay=2; brief=3")
        #expect(store.cookies.first { $0.name == "brief" }?.created == later)
    }

    @Test("eviction: a server cannot grow the jar beyond its limits; the least recently used go first")
    func eviction() {
        var store = CookieStore(limits: .init(perDomain: 5, total: 8))
        let url = URL(string: "http://a.test/")!
        for index in 0..<20 {
            store.receive("c\(index)=x", from: url, now: Self.now.addingTimeInterval(Double(index)))
        }
        #expect(store.cookies.count == 5)
        #expect(Set(store.cookies.map(\.name)) == ["c15", "c16", "c17", "c18", "c19"])
        for host in 0..<5 {
            for index in 0..<5 {
                store.receive("d\(index)=x", from: URL(string: "http://h\(host).test/")!, now: Self.now.addingTimeInterval(100 + Double(host * 10 + index)))
            }
        }
        #expect(store.cookies.count == 8)
        #expect(store.cookies.allSatisfy { $0.domain == "h3.test" || $0.domain == "h4.test" })
    }

    @Test("eviction: of cookies last used at one instant (sent in one request), the earliest created go first, whatever their domains")
    func evictionTies() {
        // 30 cookies in 30 domains, created one after another, then all sent at one instant;
        // the next one stored takes the jar past its total of 30: the first created goes.
        for round in 0..<8 {
            var store = CookieStore(limits: .init(perDomain: 5, total: 30))
            let domains = (0..<30).map { "d\($0)-\(round).example" }
            for (index, domain) in domains.enumerated() {
                store.receive("c=\(index); Domain=\(domain)", from: URL(string: "http://www.\(domain)/")!, now: Self.now)
            }
            let later = Self.now.addingTimeInterval(60)
            for domain in domains { _ = store.header(for: URL(string: "http://www.\(domain)/")!, now: later) }
            store.receive("new=1", from: URL(string: "http://fresh.example/")!, now: later)
            let left = Set(store.cookies.map(\.domain))
            #expect(store.count == 30 && !left.contains(domains[0]) && left.contains(domains[1]), "round \(round): \(left.sorted())")
        }
    }

    @Test("a cookie's description never shows its value")
    func description() {
        let cookie = Cookie(name: "sid", value: "s3cret", domain: "example.com", isSecure: true)
        #expect(!cookie.description.contains("s3cret"))
        #expect(cookie.description.contains("sid=<redacted>"))
    }
}

extension CookieRuleTests {
    @Test("Set-Cookie fields that URLSession joined with commas are split; Expires dates are not")
    func foldedFields() {
        #expect(SetCookie.split("a=1; Path=/, b=2; Expires=Wed, 09 Jun 2021 10:18:14 GMT, c=3")
                == ["a=1; Path=/", "b=2; Expires=Wed, 09 Jun 2021 10:18:14 GMT", "c=3"])
        #expect(SetCookie.split("a=1; Expires=Sun, 06-Nov-94 08:49:37 GMT") == ["a=1; Expires=Sun, 06-Nov-94 08:49:37 GMT"])
        #expect(SetCookie.split("plain=1") == ["plain=1"])
    }
}

extension CookieRuleTests {
    @Test("a request looks up its host and the domains above it; an IP address only itself")
    func lookupDomains() {
        #expect(CookieDomain.domains(containing: "a.b.example.com") == ["a.b.example.com", "b.example.com", "example.com", "com"])
        #expect(CookieDomain.domains(containing: "localhost") == ["localhost"])
        #expect(CookieDomain.domains(containing: "127.0.0.1") == ["127.0.0.1"])
        #expect(CookieDomain.domains(containing: "::1") == ["::1"])
    }
}

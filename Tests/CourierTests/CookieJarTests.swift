import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The opt-in cookie jar over real sockets, against CourierTestServer's `/cookies` routes.
@Suite("Cookie jar")
struct CookieJarTests {
    struct Echoed: Decodable {
        let cookie: String
        let path: String
    }

    @Test("off by default; with a jar, /cookies/set is sent back, deleted on Max-Age=0, and a jar is shared",
          arguments: TransportUnderTest.allCases)
    func optIn(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let plain = leaks.connection(server, transport) { $0.cache = nil }
            _ = try await plain.get("/cookies/set", query: .from(["a": "1"]))
            #expect(try await plain.get("/cookies").decode(Echoed.self).cookie == "", "no jar: nothing is kept")

            let jar = CookieJar()
            let first = leaks.connection(server, transport) { $0.cookieJar = jar; $0.cache = nil }
            _ = try await first.get("/cookies/set", query: .from(["a": "1", "b": "two words"]))
            #expect(try await first.get("/cookies").decode(Echoed.self).cookie == "a=1; b=two words")
            #expect(jar.cookies.count == 2)

            let second = leaks.connection(server, transport) { $0.cookieJar = jar; $0.cache = nil }
            #expect(try await second.get("/cookies/x").decode(Echoed.self).cookie == "a=1; b=two words")
            _ = try await second.get("/cookies/delete", query: [.init("a", nil)])
            #expect(try await first.get("/cookies").decode(Echoed.self).cookie == "b=two words")

            // A caller's own Cookie field is sent as it is.
            let own = try await first.get("/cookies", headers: ["Cookie": "mine=1"]).decode(Echoed.self)
            #expect(own.cookie == "mine=1")
        }
    }

    @Test("attributes over the wire: Path, Secure over http, a public-suffix Domain, HttpOnly and SameSite kept",
          arguments: TransportUnderTest.allCases)
    func attributes(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let jar = CookieJar()
            let connection = leaks.connection(server, transport) { $0.cookieJar = jar; $0.cache = nil }
            let lines = ["scoped=1; Path=/cookies/deep", "secure=2; Secure", "suffix=3; Domain=com",
                         "flags=4; HttpOnly; SameSite=Strict; Path=/"]
            _ = try await connection.get("/cookies/raw", query: lines.map { HTTPRequest.QueryItem("set", $0) })
            #expect(Set(jar.cookies.map(\.name)) == ["scoped", "flags"])
            let flags = jar.cookies.first { $0.name == "flags" }
            #expect(flags?.isHTTPOnly == true && flags?.sameSite == .strict && flags?.isHostOnly == true)
            #expect(try await connection.get("/cookies").decode(Echoed.self).cookie == "flags=4")
            #expect(try await connection.get("/cookies/deep/er").decode(Echoed.self).cookie == "scoped=1; flags=4")
            #expect(try await connection.get("/cookies/deeper").decode(Echoed.self).cookie == "flags=4")
        }
    }

    @Test("a Set-Cookie field is one cookie (RFC 6265 §5.2): a comma and name=value in its value do not start another")
    func commaInValue() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let jar = CookieJar()
            let connection = leaks.connection(server, .native) { $0.cookieJar = jar; $0.cache = nil }
            _ = try await connection.get("/cookies/raw", query: [.init("set", "list=a,admin=1; Path=/")])
            #expect(jar.cookies.map { "\($0.name)=\($0.value)" } == ["list=a,admin=1"])
            #expect(try await connection.get("/cookies").decode(Echoed.self).cookie == "list=a,admin=1")
        }
    }

    @Test("redirects: a cookie set by a redirect goes with the next hop; another port of the host gets the host's cookies (RFC 6265 ignores ports) but not the caller's Authorization")
    func redirectAcrossPorts() async throws {
        let first = try TestServer()
        let second = try TestServer()
        defer { first.shutdown(); second.shutdown() }
        try await withLeakCheck { leaks in
            let jar = CookieJar()
            let connection = leaks.connection(first, .native) { $0.cookieJar = jar; $0.cache = nil }
            leaks.watch(second)
            let elsewhere = second.baseURL.absoluteString + "/echo/there"
            let echoed = try await connection.get("/redirect-to", query: [.init("url", elsewhere), .init("set", "hop=1")],
                                                  headers: ["Authorization": "Bearer s3cret"])
            #expect(echoed.url.port == second.port)
            let seen = try echoed.decode(Echo.self)
            #expect(seen.header("Cookie") == "hop=1")
            #expect(seen.header("Authorization") == nil)
            // Within the origin, the next hop carries the cookie the redirect set.
            let same = try await connection.get("/redirect-to", query: [.init("url", "/cookies/here"), .init("set", "again=2")])
            #expect(try same.decode(Echoed.self).cookie == "hop=1; again=2")
        }
    }

    @Test("redirects to another host: host-only cookies stay behind, Domain cookies follow only where they domain-match")
    func redirectAcrossHosts() async throws {
        let first = try TestServer()
        let second = try TestServer()
        defer { first.shutdown(); second.shutdown() }
        try await withLeakCheck { leaks in
            var configuration = NativeTransport.Configuration()
            configuration.addressOverrides = [
                try .init(host: "www.cookies.test", port: first.port, addresses: ["127.0.0.1"]),
                try .init(host: "api.cookies.test", port: second.port, addresses: ["127.0.0.1"]),
                try .init(host: "elsewhere.test", port: second.port, addresses: ["127.0.0.1"]),
            ]
            let transport = leaks.track(NativeTransport(configuration: configuration))
            defer { transport.shutdown() }
            leaks.watch(first)
            leaks.watch(second)
            let jar = CookieJar()
            let base = URL(string: "http://www.cookies.test:\(first.port)")!
            let connection = leaks.track(HTTPConnection(baseURL: base, configuration: {
                var settings = HTTPConnection.Configuration(timeout: .seconds(10), transport: transport)
                settings.cookieJar = jar
                settings.cache = nil
                return settings
            }()))
            _ = try await connection.get("/cookies/raw", query: [.init("set", "host=1; Path=/"),
                                                                 .init("set", "wide=2; Domain=cookies.test; Path=/")])
            let sibling = "http://api.cookies.test:\(second.port)/echo/sibling"
            var seen = try await connection.get("/redirect-to", query: [.init("url", sibling)]).decode(Echo.self)
            #expect(seen.path == "/echo/sibling")
            #expect(seen.header("Cookie") == "wide=2")
            let foreign = "http://elsewhere.test:\(second.port)/echo/foreign"
            seen = try await connection.get("/redirect-to", query: [.init("url", foreign)]).decode(Echo.self)
            #expect(seen.path == "/echo/foreign")
            #expect(seen.header("Cookie") == nil)
        }
    }

    @Test("the cache never mixes cookies: a response fetched with the jar's cookie is not served without it")
    func cacheSeparation() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            server.route("/profile") { request in
                .response(status: 200, headers: [("Cache-Control", "private, max-age=600"), ("Content-Type", "text/plain")],
                          body: Data("for \(request.value(for: "Cookie") ?? "nobody")".utf8))
            }
            let jar = CookieJar()
            let connection = leaks.connection(server, .native) { $0.cookieJar = jar }
            #expect(try await connection.get("/profile").text == "for nobody")
            _ = try await connection.get("/cookies/set", query: .from(["user": "alice"]))
            #expect(try await connection.get("/profile").text == "for user=alice")
            jar.removeAll()
            #expect(try await connection.get("/profile").text == "for nobody")
            #expect(try await connection.get("/cookies/set", query: .from(["user": "alice"])).headers.contains("Set-Cookie"))
            let again = try await connection.get("/profile")
            #expect(again.text == "for user=alice")
        }
    }

    @Test("persistence: saved with mode 0600, read back, session cookies not saved")
    func persistence() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-jar-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = CookieJar.File(directory: PrivateDirectory(url: directory))
        try await withLeakCheck { leaks in
            let jar = try CookieJar(file: file)
            let connection = leaks.connection(server, .native) { $0.cookieJar = jar; $0.cache = nil }
            _ = try await connection.get("/cookies/raw", query: [.init("set", "kept=1; Max-Age=3600; Path=/"),
                                                                 .init("set", "session=2; Path=/")])
            try jar.save()
        }
        let path = directory.appendingPathComponent("cookies.json").path
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let reloaded = try CookieJar(file: file)
        #expect(reloaded.cookies.map(\.name) == ["kept"])
        #expect(reloaded.cookieHeader(for: server.baseURL) == "kept=1")
    }
}

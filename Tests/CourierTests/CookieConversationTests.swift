import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The cookie jar in real conversations: seeded random `Set-Cookie` fields, requests and
/// redirects across hosts and ports through an ``HTTPConnection`` with a jar, on the native
/// transport (several host names reach 127.0.0.1 through its address overrides), every `Cookie`
/// field the servers receive predicted by ``CookieModel``.
@Suite("Cookie conversations")
struct CookieConversationTests {
    /// The host names the servers answer for.
    static let hosts = ["example.test", "a.example.test", "b.a.example.test", "other.test"]
    /// The request paths.
    static let paths = ["", "/", "/docs", "/docs/", "/docs/a", "/docs/a/b", "/docsx", "/Docs/a", "/other/x", "/docs/a%20b"]

    /// A place of a conversation: an origin and a path.
    struct Place {
        var scheme: String
        var host: String
        var port: Int
        var path: String

        /// The URL with these query parameters (values percent-encoded here).
        func url(_ query: [(String, String)] = []) -> String {
            let parameters = query.map { "\($0.0)=\(CookieConversationRoute.encoded($0.1))" }.joined(separator: "&")
            return "\(scheme)://\(host):\(port)\(path)\(parameters.isEmpty ? "" : "?" + parameters)"
        }

        /// What the model needs of it.
        var model: CookieModel.Place { .init(host: host, path: path, https: scheme == "https") }

        /// Whether it has the origin of `other`.
        func sameOrigin(as other: Place) -> Bool { (scheme, host, port) == (other.scheme, other.host, other.port) }
    }

    /// Plays conversation `stream` of the test seeded with `seed`: 40 random steps over `places`
    /// through a connection to `base` with a fresh jar on its own clock, `route` recording what
    /// the servers received; stops at the first difference from the model. A step may redirect
    /// to another place when `redirects` allows it (Courier refuses https to http by default).
    static func play(seed: UInt64, stream: Int, base: String, transport: NativeTransport, leaks: LeakCheck,
                     places: (inout SeededRandom) -> Place, redirects: (Place, Place) -> Bool = { _, _ in true },
                     route: CookieConversationRoute) async throws {
        var random = SeededRandom(seed: seed, stream: stream)
        let clock = ManualDateClock(start: CookieJarModelTests.start)
        let connection = leaks.track(Self.connection(base: base, transport: transport, clock: clock))
        let hint = CookieJarModelTests.hint(seed: seed, stream: stream)
        var generator = SetCookieGenerator()
        generator.wireSafe = true
        var model = CookieModel()
        var log: [String] = []
        for step in 0..<40 {
            clock.advance(by: Double(Int.random(in: 1...120, using: &random)))
            if Int.random(in: 0..<10, using: &random) == 0 { clock.advance(by: 86_400) }
            let now = clock.secondsSince1970
            let first = places(&random)
            let fields = (0..<Int.random(in: 0...2, using: &random)).map { _ in generator.make(now: now, using: &random) }
            var query = fields.map { ("set", $0.line) }
            var second: Place? = Int.random(in: 0..<3, using: &random) == 0 ? places(&random) : nil
            if let target = second, !redirects(first, target) { second = nil }
            let secondFields = second == nil ? [] : (0..<Int.random(in: 0...1, using: &random)).map { _ in generator.make(now: now, using: &random) }
            if let second { query.append(("to", second.url(secondFields.map { ("set", $0.line) }))) }
            let own = Int.random(in: 0..<6, using: &random) == 0 ? "mine=1; other=\"two words\"" : nil
            let url = first.url(query)
            var expected = [own ?? model.header(for: first.model, now: now) ?? "<none>"]
            for field in fields { model.receive(field, from: first.model, now: now) }
            if let second {
                let keeps = own != nil && second.sameOrigin(as: first)
                expected.append(keeps ? own! : model.header(for: second.model, now: now) ?? "<none>")
                for field in secondFields { model.receive(field, from: second.model, now: now) }
            }
            _ = try await connection.get(url, headers: own.map { ["Cookie": $0] } ?? [:])
            let received = route.takeReceipts()
            log.append("\(step): \(url) \(fields + secondFields) → \(received)")
            guard received == expected else {
                Issue.record("\(hint) step \(step): the servers received \(received), the model says \(expected); last steps:\n\(log.suffix(8).joined(separator: "\n"))")
                return
            }
        }
    }

    @Test("random Set-Cookie fields, requests and redirects across hosts and ports: every Cookie field the servers receive is what RFC 6265 predicts")
    func acrossHosts() async throws {
        let servers = [try TestServer(), try TestServer()]
        defer { for server in servers { server.shutdown() } }
        let route = CookieConversationRoute()
        for server in servers { route.install(on: server) }
        let seed = SeededRandom.seed()
        try await withLeakCheck { leaks in
            var configuration = NativeTransport.Configuration()
            configuration.addressOverrides = try Self.hosts.flatMap { host in
                try servers.map { try NativeTransport.AddressOverride(host: host, port: $0.port, addresses: ["127.0.0.1"]) }
            }
            let transport = leaks.track(NativeTransport(configuration: configuration))
            defer { transport.shutdown() }
            for server in servers { leaks.watch(server) }
            let ports = servers.map(\.port)
            for stream in 0..<4 {
                try await Self.play(seed: seed, stream: stream, base: "http://example.test:\(ports[0])", transport: transport,
                                    leaks: leaks, places: { random in
                    let host = [Self.hosts.randomElement(using: &random)!, "127.0.0.1"].randomElement(using: &random)!
                    return Place(scheme: "http", host: host, port: ports.randomElement(using: &random)!,
                                 path: Self.paths.randomElement(using: &random)!)
                }, route: route)
            }
        }
    }

    @Test("over https and http to one host: Secure cookies are set and sent only over https, the others over both",
          .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable, "nginx and openssl are needed for the https conversation"))
    func secureOverHTTPS() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let route = CookieConversationRoute()
        route.install(on: server)
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(server: "location / { proxy_pass http://127.0.0.1:\(server.port); }",
                                          tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        let seed = SeededRandom.seed()
        try await withLeakCheck { leaks in
            var configuration = NativeTransport.Configuration(tls: TLSOptions(trustRoots: .pem(certificates.caPEM)))
            configuration.addressOverrides = try [server.port, nginx.port].map {
                try NativeTransport.AddressOverride(host: "localhost", port: $0, addresses: ["127.0.0.1"])
            }
            let transport = leaks.track(NativeTransport(configuration: configuration))
            defer { transport.shutdown() }
            leaks.watch(server)
            leaks.watch(port: nginx.port)
            for stream in 0..<3 {
                try await Self.play(seed: seed, stream: stream, base: "https://localhost:\(nginx.port)", transport: transport,
                                    leaks: leaks, places: { random in
                    let https = Bool.random(using: &random)
                    return Place(scheme: https ? "https" : "http", host: "localhost", port: https ? nginx.port : server.port,
                                 path: Self.paths.randomElement(using: &random)!)
                }, redirects: { $0.scheme == "http" || $1.scheme == "https" }, route: route)
            }
        }
    }

    /// A connection with a fresh jar on `clock`, no cache, over `transport`.
    static func connection(base: String, transport: NativeTransport, clock: ManualDateClock) -> HTTPConnection {
        var settings = HTTPConnection.Configuration(timeout: .seconds(10), transport: transport)
        settings.cookieJar = CookieJar(now: clock.now)
        settings.cache = nil
        return HTTPConnection(baseURL: URL(string: base)!, configuration: settings)
    }
}

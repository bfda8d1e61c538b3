import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Credentials stay with their origin (security review M1, I8, L3, L4, L5): two real servers,
/// the second one standing for a foreign origin that must never see a credential.
@Suite("Credentials stay with their origin")
struct CredentialOriginTests {
    /// Puts a key on a field whose name no list of credential names knows, and counts refreshes.
    final class CallerKeyAuthenticator: Authenticator {
        let refreshes = Mutex(0)

        func apply(_ credential: Credential, to request: inout TransportRequest) {
            request.headers.set(credential.secret, for: "X-Caller")
            request.headers.set(credential.secret, for: "Api-Key")
        }

        func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
            refreshes.withLock { $0 += 1 }
            return Credential(secret: "k3y")
        }
    }

    /// Two servers. On the first, `/to/<path>` redirects (307) to `/<path>` on the second; and,
    /// answering 401 to a request without `X-Caller`, `/away` redirects (302) to `/echo/landed` on
    /// the second, `/stay` to its own `/echo/here`, and `/mine` says `ok`.
    func withTwoServers(_ body: (TestServer, TestServer, LeakCheck) async throws -> Void) async throws {
        let home = try TestServer()
        let foreign = try TestServer()
        defer { home.shutdown(); foreign.shutdown() }
        let landing = foreign.url("/echo/landed").absoluteString
        let foreignBase = foreign.baseURL.absoluteString
        home.route("/to/*") { request in .response(status: 307, headers: [("Location", foreignBase + request.path.dropFirst(3))]) }
        func demandingCaller(_ reply: TestServer.Reply) -> TestServer.Handler {
            { request in request.value(for: "X-Caller") == nil ? .response(status: 401) : reply }
        }
        home.route("/away", demandingCaller(.response(status: 302, headers: [("Location", landing)])))
        home.route("/stay", demandingCaller(.response(status: 307, headers: [("Location", "/echo/here")])))
        home.route("/mine", demandingCaller(.text("ok")))
        try await withLeakCheck { leaks in
            leaks.watch(foreign)
            try await body(home, foreign, leaks)
        }
    }

    @Test("M1 a custom authenticator's header is dropped on a cross-origin hop", arguments: TransportUnderTest.allCases)
    func authenticatorHeaderDropped(transport: TransportUnderTest) async throws {
        try await withTwoServers { home, foreign, leaks throws in
            foreign.route("/echo/landed") { request in
                request.value(for: "X-Caller") == nil && request.value(for: "Api-Key") == nil
                    ? .text("clean") : .response(status: 400)
            }
            let connection = leaks.connection(home, transport)
            let authenticator = CallerKeyAuthenticator()
            connection.authenticate(matching: .prefix(home.baseURL.absoluteString + "/"), with: authenticator)
            let away = try await connection.get("/away")
            #expect(away.url.port == foreign.port)
            #expect(away.text == "clean")
            let stay = try await connection.get("/stay").decode(Echo.self)
            #expect(stay.header("X-Caller") == "k3y")
            #expect(stay.header("Api-Key") == "k3y")
        }
    }

    @Test("M1 the connection's default headers are dropped on a cross-origin hop", arguments: TransportUnderTest.allCases)
    func defaultHeadersDropped(transport: TransportUnderTest) async throws {
        try await withTwoServers { home, _, leaks throws in
            let connection = leaks.connection(home, transport) { $0.headers = ["X-Caller": "alice", "X-Session-Id": "s1"] }
            let away = try await connection.get("/away").decode(Echo.self)
            #expect(away.path == "/echo/landed")
            #expect(away.header("X-Caller") == nil)
            #expect(away.header("X-Session-Id") == nil)
            let stay = try await connection.get("/stay").decode(Echo.self)
            #expect(stay.header("X-Caller") == "alice")
            #expect(stay.header("X-Session-Id") == "s1")
        }
    }

    @Test("I8 default headers go only to the base URL's origin; a target with :// inside its query is relative")
    func defaultHeadersOnlyToBaseOrigin() async throws {
        try await withTwoServers { home, foreign, leaks throws in
            let connection = leaks.connection(home, .native) { $0.headers = ["X-Caller": "alice"] }
            let elsewhere = try await connection.get(foreign.url("/echo/direct").absoluteString).decode(Echo.self)
            #expect(elsewhere.path == "/echo/direct")
            #expect(elsewhere.header("X-Caller") == nil)
            #expect(foreign.requestCount(path: "/echo/direct") == 1)
            let relative = try await connection.get("/echo/r?u=http://x").decode(Echo.self)
            #expect(relative.path == "/echo/r")
            #expect(relative.query == "u=http://x")
            #expect(relative.header("X-Caller") == "alice")
        }
    }

    @Test("L3 a prefix matcher does not cover a userinfo URL that leads to another host and port")
    func prefixMatcherIgnoresUserinfo() async throws {
        try await withTwoServers { home, foreign, leaks throws in
            let connection = leaks.connection(home, .native)
            connection.authenticate(matching: .prefix("http://127.0.0.1:\(home.port)"), with: CallerKeyAuthenticator())
            #expect(try await connection.get("/mine").text == "ok")  // the credential exists from here on
            let trick = "http://127.0.0.1:\(home.port)@localhost:\(foreign.port)/echo/trick"
            let tricked = try await connection.get(trick).decode(Echo.self)
            #expect(foreign.requestCount(path: "/echo/trick") == 1)
            #expect(tricked.header("X-Caller") == nil)
            #expect(tricked.header("Api-Key") == nil)
        }
    }

    @Test("L3 a URL written as the prefix is, then more, is covered only at a segment boundary, as when the prefix is written otherwise")
    func prefixTextBoundaries() {
        let written = URLMatcher.prefix("https://api.example.com/v1")
        let otherwise = URLMatcher.prefix("HTTPS://API.EXAMPLE.COM:443/v1")
        let covered = ["https://api.example.com/v1", "https://api.example.com/v1/", "https://api.example.com/v1/rooms/7",
                       "https://api.example.com/v1?page=2", "https://api.example.com/v1#top", "https://api.example.com/v1/../admin"]
        let notCovered = ["https://api.example.com/v10", "https://api.example.com/v1.json", "https://api.example.com/v1@evil.net/x",
                          "https://api.example.com/v1;v=2", "https://api.example.com.evil.net/v1", "https://api.example.com:8443/v1/x"]
        for text in covered {
            #expect(written.matches(URL(string: text)!), "\(text)")
            #expect(otherwise.matches(URL(string: text)!), "\(text)")
        }
        for text in notCovered {
            #expect(!written.matches(URL(string: text)!), "\(text)")
            #expect(!otherwise.matches(URL(string: text)!), "\(text)")
        }
        let directory = URLMatcher.prefix("https://api.example.com/v1/")
        #expect(directory.matches(URL(string: "https://api.example.com/v1/rooms")!))
        #expect(!directory.matches(URL(string: "https://api.example.com/v10/rooms")!))
    }

    @Test("L3 a prefix matcher compares origins exactly and paths by segment; a regular expression covers the whole URL")
    func matcherRules() throws {
        let prefix = URLMatcher.prefix("https://api.example.com/v1")
        #expect(prefix.matches(URL(string: "https://api.example.com/v1")!))
        #expect(prefix.matches(URL(string: "https://API.example.com:443/v1/rooms?x=1")!))
        #expect(!prefix.matches(URL(string: "https://api.example.com.evil.net/v1/rooms")!))
        #expect(!prefix.matches(URL(string: "https://api.example.com:443@evil.net/v1/rooms")!))
        #expect(!prefix.matches(URL(string: "https://api.example.com/v10")!))
        #expect(!prefix.matches(URL(string: "http://api.example.com/v1/rooms")!))
        #expect(!prefix.matches(URL(string: "https://api.example.com:8443/v1/rooms")!))
        let origin = URLMatcher.prefix("https://api.example.com")
        #expect(origin.matches(URL(string: "https://api.example.com/anything")!))
        #expect(!origin.matches(URL(string: "https://api.example.com.evil.net/")!))
        #expect(!URLMatcher.prefix("api.example.com").matches(URL(string: "https://api.example.com/")!))
        let expression = try URLMatcher.regularExpression(#"https://api\.example\.com/.*"#)
        #expect(expression.matches(URL(string: "https://api.example.com/v1")!))
        #expect(!expression.matches(URL(string: "https://evil.net/?u=https://api.example.com/v1")!))
    }

    @Test("L4 a 401 from a foreign origin after a redirect is no challenge: no refresh, the caller gets the 401",
          arguments: TransportUnderTest.allCases)
    func foreignChallengeIgnored(transport: TransportUnderTest) async throws {
        try await withTwoServers { home, foreign, leaks throws in
            let connection = leaks.connection(home, transport)
            let authenticator = CallerKeyAuthenticator()
            connection.authenticate(matching: .everything, with: authenticator)
            #expect(try await connection.get("/mine").text == "ok")
            #expect(authenticator.refreshes.withLock { $0 } == 1)
            do {
                _ = try await connection.get("/to/status/401")
                Issue.record("the foreign 401 was not reported")
            } catch let error as HTTPConnectionError {
                #expect(error == .unacceptableStatus)
                #expect(error.response?.status.code == 401)
                #expect(error.response?.url.port == foreign.port)
            }
            #expect(authenticator.refreshes.withLock { $0 } == 1)
            #expect(foreign.requestCount(path: "/status/401") == 1)
            #expect(home.requestCount(path: "/to/status/401") == 1)
        }
    }

    @Test("L5 a token request answered with a 307 to another origin is not followed: that server receives nothing",
          arguments: TransportUnderTest.allCases)
    func tokenRequestStaysHome(transport: TransportUnderTest) async throws {
        try await withTwoServers { home, foreign, leaks throws in
            home.route("/moved-token") { _ in .response(status: 307, headers: [("Location", "/real-token")]) }
            home.route("/real-token") { _ in .text("t0k") }
            home.route("/protected") { _ in .response(status: 401) }
            home.route("/guarded") { request in request.value(for: "Authorization") == "Bearer t0k" ? .text("in") : .response(status: 401) }
            let connection = leaks.connection(home, transport)
            let bearer = { (path: String) in
                BearerTokenAuthenticator(tokenURL: home.url(path), credentials: { _ in (name: "alice", password: "pw") }) { response in
                    BearerTokenAuthenticator.Token(value: response.text ?? "")
                }
            }
            connection.authenticate(matching: .prefix(home.url("/protected").absoluteString), with: bearer("/to/token"))
            await #expect(throws: HTTPConnectionError.self) { try await connection.get("/protected") }
            #expect(home.requestCount(path: "/to/token") == 1)
            #expect(foreign.totalRequests == 0)
            connection.authenticate(matching: .prefix(home.url("/guarded").absoluteString), with: bearer("/moved-token"))
            #expect(try await connection.get("/guarded").text == "in")  // a same-origin hop is still followed
            #expect(home.requestCount(path: "/real-token") == 1)
        }
    }
}

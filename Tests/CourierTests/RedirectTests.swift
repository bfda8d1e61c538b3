import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Redirects (reliability section F).
@Suite("Redirects")
struct RedirectTests {
    /// `/chain/<n>` redirects to `/chain/<n-1>`; `/chain/0` echoes.
    static func addChain(to server: TestServer, status: Int = 302) {
        server.route("/chain/*") { request in
            let n = Int(request.path.split(separator: "/").last ?? "") ?? 0
            guard n > 0 else { return .json(["arrived": request.path, "method": request.method, "body": String(decoding: request.body, as: UTF8.self)]) }
            return .response(status: status, headers: [("Location", "/chain/\(n - 1)")])
        }
    }

    @Test("F1 a chain within the limit is followed; metrics count the hops", arguments: TransportUnderTest.allCases)
    func chainFollowed(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            Self.addChain(to: server)
            let response = try await leaks.connection(server, transport).get("/chain/10")
            #expect(response.status == .ok)
            #expect(response.url.path == "/chain/0")
            #expect(response.metrics?.redirects == 10)
            #expect(response.metrics?.attempts == 11)
        }
    }

    @Test("F1 a redirect inherits the fragment of the URL it answered when its Location has none (RFC 9110 §10.2.2); one of its own wins", arguments: TransportUnderTest.allCases)
    func fragmentInherited(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            Self.addChain(to: server)
            server.route("/own") { _ in .response(status: 302, headers: [("Location", "/chain/0#own")]) }
            let connection = leaks.connection(server, transport)
            let inherited = try await connection.get("/chain/2#part")
            #expect(inherited.url.path == "/chain/0" && inherited.url.fragment == "part", "\(inherited.url)")
            let own = try await connection.get("/own#part")
            #expect(own.url.path == "/chain/0" && own.url.fragment == "own", "\(own.url)")
        }
    }

    @Test("F1 a chain over the limit fails with tooManyRedirects", arguments: TransportUnderTest.allCases)
    func chainTooLong(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            Self.addChain(to: server)
            let connection = leaks.connection(server, transport)
            await #expect(throws: HTTPConnectionError.tooManyRedirects) { try await connection.get("/chain/11") }
            connection.redirectPolicy = .follow(limit: 2)
            await #expect(throws: HTTPConnectionError.tooManyRedirects) { try await connection.get("/chain/3") }
            #expect(try await connection.get("/chain/2").status == .ok)
        }
    }

    @Test("F2 a cycle is detected", arguments: TransportUnderTest.allCases)
    func cycle(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            server.route("/a") { _ in .response(status: 302, headers: [("Location", "/b")]) }
            server.route("/b") { _ in .response(status: 302, headers: [("Location", "/a")]) }
            await #expect(throws: HTTPConnectionError.redirectCycle) { try await leaks.connection(server, transport).get("/a") }
            #expect(server.requestCount(path: "/a") == 1)
            #expect(server.requestCount(path: "/b") == 1)
        }
    }

    @Test("F2 a cycle is detected when the Location differs from a request already made only by its fragment or the case of its scheme",
          arguments: TransportUnderTest.allCases)
    func cycleThroughAnotherSpelling(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let back = "HTTP://127.0.0.1:\(server.port)/a#top"
            server.route("/a") { _ in .response(status: 302, headers: [("Location", "/b")]) }
            server.route("/b") { _ in .response(status: 302, headers: [("Location", back)]) }
            server.route("/c") { _ in .response(status: 307, headers: [("Location", "/c#again")]) }
            let connection = leaks.connection(server, transport)
            await #expect(throws: HTTPConnectionError.redirectCycle) { try await connection.get("/a") }
            #expect(server.requestCount(path: "/a") == 1)
            #expect(server.requestCount(path: "/b") == 1)
            await #expect(throws: HTTPConnectionError.redirectCycle) { try await connection.get("/c") }
            #expect(server.requestCount(path: "/c") == 1)
        }
    }

    @Test("F1 a Location whose scheme and host are in capitals is followed as the same URL in lowercase", arguments: TransportUnderTest.allCases)
    func shoutedLocation(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let shouted = "HTTP://LOCALHOST:\(server.port)/echo/landed"
            server.route("/shout") { _ in .response(status: 302, headers: [("Location", shouted)]) }
            let connection = leaks.connection(server, transport)
            let response = try await connection.get("/shout")
            #expect(response.status == .ok)
            #expect(try response.decode(Echo.self).path == "/echo/landed")
            #expect(response.metrics?.redirects == 1)
            let direct = try await connection.get("HTTP://127.0.0.1:\(server.port)/echo/direct")
            #expect(try direct.decode(Echo.self).path == "/echo/direct")
        }
    }

    @Test("F3 301/302/303 turn POST into GET without a body; 307/308 keep both",
          arguments: TransportUnderTest.allCases, [301, 302, 303, 307, 308])
    func methodRewrite(transport: TransportUnderTest, status: Int) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            server.route("/moved") { _ in .response(status: status, headers: [("Location", "/echo/landed")]) }
            let echo = try await leaks.connection(server, transport)
                .post("/moved", body: .form(["room[name]": "Lobby"])).decode(Echo.self)
            if status == 307 || status == 308 {
                #expect(echo.method == "POST")
                #expect(echo.body == "room%5Bname%5D=Lobby")
                #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
            } else {
                #expect(echo.method == "GET")
                #expect(echo.bodyLength == 0)
                #expect(echo.header("Content-Type") == nil)
            }
        }
    }

    @Test("F4 credentials are dropped when a redirect crosses origins, kept within one", arguments: TransportUnderTest.allCases)
    func crossOrigin(transport: TransportUnderTest) async throws {
        let first = try TestServer()
        let second = try TestServer()
        defer { first.shutdown(); second.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(first)
            leaks.watch(second)
            let elsewhere = second.baseURL.absoluteString + "/echo/elsewhere"
            first.route("/away") { _ in .response(status: 302, headers: [("Location", elsewhere)]) }
            first.route("/stay") { _ in .response(status: 307, headers: [("Location", "/echo/here")]) }
            let connection = leaks.connection(first, transport)
            let secrets: HTTPHeaders = ["Authorization": "Bearer s3cret", "Cookie": "session=1", "Proxy-Authorization": "Basic eA==", "X-Trace": "keep"]
            let away = try await connection.get("/away", headers: secrets).decode(Echo.self)
            #expect(away.path == "/echo/elsewhere")
            #expect(away.header("Authorization") == nil)
            #expect(away.header("Cookie") == nil)
            #expect(away.header("Proxy-Authorization") == nil)
            #expect(away.header("X-Trace") == "keep")
            let stay = try await connection.get("/stay", headers: secrets).decode(Echo.self)
            #expect(stay.header("Authorization") == "Bearer s3cret")
            #expect(stay.header("Cookie") == "session=1")
        }
    }

    @Test("F5 a redirect without Location is the response; an unusable Location fails clearly", arguments: TransportUnderTest.allCases)
    func badLocation(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            server.route("/nowhere") { _ in .response(status: 302) }
            server.route("/garbage") { _ in .response(status: 301, headers: [("Location", "ftp://files.example/x")]) }
            let connection = leaks.connection(server, transport)
            do throws(HTTPConnectionError) {
                _ = try await connection.get("/nowhere")
                Issue.record("a 302 without Location is not a success")
            } catch {
                #expect(error == .unacceptableStatus)
                #expect(error.response?.status.code == 302)
            }
            await #expect(throws: HTTPConnectionError.redirectRefused) { try await connection.get("/garbage") }
        }
    }

    @Test("F5 a Location whose port is outside 1...65535 is refused as unusable, as a target with that port is", arguments: TransportUnderTest.allCases)
    func unusablePort(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            server.route("/port0") { _ in .response(status: 302, headers: [("Location", "http://127.0.0.1:0/x")]) }
            server.route("/port99999") { _ in .response(status: 307, headers: [("Location", "https://127.0.0.1:99999/x")]) }
            let connection = leaks.connection(server, transport)
            for path in ["/port0", "/port99999"] {
                do throws(HTTPConnectionError) {
                    _ = try await connection.get(path)
                    Issue.record("\(path): a redirect to an unusable port was followed")
                } catch {
                    #expect(error == .redirectRefused, "\(path): \(error)")
                    #expect(error.response?.status.code == (path == "/port0" ? 302 : 307), "\(path)")
                }
            }
        }
    }

    @Test("redirect following can be turned off, and hooks can stop or refuse a hop", arguments: TransportUnderTest.allCases)
    func policyAndHooks(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            Self.addChain(to: server)
            let connection = leaks.connection(server, transport)
            connection.validation = .acceptAll
            connection.redirectPolicy = .doNotFollow
            let first = try await connection.get("/chain/2")
            #expect(first.status.code == 302)
            #expect(first.headers["Location"] == "/chain/1")

            connection.redirectPolicy = .follow(hook: { hop in hop.count == 0 ? .follow : .stop })
            #expect(try await connection.get("/chain/3").url.path == "/chain/2")

            connection.redirectPolicy = .follow(hook: { _ in .refuse })
            await #expect(throws: HTTPConnectionError.redirectRefused) { try await connection.get("/chain/1") }

            connection.redirectPolicy = .follow(hook: { hop in
                var changed = hop.request
                changed.headers.set("yes", for: "X-Changed")
                changed.url = server.url("/echo/changed")
                return .followWith(changed)
            })
            let echo = try await connection.get("/chain/1").decode(Echo.self)
            #expect(echo.path == "/echo/changed")
            #expect(echo.header("X-Changed") == "yes")
        }
    }
}

import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// What the server receives for queries, bodies and targets, checked over real sockets.
@Suite("Request encoding")
struct RequestEncodingTests {
    @Test("query items are percent-encoded: space, +, &, =, /, non-ASCII", arguments: TransportUnderTest.allCases)
    func queryEncoding(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let response = try await connection.get("/echo", query: [
                .init("q", "a b"), .init("plus", "1+1"), .init("amp", "x&y"), .init("eq", "k=v"),
                .init("path", "a/b"), .init("name", "Zoë 日本"), .init("flag", nil), .init("room[name]", "Lobby"),
            ])
            let echo = try response.decode(Echo.self)
            #expect(echo.query == "q=a%20b&plus=1%2B1&amp=x%26y&eq=k%3Dv&path=a%2Fb&name=Zo%C3%AB%20%E6%97%A5%E6%9C%AC&flag&room%5Bname%5D=Lobby")
        }
    }

    @Test("a query already in the target is kept and items are appended", arguments: TransportUnderTest.allCases)
    func queryInTarget(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let echo = try await leaks.connection(server, transport)
                .get("/echo?since=41", query: [.init("limit", "5")]).decode(Echo.self)
            #expect(echo.query == "since=41&limit=5")
        }
    }

    @Test("form bodies encode bracketed keys and spaces as +", arguments: TransportUnderTest.allCases)
    func formBody(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let response = try await connection.post("/echo", body: .form([
                "user[name]": "alice smith", "user[password]": "p&ss=w+rd/ü",
            ]))
            let echo = try response.decode(Echo.self)
            #expect(echo.method == "POST")
            #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(echo.body == "user%5Bname%5D=alice+smith&user%5Bpassword%5D=p%26ss%3Dw%2Brd%2F%C3%BC")
        }
    }

    @Test("JSON bodies are encoded from Encodable with their content type", arguments: TransportUnderTest.allCases)
    func jsonBody(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            struct Room: Codable, Equatable { let name: String; let tags: [String] }
            let room = Room(name: "Lobby", tags: ["a", "b"])
            let echo = try await leaks.connection(server, transport)
                .put("/echo/rooms/1", body: .json(room)).decode(Echo.self)
            #expect(echo.method == "PUT")
            #expect(echo.path == "/echo/rooms/1")
            #expect(echo.header("Content-Type") == "application/json")
            #expect(try JSONDecoder().decode(Room.self, from: Data(echo.body.utf8)) == room)
        }
    }

    @Test("raw bodies keep their bytes and content type", arguments: TransportUnderTest.allCases)
    func rawBody(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let echo = try await leaks.connection(server, transport)
                .patch("/echo", body: .data(Data("hello".utf8), contentType: "text/x-greeting")).decode(Echo.self)
            #expect(echo.method == "PATCH")
            #expect(echo.body == "hello")
            #expect(echo.bodyLength == 5)
            #expect(echo.header("Content-Type") == "text/x-greeting")
        }
    }

    @Test("every method token reaches the server", arguments: TransportUnderTest.allCases)
    func methods(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            for method: HTTPRequest.Method in [.get, .post, .put, .patch, .delete, .options, "PURGE"] {
                let echo = try await connection.send(HTTPRequest(method, "/echo")).decode(Echo.self)
                #expect(echo.method == method.rawValue)
            }
            let head = try await connection.head("/echo")
            #expect(head.status == .ok)
            #expect(head.body.isEmpty)
        }
    }

    @Test("relative targets are appended to the base URL's path; absolute ones replace it", arguments: TransportUnderTest.allCases)
    func baseURLResolution(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let base = server.baseURL.appendingPathComponent("echo/api")
            let connection = leaks.track(HTTPConnection(baseURL: base, configuration: .init(transport: leaks.transport(transport))))
            #expect(try await connection.get("/rooms").decode(Echo.self).path == "/echo/api/rooms")
            #expect(try await connection.get("rooms/7").decode(Echo.self).path == "/echo/api/rooms/7")
            let absolute = server.baseURL.absoluteString + "/echo/elsewhere"
            #expect(try await connection.get(absolute).decode(Echo.self).path == "/echo/elsewhere")
        }
    }

    @Test("default headers are sent and a request's own fields win", arguments: TransportUnderTest.allCases)
    func defaultHeaders(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            connection.defaultHeaders = ["Accept": "application/json", "X-Client": "courier-tests"]
            let echo = try await connection.get("/echo", headers: ["X-Client": "override"]).decode(Echo.self)
            #expect(echo.header("Accept") == "application/json")
            #expect(echo.header("X-Client") == "override")
        }
    }

    @Test("a relative target without a base URL fails with invalidURL")
    func relativeWithoutBase() async {
        await withLeakCheck { leaks in
            let connection = leaks.track(HTTPConnection())
            await #expect(throws: HTTPConnectionError.invalidURL) { try await connection.get("/rooms") }
        }
    }

    @Test("an invalid method token or header fails with invalidRequest before anything is sent")
    func invalidRequest() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.track(HTTPConnection(baseURL: server.baseURL))
            await #expect(throws: HTTPConnectionError.invalidRequest) {
                try await connection.send(HTTPRequest("GE T", "/echo"))
            }
            await #expect(throws: HTTPConnectionError.invalidRequest) {
                try await connection.get("/echo", headers: ["X-Evil": "a\r\nInjected: yes"])
            }
            #expect(server.totalRequests == 0)
        }
    }
}

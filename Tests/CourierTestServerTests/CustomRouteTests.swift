import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@Suite("TestServer custom routes and replies", .ownThread)
struct CustomRouteTests {
    struct Token: Codable, Equatable {
        var token: String
        var expires: Int
    }

    @Test("exact routes, prefix routes and overriding built-ins")
    func matching() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/api/*") { .text("prefix \($0.path)") }
        server.route("/api/special/*") { _ in .text("longer prefix") }
        server.route("/api/exact") { request in .text("exact \(request.method) \(request.query)") }
        server.route("/echo") { _ in .response(status: 299) }
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.exchange("GET", "/api/anything/here").text == "prefix /api/anything/here")
        #expect(try client.exchange("GET", "/api/special/x").text == "longer prefix")
        #expect(try client.exchange("POST", "/api/exact?q=1").text == "exact POST q=1")
        #expect(try client.exchange("GET", "/echo").status == 299)
        #expect(try client.exchange("GET", "/echo/still-builtin").status == 200)
    }

    @Test("the handler sees method, path, query, fields, body and numbering")
    func requestFields() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let seen = Mutex<[String]>([])
        server.route("/inspect") { request in
            let line = "\(request.method) \(request.path) \(request.query) \(request.value(for: "x-token") ?? "-") "
                + "\(String(decoding: request.body, as: UTF8.self)) \(request.connectionNumber)/\(request.requestNumber) "
                + "\(request.queryValue("b") ?? "-") \(request.queryInt("a") ?? -1)"
            seen.withLock { $0.append(line) }
            return .response(status: 204)
        }
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.exchange("PATCH", "/inspect?a=7&b=x", headers: [("X-Token", "t1")], body: Array("data".utf8)).status == 204)
        #expect(seen.withLock { $0 } == ["PATCH /inspect a=7&b=x t1 data 1/1 x 7"])
    }

    @Test("json, text and delayed replies")
    func replies() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/token") { _ in .json(status: 201, Token(token: "abc", expires: 60)) }
        server.route("/text") { _ in .text(status: 202, "plain") }
        server.route("/later") { _ in .delayed(.milliseconds(100), .json(#"{"late": true}"#)) }
        let client = try RawHTTPClient(port: server.port)
        let token = try client.exchange("POST", "/token")
        #expect(token.status == 201)
        #expect(token.header("content-type") == "application/json")
        #expect(try JSONDecoder().decode(Token.self, from: Data(token.body)) == Token(token: "abc", expires: 60))
        let text = try client.exchange("GET", "/text")
        #expect(text.status == 202)
        #expect(text.header("content-type") == "text/plain; charset=utf-8")
        let start = Date()
        #expect(try client.exchange("GET", "/later").text == #"{"late": true}"#)
        #expect(Date().timeIntervalSince(start) >= 0.09)
    }

    @Test("a reply held by a gate goes out only once the test opens the gate")
    func gatedReply() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let gate = TestServer.Gate()
        server.route("/held") { _ in .whenOpen(gate, .text("released")) }
        let client = try RawHTTPClient(port: server.port)
        try client.sendRequest("GET", "/held")
        #expect(eventuallyBlocking { server.requestCount(path: "/held") == 1 })
        Thread.sleep(forTimeInterval: 0.2)  // several of the loop's 5 ms looks at the gate
        #expect(!client.hasAnswer())
        gate.open()
        #expect(gate.isOpen)
        #expect(try client.readResponse().text == "released")
        // An open gate lets later replies out at once.
        #expect(try client.exchange("GET", "/held").text == "released")
    }

    @Test("scripts send raw pieces with pauses, then keep the connection")
    func script() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/pieces") { _ in
            .script([
                .send("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n"),
                .pause(.milliseconds(50)),
                .send("abc"),
                .pause(.milliseconds(50)),
                .send(Data("def".utf8)),
            ])
        }
        let client = try RawHTTPClient(port: server.port)
        let start = Date()
        #expect(try client.exchange("GET", "/pieces").text == "abcdef")
        #expect(Date().timeIntervalSince(start) >= 0.09)
        #expect(try client.exchange("GET", "/pieces").text == "abcdef")
    }

    @Test("scripts can half-close, close and reset")
    func scriptFaults() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/half") { _ in .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"), .shutdownWrite]) }
        server.route("/reset") { _ in .script([.reset]) }
        let half = try RawHTTPClient(port: server.port)
        #expect(try half.exchange("GET", "/half").text == "hi")
        #expect(half.waitForClose())
        // After a half-close the server still reads (and discards) what the client sends.
        try half.send(Array(repeating: 0x41, count: 100_000))

        let reset = try RawHTTPClient(port: server.port)
        try reset.sendRequest("GET", "/reset")
        #expect(throws: RawHTTPClient.Failure.self) { try reset.readUntilClose() }
        #expect(eventuallyBlocking { server.connectionsOpen == 1 })
    }
}

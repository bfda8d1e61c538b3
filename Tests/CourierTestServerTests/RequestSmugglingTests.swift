import CourierTestServer
import Foundation
import Testing

/// Security review finding M2: request heads that a proxy could frame differently from the
/// server are refused with 400, and nothing after them on the connection is read or answered.
@Suite("Request smuggling (HTTPServerCore)", .ownThread)
struct RequestSmugglingTests {
    /// Sends `wire` on a new connection and returns everything the server sent until it closed.
    func answer(to wire: String, on server: TestServer) throws -> String {
        let client = try TestClient(port: server.port, timeout: 5)
        try client.send(wire)
        return String(decoding: try client.readUntilClose(), as: UTF8.self)
    }

    /// How many lines of `text` are status lines, that is how many responses it holds.
    func statusLines(in text: String) -> Int {
        text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.1 ") }.count
    }

    /// A pipelined request that must never be answered when it follows a refused head.
    static let smuggled = "GET /echo/smuggled HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test("M2 a request with both Transfer-Encoding and Content-Length gets 400 and the connection closes", arguments: [
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n0\r\n\r\n",
    ])
    func transferEncodingWithContentLength(head: String) throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let text = try answer(to: head + Self.smuggled, on: server)
        #expect(text.hasPrefix("HTTP/1.1 400 "), "\(text)")
        #expect(text.lowercased().contains("connection: close"), "\(text)")
        #expect(statusLines(in: text) == 1, "exactly one response: \(text)")
        #expect(server.totalRequests == 0, "neither request reached the handler")
        #expect(eventually { server.connectionsOpen == 0 })
    }

    @Test("M2 a request head with bare-LF line endings gets 400 and the connection closes", arguments: [
        "GET /echo HTTP/1.1\nHost: x\n\n",
        "GET /echo HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n",
        "GET /echo HTTP/1.1\r\nHost: x\r\n\n",
    ])
    func bareLineFeed(head: String) throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let text = try answer(to: head + Self.smuggled, on: server)
        #expect(text.hasPrefix("HTTP/1.1 400 "), "\(text)")
        #expect(statusLines(in: text) == 1, "exactly one response: \(text)")
        #expect(server.totalRequests == 0)
    }

    @Test("M2 an HTTP/1.1 request with no Host field or with two gets 400", arguments: [
        "GET /echo HTTP/1.1\r\n\r\n",
        "GET /echo HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
        "GET /echo HTTP/1.1\r\nHost: x\r\nX-A: b\r\nhost: x\r\n\r\n",
    ])
    func hostCount(head: String) throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let text = try answer(to: head + Self.smuggled, on: server)
        #expect(text.hasPrefix("HTTP/1.1 400 "), "\(text)")
        #expect(text.contains("Host"), "the error names the rule: \(text)")
        #expect(statusLines(in: text) == 1, "exactly one response: \(text)")
        #expect(server.totalRequests == 0)
    }

    @Test("M2 an HTTP/1.0 request without Host and an HTTP/1.1 request with one Host are served")
    func validHeadsServed() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let old = try TestClient(port: server.port, timeout: 5)
        try old.send("GET /echo/old HTTP/1.0\r\n\r\n")
        #expect(try old.readResponse().status == 200)
        let current = try TestClient(port: server.port, timeout: 5)
        try current.send("GET /echo/current HTTP/1.1\r\nhOsT: x\r\n\r\n")
        #expect(try current.readResponse().status == 200)
        #expect(server.requestCount(path: "/echo/old") == 1)
        #expect(server.requestCount(path: "/echo/current") == 1)
    }
}

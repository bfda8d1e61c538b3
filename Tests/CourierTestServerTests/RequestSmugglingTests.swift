import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Security review finding M2: request heads that a proxy could frame differently from the
/// server are refused with 400, and nothing after them on the connection is read or answered.
@Suite("Request smuggling (HTTPServerCore)", .ownThread)
struct RequestSmugglingTests {
    /// A pipelined request that must never be answered when it follows a refused head.
    static let smuggled = "GET /echo/smuggled HTTP/1.1\r\nHost: x\r\n\r\n"

    /// Sends `head` and then ``smuggled`` on one connection, and checks that the server answers
    /// with a single `400`, closes the connection and hands neither request to a handler.
    ///
    /// - Returns: Everything the server sent, for further checks.
    @discardableResult
    func expectRefused(_ head: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port, timeout: 5)
        try client.send(head + Self.smuggled)
        let text = String(decoding: try client.readUntilClose(), as: UTF8.self)
        let statusLines = text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.1 ") }
        #expect(text.hasPrefix("HTTP/1.1 400 "), "\(text)", sourceLocation: sourceLocation)
        #expect(text.lowercased().contains("connection: close"), "\(text)", sourceLocation: sourceLocation)
        #expect(statusLines.count == 1, "exactly one response: \(text)", sourceLocation: sourceLocation)
        #expect(server.totalRequests == 0, "no request reached the handler", sourceLocation: sourceLocation)
        #expect(eventuallyBlocking { server.connectionsOpen == 0 }, sourceLocation: sourceLocation)
        return text
    }

    @Test("M2 a request with both Transfer-Encoding and Content-Length gets 400 and the connection closes", arguments: [
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n0\r\n\r\n",
    ])
    func transferEncodingWithContentLength(head: String) throws {
        try expectRefused(head)
    }

    @Test("M2 a request head with bare-LF line endings gets 400 and the connection closes", arguments: [
        "GET /echo HTTP/1.1\nHost: x\n\n",
        "GET /echo HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n",
        "GET /echo HTTP/1.1\r\nHost: x\r\n\n",
    ])
    func bareLineFeed(head: String) throws {
        try expectRefused(head)
    }

    @Test("M2 an HTTP/1.1 request with no Host field or with two gets 400", arguments: [
        "GET /echo HTTP/1.1\r\n\r\n",
        "GET /echo HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
        "GET /echo HTTP/1.1\r\nHost: x\r\nX-A: b\r\nhost: x\r\n\r\n",
    ])
    func hostCount(head: String) throws {
        let text = try expectRefused(head)
        #expect(text.contains("exactly one Host field"), "the error names the rule: \(text)")
    }

    @Test("M2 an HTTP/1.0 request without Host and an HTTP/1.1 request with one Host are served")
    func validHeadsServed() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let old = try RawHTTPClient(port: server.port, timeout: 5)
        try old.send("GET /echo/old HTTP/1.0\r\n\r\n")
        #expect(try old.readResponse().status == 200)
        let current = try RawHTTPClient(port: server.port, timeout: 5)
        try current.send("GET /echo/current HTTP/1.1\r\nhOsT: x\r\n\r\n")
        #expect(try current.readResponse().status == 200)
        #expect(server.requestCount(path: "/echo/old") == 1)
        #expect(server.requestCount(path: "/echo/current") == 1)
    }
}

import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@Suite("TestServer fault routes", .ownThread)
struct FaultRouteTests {
    private func raw(_ server: TestServer, _ target: String, timeout: Double = 10) throws -> (RawHTTPClient, [UInt8]) {
        let client = try RawHTTPClient(port: server.port, timeout: timeout)
        try client.sendRequest("GET", target)
        return (client, try client.readUntilClose())
    }

    @Test("close-before-response reads the request and closes")
    func closeBeforeResponse() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let (_, bytes) = try raw(server, "/fault/close-before-response")
        #expect(bytes.isEmpty)
        #expect(server.requestCount(path: "/fault/close-before-response") == 1)
    }

    @Test("close-mid-head and close-mid-body close in the middle")
    func closeMidway() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let head = String(decoding: try raw(server, "/fault/close-mid-head").1, as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(!head.contains("\r\n\r\n"))
        let body = String(decoding: try raw(server, "/fault/close-mid-body").1, as: UTF8.self)
        #expect(body.contains("Content-Length: 100\r\n"))
        #expect(body.hasSuffix("\r\n\r\n" + String(repeating: "x", count: 40)))
    }

    @Test("stall never answers and holds the connection until the client leaves")
    func stall() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port, timeout: 0.3)
        try client.sendRequest("GET", "/fault/stall")
        #expect(throws: RawHTTPClient.Failure.self) { try client.readResponse() }
        #expect(!client.sawEOF)
        #expect(server.connectionsOpen == 1)
        withExtendedLifetime(client) {}
    }

    @Test("a stalled connection is released when the client closes it")
    func stallReleased() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        do {
            let client = try RawHTTPClient(port: server.port)
            try client.sendRequest("GET", "/fault/stall")
            #expect(eventuallyBlocking { server.requestCount(path: "/fault/stall") == 1 })
        }
        #expect(eventuallyBlocking { server.connectionsOpen == 0 })
    }

    @Test("stall-body and short-length send part of the body, then stall")
    func partialBodies() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        for (target, expected) in [("/fault/stall-body", String(repeating: "x", count: 10)), ("/fault/short-length", "abc")] {
            let client = try RawHTTPClient(port: server.port, timeout: 0.3)
            try client.sendRequest("GET", target)
            #expect(throws: RawHTTPClient.Failure.self) { try client.readResponse() }
            let text = String(decoding: client.pending, as: UTF8.self)
            // The head was consumed by readResponse; what is left is the partial body.
            #expect(text == expected, "\(target): \(text)")
            #expect(!client.sawEOF)
        }
    }

    @Test("long-length sends more than Content-Length and keeps the connection")
    func longLength() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("GET", "/fault/long-length")
        #expect(response.header("content-length") == "4")
        #expect(response.text == "abcd")
        // The extra bytes come first; then the connection still serves the next request.
        try client.sendRequest("GET", "/echo")
        try client.readUntil { String(decoding: $0, as: UTF8.self).contains("\"request\": 2}") }
        let rest = String(decoding: client.pending, as: UTF8.self)
        #expect(rest.hasPrefix("efghHTTP/1.1 200 OK\r\n"))
        #expect(server.requestCount(path: "/echo") == 1)
    }

    @Test("trickle sends one byte per interval with a correct length")
    func trickle() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let start = Date()
        let response = try client.exchange("GET", "/fault/trickle?bytes=5&interval=20")
        #expect(Date().timeIntervalSince(start) >= 0.08)
        #expect(response.header("content-length") == "5")
        #expect(response.body == [0, 1, 2, 3, 4])
        #expect(try client.exchange("GET", "/echo").status == 200)
    }

    @Test("garbage-status and bad-chunk send malformed responses")
    func malformed() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let garbage = String(decoding: try raw(server, "/fault/garbage-status").1, as: UTF8.self)
        #expect(garbage.hasPrefix("HTP/1.1 200 OK\r\n"))
        let badChunk = String(decoding: try raw(server, "/fault/bad-chunk").1, as: UTF8.self)
        #expect(badChunk.contains("Transfer-Encoding: chunked\r\n\r\nzz\r\n"))
    }

    @Test("chunked sends N chunks of M bytes")
    func chunked() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("GET", "/fault/chunked?chunks=10000&size=1")
        #expect(response.body.count == 10_000)
        #expect(Data(response.body) == TestServer.bytesPattern(count: 10_000))
        try client.sendRequest("GET", "/fault/chunked?chunks=2&size=3")
        let raw = try client.readResponse()
        #expect(raw.body == [0, 1, 2, 3, 4, 5])
    }

    @Test("keepalive-then-close answers with Connection: close and closes")
    func keepAliveThenClose() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.exchange("GET", "/echo").status == 200)
        let response = try client.exchange("GET", "/fault/keepalive-then-close")
        #expect(response.header("connection") == "close")
        #expect(response.text == "bye")
        #expect(client.waitForClose())
    }

    @Test("closeBeforeReading closes every connection at once")
    func closeBeforeReading() throws {
        let server = try TestServer(configuration: .init(closeBeforeReading: true))
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        #expect(client.waitForClose())
        #expect(server.connectionsAccepted == 1)
        #expect(server.totalRequests == 0)
        #expect(server.connectionsOpen == 0)
    }
}

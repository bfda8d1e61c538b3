import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@Suite("TestServer robustness", .ownThread)
struct RobustnessTests {
    @Test("malformed request lines and heads get 400 and the connection closes", arguments: [
        "GARBAGE\r\n\r\n",
        "GET /\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ])
    func badRequest(request: String) throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        try client.send(request)
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(response.header("connection") == "close")
        #expect(client.waitForClose())
        #expect(try RawHTTPClient(port: server.port).exchange("GET", "/echo").status == 200)
    }

    @Test("heads over the size or field limit get 431")
    func headTooLarge() throws {
        let server = try TestServer(configuration: .init(maxHeadBytes: 4096, maxHeaderFields: 10))
        defer { server.shutdown() }
        let big = try RawHTTPClient(port: server.port)
        #expect(try big.exchange("GET", "/echo", headers: [("X-Big", String(repeating: "a", count: 5000))]).status == 431)
        #expect(big.waitForClose())
        let many = try RawHTTPClient(port: server.port)
        let fields = (0..<20).map { ("X-Field-\($0)", "v") }
        #expect(try many.exchange("GET", "/echo", headers: fields).status == 431)
        #expect(try RawHTTPClient(port: server.port).exchange("GET", "/echo").status == 200)
    }

    @Test("bodies over maxBodyBytes get 413, with a length or chunked")
    func bodyTooLarge() throws {
        let server = try TestServer(configuration: .init(maxBodyBytes: 1000))
        defer { server.shutdown() }
        let declared = try RawHTTPClient(port: server.port)
        #expect(try declared.exchange("POST", "/echo", body: Array(repeating: 1, count: 1001)).status == 413)
        #expect(declared.waitForClose())

        let chunked = try RawHTTPClient(port: server.port)
        var wire = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        for _ in 0..<3 { wire += "190\r\n" + String(repeating: "b", count: 400) + "\r\n" }
        wire += "0\r\n\r\n"
        try chunked.send(wire)
        #expect(try chunked.readResponse().status == 413)

        let fits = try RawHTTPClient(port: server.port)
        #expect(try fits.exchange("POST", "/echo", body: Array(repeating: 1, count: 1000)).object()["bodyLength"] as? Int == 1000)
        #expect(server.requestCount(path: "/echo") == 1)
    }

    @Test("chunked request bodies, Expect: 100-continue, HTTP/1.0 and pipelining")
    func protocolFeatures() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n")
        #expect(try client.readResponse().object()["body"] as? String == "abcde")

        try client.send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        #expect(try client.readResponse().status == 100)
        try client.send("data")
        #expect(try client.readResponse().object()["body"] as? String == "data")

        // Three pipelined requests in one write are answered in order.
        try client.send("GET /echo/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /delay/30 HTTP/1.1\r\nHost: x\r\n\r\nGET /echo/3 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().object()["path"] as? String == "/echo/1")
        #expect(try client.readResponse().object()["delayed"] as? Int == 30)
        #expect(try client.readResponse().object()["request"] as? Int == 5)

        let old = try RawHTTPClient(port: server.port)
        try old.send("GET /echo HTTP/1.0\r\n\r\n")
        let response = try old.readResponse()
        #expect(response.status == 200)
        #expect(response.header("connection") == "close")
        #expect(old.waitForClose())

        let kept = try RawHTTPClient(port: server.port)
        try kept.send("GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try kept.readResponse().header("connection") == "keep-alive")
        try kept.send("GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try kept.readResponse().header("connection") == "close")
        #expect(kept.waitForClose())
    }

    @Test("slowloris: connections without a complete head are closed after headerTimeout")
    func slowloris() throws {
        let server = try TestServer(configuration: .init(headerTimeout: .milliseconds(200)))
        defer { server.shutdown() }
        let silent = try RawHTTPClient(port: server.port, timeout: 5)
        let partial = try RawHTTPClient(port: server.port, timeout: 5)
        try partial.send("GET /echo HTTP/1.1\r\nHost: x\r\n")
        let start = Date()
        #expect(silent.waitForClose())
        let leftover = try partial.readUntilClose()
        #expect(String(decoding: leftover, as: UTF8.self).hasPrefix("HTTP/1.1 408"))
        #expect(Date().timeIntervalSince(start) < 4)
        #expect(eventuallyBlocking { server.connectionsOpen == 0 })
        #expect(server.totalRequests == 0)
    }

    @Test("idle keep-alive connections are closed after idleTimeout")
    func idle() throws {
        let server = try TestServer(configuration: .init(idleTimeout: .milliseconds(200)))
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port, timeout: 5)
        #expect(try client.exchange("GET", "/echo").status == 200)
        let after = try client.readUntilClose()
        #expect(after.isEmpty)
        #expect(eventuallyBlocking { server.connectionsOpen == 0 })
    }

    @Test("random bytes never crash the server; other connections keep being served")
    func fuzz() throws {
        // Every way a connection can be left waiting ends well within the clients' 5 s wait: a
        // partial head, a body left half sent (seed 0x7, see halfSentBodyTimesOut) and a complete
        // request on an idle keep-alive connection (seed 0xc).
        let server = try TestServer(configuration: .init(headerTimeout: .milliseconds(200), idleTimeout: .seconds(1),
                                                        bodyTimeout: .milliseconds(500)))
        defer { server.shutdown() }
        var generator = SeededRandom.forTest()
        var clients: [RawHTTPClient] = []
        for round in 0..<100 {
            let client = try RawHTTPClient(port: server.port, timeout: 5)
            var bytes = (0..<Int.random(in: 1...3000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round % 3 == 0 { bytes = Array("GET /".utf8) + bytes }
            if round % 5 == 0 { bytes = Array("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + bytes }
            if round % 7 == 0 { bytes = Array("GET /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n".utf8) + bytes }
            try? client.send(bytes)
            clients.append(client)
            // A new connection each time: one kept from round 0 would meet the 1 s idle timeout
            // on a loaded machine, where ten rounds can take longer than that.
            if round % 10 == 0 {
                #expect(try RawHTTPClient(port: server.port).exchange("GET", "/echo").status == 200, "round \(round), \(generator.replayHint)")
            }
        }
        // Whatever each connection got, the server answers or closes it; none stays open.
        let open = clients.indices.filter { !clients[$0].waitForClose() }
        #expect(open.isEmpty, "rounds \(open) still open, \(generator.replayHint)")
        #expect(try RawHTTPClient(port: server.port).exchange("GET", "/echo").status == 200, "\(generator.replayHint)")
        // The well-behaved connections, idle since, end by the idle timeout like every other one.
        #expect(eventuallyBlocking { server.connectionsOpen == 0 }, "\(server.connectionsOpen) open, \(generator.replayHint)")
    }

    /// The input that made "random bytes never crash the server" fail 1 run in 12 (issue 22):
    /// seed 0x7, round 14, a head announcing 10 body bytes followed by only these 6. The server
    /// bounded each pause by the 60 s idle timeout, so the connection outlived the test's wait.
    static let halfSentBody: [UInt8] = [0x17, 0x23, 0x69, 0xAF, 0xB4, 0x06]

    @Test("a body the client leaves half sent gets 408 after bodyTimeout instead of holding the connection (fuzz seed 0x7)")
    func halfSentBodyTimesOut() throws {
        let server = try TestServer(configuration: .init(headerTimeout: .milliseconds(200), bodyTimeout: .milliseconds(500)))
        defer { server.shutdown() }
        // The exact fuzz input has no Host: it now gets 400 at once (M2)...
        let exact = try RawHTTPClient(port: server.port, timeout: 5)
        try exact.send(Array("GET /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\n".utf8) + Self.halfSentBody)
        #expect(try exact.readResponse().status == 400)
        #expect(exact.waitForClose())
        // ...and with a Host line it reaches the body, which never completes.
        let withHost = try RawHTTPClient(port: server.port, timeout: 5)
        let started = Date()
        try withHost.send(Array("GET /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n".utf8) + Self.halfSentBody)
        let response = try withHost.readResponse()
        #expect(response.status == 408)
        #expect(withHost.waitForClose())
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(server.totalRequests == 0)
        #expect(eventuallyBlocking { server.connectionsOpen == 0 })
    }
}

import CourierTestSupport
import CourierTestServer
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The catalogue's server-side cases (reliability-cases.md, "Server side") for
/// `CourierTestServer`, over real sockets. Every test ends by checking that the server
/// still serves a normal request and that it holds no socket but its listener.
@Suite("Server cases (CourierTestServer)", .ownThread)
struct ServerCaseTests {
    @Test("S1 malformed request lines and heads get 400, and the server keeps serving")
    func malformedHeads() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let sent = try MalformedRequests.expectEachRefused(port: server.port, getPath: "/echo", postPath: "/echo")
        #expect(server.totalRequests == sent, "only the keeper's requests reached a handler")
        try expectServingWithoutLeaks(server)
    }

    @Test("S1 an oversized head gets 431")
    func oversizedHead() throws {
        let server = try TestServer(configuration: .init(maxHeadBytes: 4096, maxHeaderFields: 10))
        defer { server.shutdown() }
        let padding = String(repeating: "a", count: 5000)
        let cases: [(String, String)] = [
            ("one large field", "GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: \(padding)\r\n\r\n"),
            ("a long request line", "GET /\(padding) HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("too many fields", "GET /echo HTTP/1.1\r\nHost: x\r\n" + (0..<20).map { "X-\($0): v\r\n" }.joined() + "\r\n"),
            // The head never ends: the server must not wait for its end to refuse it.
            ("an endless head", "GET /echo HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Pad: 0123456789\r\n", count: 400)),
        ]
        for (what, request) in cases {
            let client = try RawHTTPClient(port: server.port, timeout: 5)
            try? client.send(request)  // the server may refuse before everything is sent
            let response = try client.readResponse()
            #expect(response.status == 431, "\(what)")
            #expect(response.header("connection") == "close", "\(what)")
            #expect(client.waitForClose(), "\(what): the connection stays open")
        }
        #expect(server.totalRequests == 0)
        // Right at the limits is still fine.
        let fields = (0..<9).map { ("X-\($0)", "v") }
        #expect(try RawHTTPClient(port: server.port).exchange("GET", "/echo", headers: fields).status == 200)
        try expectServingWithoutLeaks(server)
    }

    @Test("S1 an oversized body gets 413")
    func oversizedBody() throws {
        let server = try TestServer(configuration: .init(maxBodyBytes: 1000))
        defer { server.shutdown() }
        // Declared too large: refused before the body is sent, and without a 100 Continue.
        let declared = try RawHTTPClient(port: server.port, timeout: 5)
        try declared.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\nExpect: 100-continue\r\n\r\n")
        let refused = try declared.readResponse()
        #expect(refused.status == 413)
        #expect(refused.header("connection") == "close")
        #expect(declared.waitForClose())
        // Chunked: refused once the chunks pass the limit.
        let chunked = try RawHTTPClient(port: server.port, timeout: 5)
        var wire = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        for _ in 0..<3 { wire += "190\r\n" + String(repeating: "b", count: 400) + "\r\n" }
        try? chunked.send(wire + "0\r\n\r\n")
        #expect(try chunked.readResponse().status == 413)
        #expect(chunked.waitForClose())
        // A huge declared length is refused at once, not read.
        let huge = try RawHTTPClient(port: server.port, timeout: 5)
        try huge.send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n")
        #expect(try huge.readResponse().status == 413)
        #expect(huge.waitForClose())
        #expect(server.requestCount(path: "/echo") == 0)
        // Exactly at the limit is accepted.
        do {
            let fits = try RawHTTPClient(port: server.port)
            let echoed = try fits.exchange("POST", "/echo", body: Array(repeating: 0x61, count: 1000))
            #expect(try echoed.object()["bodyLength"] as? Int == 1000)
        }
        try expectServingWithoutLeaks(server)
    }

    @Test("S2 a slowloris client is timed out")
    func slowloris() throws {
        let server = try TestServer(configuration: .init(headerTimeout: .milliseconds(300), idleTimeout: .milliseconds(300)))
        defer { server.shutdown() }
        let started = Date()
        let silent = try RawHTTPClient(port: server.port, timeout: 10)
        let partial = try RawHTTPClient(port: server.port, timeout: 10)
        try partial.send("GET /echo HTTP/1.1\r\nHost: x\r\n")
        let trickler = try RawHTTPClient(port: server.port, timeout: 10)
        // A head that would take 20 s at one byte every 20 ms; the server must cut it off.
        let head = Array("GET /echo HTTP/1.1\r\nHost: x\r\nX-Slow: \(String(repeating: "s", count: 1000))\r\n\r\n".utf8)
        let sent = trickle(head, to: trickler, every: 20_000)
        #expect(sent < head.count, "the whole head went through a byte at a time")
        // Served meanwhile.
        #expect(try RawHTTPClient(port: server.port).exchange("GET", "/echo").status == 200)
        #expect(silent.waitForClose(), "a connection that sent nothing stays open")
        #expect(String(decoding: try partial.readUntilClose(), as: UTF8.self).hasPrefix("HTTP/1.1 408"))
        #expect(String(decoding: try trickler.readUntilClose(), as: UTF8.self).hasPrefix("HTTP/1.1 408"))
        #expect(Date().timeIntervalSince(started) < 10, "hang guard")
        #expect(server.totalRequests == 1)
        try expectServingWithoutLeaks(server)
    }

    @Test("S3 random bytes never crash the server, and it keeps serving")
    func randomBytes() throws {
        let seed = SeededRandom.seed(default: 0x5EED_0001_C0DE)
        let server = try TestServer(configuration: .init(headerTimeout: .seconds(2), maxBodyBytes: 4096,
                                                        maxHeadBytes: 2048, maxHeaderFields: 20))
        defer { server.shutdown() }
        var random = SeededRandom(seed: seed)
        let keeper = try RawHTTPClient(port: server.port)
        for round in 0..<300 {
            let bytes = Self.randomInput(round: round, random: &random)
            let client = try RawHTTPClient(port: server.port, timeout: 5)
            try? client.send(bytes)
            client.shutdownWrite()
            let answer: [UInt8]
            do {
                answer = try client.readUntilClose()
            } catch {
                // A reset after an error answer is fine; a timeout is not.
                #expect(!"\(error)".contains("timed out"), "seed \(seed) round \(round): no close: \(error)")
                continue
            }
            if !answer.isEmpty {
                let text = String(decoding: answer.prefix(12), as: UTF8.self)
                let code = Int(text.dropFirst(9).prefix(3)) ?? 0
                #expect(text.hasPrefix("HTTP/1.1 ") && (100...999).contains(code),
                        "seed \(seed) round \(round): answered \(text) to \(bytes.prefix(80))")
            }
            if round % 50 == 49 {
                #expect(try keeper.exchange("GET", "/echo").status == 200, "seed \(seed) round \(round)")
            }
        }
        #expect(try keeper.exchange("GET", "/echo").status == 200, "seed \(seed)")
        #expect(eventuallyBlocking { server.connectionsOpen == 1 }, "seed \(seed): only the keeper stays")
        try withExtendedLifetime(keeper) { try expectServingWithoutLeaks(server, keeping: 1) }
    }

    /// Fragments for the structured kinds of random input.
    static let fragments = ["GET ", "POST ", "HEAD ", "PUT ", "/echo", "/", "?", "status=", " HTTP/1.1", " HTTP/1.0",
                            "\r\n", "\n", "\r", ":", ": ", "Host", "Content-Length", "Transfer-Encoding", "chunked",
                            "Connection", "close", "keep-alive", "Expect", "100-continue", "0", "5", "ff", ";", " ",
                            "\t", "\u{00}", "\u{7F}", "é"]

    /// One fuzz input: pure random bytes, random bytes after a valid prefix, or random
    /// fragments of HTTP.
    static func randomInput(round: Int, random: inout SeededRandom) -> [UInt8] {
        func noise(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
        let length = Int.random(in: 1...600, using: &random)
        switch round % 6 {
        case 0: return noise(length)
        case 1: return Array("GET /".utf8) + noise(length)
        case 2: return Array("GET /echo HTTP/1.1\r\nHost: x\r\n".utf8) + noise(length)
        case 3: return Array("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + noise(length)
        case 4: return Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(Int.random(in: 0...700, using: &random))\r\n\r\n".utf8) + noise(length)
        default:
            var text = ""
            for _ in 0..<Int.random(in: 1...60, using: &random) {
                text += fragments[Int.random(in: 0..<fragments.count, using: &random)]
            }
            return Array(text.utf8)
        }
    }

    /// Sends `bytes` one at a time, `interval` microseconds apart, until all are sent or the
    /// server answers or closes. Bounded by `bytes.count`.
    /// - Returns: How many bytes were sent.
    func trickle(_ bytes: [UInt8], to client: RawHTTPClient, every interval: UInt32) -> Int {
        for (index, byte) in bytes.enumerated() {
            if client.hasAnswer() { return index }  // an answer, or the end of the stream
            if (try? client.send([byte])) == nil { return index }
            usleep(interval)
        }
        return bytes.count
    }

    /// A normal request on a new connection succeeds, and once the clients are gone the
    /// server holds only its listener (and `keeping` connections still open).
    func expectServingWithoutLeaks(_ server: TestServer, keeping: Int = 0) throws {
        do {
            let client = try RawHTTPClient(port: server.port)
            #expect(try client.exchange("GET", "/echo", headers: [("Connection", "close")]).status == 200)
            #expect(client.waitForClose())
        }
        #expect(eventuallyBlocking { server.connectionsOpen == keeping }, "\(server.connectionsOpen) connections open")
        #expect(eventuallyBlocking { ProcessSockets.bound(toPort: server.port) == 1 + keeping },
                "\(ProcessSockets.bound(toPort: server.port)) sockets on the server's port")
    }
}

import CourierTestSupport
import Foundation
import HTTPServerCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Security review findings M3 and M4: what one peer can make the server core hold is bounded.
@Suite("HTTPServerCore limits", .ownThread)
struct ServerLimitTests {
    /// A server that answers every request with an empty 404.
    func notFoundServer(_ configuration: HTTPServer.Configuration = .init()) throws -> HTTPServer {
        try HTTPServer(configuration: configuration) { _, responder in responder.respond(status: 404) }
    }

    @Test("M3 10,000 unique paths leave the per-path counts at or below the cap")
    func perPathCountsBounded() throws {
        let server = try notFoundServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port, timeout: 10)
        let total = 10_000
        let batch = 100
        for start in stride(from: 0, to: total, by: batch) {
            let wire = (start..<(start + batch)).map { "GET /unique/\($0)?q=1 HTTP/1.1\r\nHost: x\r\n\r\n" }.joined()
            try client.send(wire)
            for index in start..<(start + batch) {
                #expect(try client.readResponse().status == 404, "request \(index)")
            }
        }
        let longPath = "/" + String(repeating: "p", count: HTTPServer.maxCountedPathBytes)
        #expect(try client.exchange("GET", longPath).status == 404)

        #expect(server.totalRequests == total + 1)
        #expect(server.countedPaths <= HTTPServer.maxCountedPaths, "\(server.countedPaths) keys")
        let own = HTTPServer.maxCountedPaths - 1
        #expect(server.requestCount(path: "/unique/0") == 1)
        #expect(server.requestCount(path: "/unique/\(own - 1)") == 1)
        #expect(server.requestCount(path: "/unique/\(own)") == 0, "counted under \(HTTPServer.otherPathsKey)")
        #expect(server.requestCount(path: longPath) == 0)
        #expect(server.requestCount(path: HTTPServer.otherPathsKey) == total + 1 - own)
        // A path that already has a count keeps counting.
        #expect(try client.exchange("GET", "/unique/0").status == 404)
        #expect(server.requestCount(path: "/unique/0") == 2)
    }

    @Test("M4 connections over maxConnections are closed at once, and a freed place is served again")
    func connectionCap() throws {
        let server = try notFoundServer(.init(maxConnections: 2))
        defer { server.shutdown() }
        let first = try RawHTTPClient(port: server.port, timeout: 5)
        let second = try RawHTTPClient(port: server.port, timeout: 5)
        #expect(try first.exchange("GET", "/first").status == 404)
        #expect(try second.exchange("GET", "/second").status == 404)

        let refused = try RawHTTPClient(port: server.port, timeout: 5)
        #expect(refused.waitForClose(), "the connection over the cap stays open")
        #expect(refused.pending.isEmpty, "nothing is answered over the cap")
        #expect(server.connectionsRefused == 1)
        #expect(server.connectionsOpen == 2)
        #expect(try first.exchange("GET", "/first").status == 404, "admitted connections keep being served")

        shutdown(second.fd, Int32(SHUT_RDWR))
        #expect(eventuallyBlocking { server.connectionsOpen == 1 })
        let later = try RawHTTPClient(port: server.port, timeout: 5)
        #expect(try later.exchange("GET", "/later").status == 404)
        #expect(server.connectionsRefused == 1)
        #expect(server.totalRequests == 4)
    }

    @Test("M4 a request body that does not arrive whole within bodyTimeout gets 408 and the connection closes")
    func bodyDeadline() throws {
        // Pauses of 20 ms are far below the idle timeout: only the overall body deadline can end this.
        let server = try notFoundServer(.init(idleTimeout: .seconds(10), bodyTimeout: .milliseconds(300)))
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port, timeout: 5)
        let started = Date()
        try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
        var sent = 0
        while sent < 1000, Date().timeIntervalSince(started) < 5 {
            var probe: UInt8 = 0
            if recv(client.fd, &probe, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0 { break }  // answered or closed
            if (try? client.send([0x61])) == nil { break }
            sent += 1
            usleep(20_000)
        }
        let response = try client.readResponse()
        let elapsed = Date().timeIntervalSince(started)
        #expect(response.status == 408)
        #expect(response.header("connection") == "close")
        #expect(client.waitForClose())
        #expect(sent < 1000, "the whole body trickled through")
        #expect(elapsed >= 0.29 && elapsed < 2, "answered after \(elapsed) s")
        #expect(server.totalRequests == 0)
        #expect(eventuallyBlocking { server.connectionsOpen == 0 })
    }

    @Test("M4 the server core's defaults bound connections (below 80 % of the open-file limit) and body time")
    func defaults() {
        let configuration = HTTPServer.Configuration()
        #expect(configuration.maxConnections == HTTPServer.Configuration.defaultMaxConnections)
        #expect(HTTPServer.Configuration.maxConnections(forOpenFileLimit: 1_024) == 819, "80 % of the usual soft limit")
        #expect(HTTPServer.Configuration.maxConnections(forOpenFileLimit: 20_000) == 10_000)
        #expect(HTTPServer.Configuration.maxConnections(forOpenFileLimit: nil) == 10_000, "RLIM_INFINITY")
        #expect(HTTPServer.Configuration.maxConnections(forOpenFileLimit: .max) == 10_000)
        #expect(HTTPServer.Configuration.maxConnections(forOpenFileLimit: 1) == 1)
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let expected = limit.rlim_cur >= 12_500 ? 10_000 : Int(limit.rlim_cur) * 4 / 5
        #expect(configuration.maxConnections == expected, "soft limit \(limit.rlim_cur)")
        #expect(configuration.bodyTimeout == .seconds(30))
    }
}

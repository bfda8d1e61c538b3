import Foundation
import Testing
import CourierTestServer
import CourierTestSupport

@Suite("TestServer built-in routes", .ownThread)
struct BuiltinRouteTests {
    @Test("/echo reflects method, path, query, headers in order, body and numbering")
    func echo() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let first = try client.exchange("POST", "/echo/x?a=1&b=two", headers: [("X-First", "1"), ("x-second", "zwei")], body: Array("héllo".utf8))
        #expect(first.status == 200)
        #expect(first.header("content-type") == "application/json")
        #expect(first.header("date") != nil)
        let json = try first.object()
        #expect(json["method"] as? String == "POST")
        #expect(json["path"] as? String == "/echo/x")
        #expect(json["query"] as? String == "a=1&b=two")
        #expect(json["body"] as? String == "héllo")
        #expect(json["bodyLength"] as? Int == 6)
        #expect(json["connection"] as? Int == 1)
        #expect(json["request"] as? Int == 1)
        let headers = try #require(json["headers"] as? [[String]])
        #expect(headers.map { $0.first ?? "" } == ["Host", "X-First", "x-second", "Content-Length"])
        #expect(headers[2] == ["x-second", "zwei"])

        // Same connection: request number 2; a second connection gets number 2.
        let second = try client.exchange("GET", "/echo")
        #expect(try second.object()["request"] as? Int == 2)
        #expect(try second.object()["query"] as? String == "")
        let other = try RawHTTPClient(port: server.port)
        #expect(try other.exchange("GET", "/echo").object()["connection"] as? Int == 2)
        #expect(server.requestCount(path: "/echo/x") == 1)
        #expect(server.requestCount(path: "/echo") == 2)
        #expect(server.totalRequests == 3)
        #expect(server.connectionsAccepted == 2)
    }

    @Test("/echo?status=N answers with that status and the same body")
    func echoStatus() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("PUT", "/echo?status=201", body: Array("x".utf8))
        #expect(response.status == 201)
        #expect(try response.object()["method"] as? String == "PUT")
        let noBody = try client.exchange("GET", "/echo?status=204")
        #expect(noBody.status == 204)
        #expect(noBody.body.isEmpty)
        #expect(try client.exchange("GET", "/echo").status == 200)
    }

    @Test("/status/<code> answers that status; no body for 204, 304 and 1xx")
    func status() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let teapot = try client.exchange("DELETE", "/status/418")
        #expect(teapot.status == 418)
        #expect(try teapot.object()["status"] as? Int == 418)
        for code in [204, 304] {
            let response = try client.exchange("GET", "/status/\(code)")
            #expect(response.status == code)
            #expect(response.body.isEmpty)
            #expect(response.header("content-length") == nil)
        }
        #expect(try client.exchange("GET", "/status/abc").status == 400)
        #expect(try client.exchange("GET", "/status/1000").status == 400)
        // A 1xx comes alone: nothing follows it on the connection.
        let interim = try client.exchange("GET", "/status/100")
        #expect(interim.status == 100)
        client.setTimeout(0.3)
        #expect(throws: RawHTTPClient.Failure.self) { try client.readResponse() }
    }

    @Test("/delay/<ms> answers after the delay")
    func delay() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let start = Date()
        let response = try client.exchange("GET", "/delay/120")
        #expect(Date().timeIntervalSince(start) >= 0.1)
        #expect(response.status == 200)
        #expect(try response.object()["delayed"] as? Int == 120)
        #expect(try client.exchange("GET", "/delay/-1").status == 400)
    }

    @Test("/bytes/<n> sends the byte pattern, with Content-Length or chunked")
    func bytes() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let plain = try client.exchange("GET", "/bytes/100000")
        #expect(plain.header("content-length") == "100000")
        #expect(Data(plain.body) == TestServer.bytesPattern(count: 100_000))
        #expect(plain.body[300] == 44)
        let chunked = try client.exchange("GET", "/bytes/1000?chunked=1&chunk=300")
        #expect(chunked.header("transfer-encoding") == "chunked")
        #expect(chunked.header("content-length") == nil)
        #expect(Data(chunked.body) == TestServer.bytesPattern(count: 1000))
        let empty = try client.exchange("GET", "/bytes/0")
        #expect(empty.body.isEmpty)
        #expect(try client.exchange("GET", "/bytes/x").status == 400)
        // HEAD gets the length but no body, and the connection stays usable.
        let head = try client.exchange("HEAD", "/bytes/10")
        #expect(head.header("content-length") == "10")
        #expect(try client.exchange("GET", "/bytes/3").body == [0, 1, 2])
    }

    @Test("unknown paths get 404")
    func notFound() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let response = try RawHTTPClient(port: server.port).exchange("GET", "/nope?x")
        #expect(response.status == 404)
        #expect(try response.object()["path"] as? String == "/nope")
        #expect(try RawHTTPClient(port: server.port).exchange("GET", "/fault/nope").status == 404)
    }
}

import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `/ranged/<n>`: a resource with validators and byte ranges, and a cut, for download tests.
@Suite("TestServer /ranged route", .ownThread)
struct RangedRouteTests {
    @Test("the whole body with ETag, Last-Modified and Accept-Ranges; a range answers 206 with Content-Range")
    func rangesAndValidators() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let body = TestServer.rangedBody(count: 1000)
        #expect(Set(body).count > 200, "the body does not repeat a short pattern")
        let whole = try client.exchange("GET", "/ranged/1000")
        #expect(whole.status == 200)
        #expect(whole.body == Array(body))
        #expect(whole.header("etag") == "\"v1\"")
        #expect(whole.header("last-modified") == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(whole.header("accept-ranges") == "bytes")

        let rest = try client.exchange("GET", "/ranged/1000", headers: [("Range", "bytes=600-"), ("If-Range", "\"v1\"")])
        #expect(rest.status == 206)
        #expect(rest.header("content-range") == "bytes 600-999/1000")
        #expect(rest.body == Array(body[600...]))

        let middle = try client.exchange("GET", "/ranged/1000", headers: [("Range", "bytes=10-19"), ("If-Range", "Sun, 06 Nov 1994 08:49:37 GMT")])
        #expect(middle.status == 206)
        #expect(middle.body == Array(body[10...19]))
    }

    @Test("a stale If-Range gets the whole body (200); a range past the end gets 416; validators=none sends none")
    func staleAndUnsatisfiable() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let stale = try client.exchange("GET", "/ranged/1000?etag=v2", headers: [("Range", "bytes=600-"), ("If-Range", "\"v1\"")])
        #expect(stale.status == 200)
        #expect(stale.body.count == 1000)
        #expect(stale.header("etag") == "\"v2\"")
        let past = try client.exchange("GET", "/ranged/1000", headers: [("Range", "bytes=1000-")])
        #expect(past.status == 416)
        #expect(past.header("content-range") == "bytes */1000")
        let bare = try client.exchange("GET", "/ranged/10?validators=none")
        #expect(bare.header("etag") == nil && bare.header("last-modified") == nil)
    }

    @Test("cut=50 announces the whole length, sends half of it, and closes")
    func cut() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        try client.sendRequest("GET", "/ranged/1000?cut=50")
        let raw = try client.readUntilClose()
        let text = String(decoding: raw, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(text.contains("Content-Length: 1000\r\n"))
        let separator = Array("\r\n\r\n".utf8)
        let headEnd = try #require((0...(raw.count - 4)).first { Array(raw[$0..<($0 + 4)]) == separator })
        #expect(raw.count - headEnd - 4 == 500)
    }
}

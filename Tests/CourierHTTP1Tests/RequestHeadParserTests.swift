import CourierHTTP1
import Testing

@Suite("RequestHeadParser")
struct RequestHeadParserTests {
    static let sample = "POST /items?id=1&x=%20 HTTP/1.1\r\nHost: example.com\r\nContent-Length: 4\r\nConnection: keep-alive\r\n\r\nbody"

    @Test("parses a request line and fields and reports the body offset")
    func parsesRequest() throws {
        let bytes = Wire.bytes(Self.sample)
        let (head, bodyStart) = try #require(try Wire.parseRequest(bytes))
        #expect(head.method == "POST")
        #expect(head.target == "/items?id=1&x=%20")
        #expect(head.version == .http1_1)
        #expect(head.value(for: "host") == "example.com")
        #expect(head.keepAlive)
        #expect(Array(bytes[bodyStart...]) == Wire.bytes("body"))
    }

    @Test("byte-at-a-time feeding equals whole feeding")
    func byteAtATime() throws {
        let bytes = Wire.bytes(Self.sample)
        let whole = try #require(try Wire.parseRequest(bytes))
        for step in [1, 2, 5, 13] {
            let pieces = try #require(try Wire.parseRequest(bytes, step: step))
            #expect(pieces.0 == whole.0)
            #expect(pieces.1 == whole.1)
        }
    }

    @Test("other target forms and methods", arguments: [
        ("CONNECT example.com:443 HTTP/1.1", "CONNECT", "example.com:443"),
        ("OPTIONS * HTTP/1.1", "OPTIONS", "*"),
        ("GET http://example.com/a HTTP/1.0", "GET", "http://example.com/a"),
        ("PROPFIND /dav HTTP/1.1", "PROPFIND", "/dav"),
    ])
    func targetForms(line: String, method: String, target: String) throws {
        let head = try #require(try Wire.parseRequest(Wire.bytes(line + "\r\nHost: a\r\n\r\n"))).0
        #expect(head.method == method)
        #expect(head.target == target)
    }

    @Test("HTTP/1.0 requests close by default")
    func http10() throws {
        let plain = try #require(try Wire.parseRequest(Wire.bytes("GET / HTTP/1.0\r\n\r\n"))).0
        #expect(plain.version == .http1_0)
        #expect(!plain.keepAlive)
        let kept = try #require(try Wire.parseRequest(Wire.bytes("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"))).0
        #expect(kept.keepAlive)
    }

    @Test("malformed request lines", arguments: [
        "GET  / HTTP/1.1", "GET /  HTTP/1.1", " GET / HTTP/1.1", "GET / HTTP/1.1 ", "GET /",
        "GET / HTTP/2.0", "GET / http/1.1", "GET / HTTP/1.10", "GET / HTTP/1", "G(T / HTTP/1.1",
        "GET /a\u{1}b HTTP/1.1", "GET /a\u{7F} HTTP/1.1", "GET\t/ HTTP/1.1", "GET /\tHTTP/1.1",
        "/ HTTP/1.1", "GET HTTP/1.1",
    ])
    func malformedRequestLine(line: String) {
        #expect(throws: HTTP1Error.invalidRequestLine) {
            try Wire.parseRequest(Wire.bytes(line + "\r\nHost: a\r\n\r\n"))
        }
    }

    @Test("malformed field lines in a request")
    func malformedFields() {
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.parseRequest(Wire.bytes("GET / HTTP/1.1\r\nHost : a\r\n\r\n"))
        }
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.parseRequest(Wire.bytes("GET / HTTP/1.1\r\nHost\r\n\r\n"))
        }
        #expect(throws: HTTP1Error.obsoleteLineFolding) {
            try Wire.parseRequest(Wire.bytes("GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n"))
        }
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.parseRequest(Wire.bytes("GET / HTTP/1.1\r\n\tHost: a\r\n\r\n"))
        }
    }

    @Test("empty lines before the request line are skipped (RFC 9112 §2.2)")
    func leadingEmptyLines() throws {
        let bytes = Wire.bytes("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
        let head = try #require(try Wire.parseRequest(bytes, step: 1))
        #expect(head.0.method == "GET")
        #expect(head.1 == bytes.count)
    }

    @Test("oversized request heads and too many fields")
    func limits() {
        let big = "GET /" + String(repeating: "a", count: 70_000) + " HTTP/1.1\r\n\r\n"
        #expect(throws: HTTP1Error.headTooLarge) { try Wire.parseRequest(Wire.bytes(big), step: 4096) }
        var many = "GET / HTTP/1.1\r\n"
        for i in 0..<11 { many += "F\(i): x\r\n" }
        #expect(throws: HTTP1Error.tooManyFields) {
            try Wire.parseRequest(Wire.bytes(many + "\r\n"), limits: HTTP1Limits(maxFieldCount: 10))
        }
    }

    @Test("pipelined requests parse one after another")
    func pipelined() throws {
        let bytes = Wire.bytes("GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n")
        var parser = RequestHeadParser()
        var targets: [String] = []
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, let result = try parser.parse(UnsafeRawBufferPointer(rebasing: buffer[offset...])) {
                targets.append(result.head.target)
                offset += result.consumed
            }
        }
        #expect(targets == ["/a", "/b"])
    }

    @Test("M2 a request line or field line ending in a bare LF is refused", arguments: [
        "GET / HTTP/1.1\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\n\n",
        "\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    ])
    func bareLineFeed(text: String) {
        for step in [1, Int.max] {
            #expect(throws: HTTP1Error.invalidRequestLine, "step \(step)") {
                try Wire.parseRequest(Wire.bytes(text), step: step)
            }
        }
    }

    @Test("M2 an HTTP/1.1 request needs exactly one Host field; HTTP/1.0 may have none", arguments: [
        ("GET / HTTP/1.1\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nX-Host: a\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHOST: a\r\n\r\n", true),
        ("GET / HTTP/1.0\r\n\r\n", true),
        ("GET / HTTP/1.0\r\nHost: a\r\n\r\n", true),
    ])
    func hostField(text: String, accepted: Bool) throws {
        if accepted {
            #expect(try Wire.parseRequest(Wire.bytes(text)) != nil)
        } else {
            #expect(throws: HTTP1Error.invalidHeaderField) { try Wire.parseRequest(Wire.bytes(text)) }
        }
    }
}

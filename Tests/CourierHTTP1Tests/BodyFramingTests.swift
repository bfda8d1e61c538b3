import CourierHTTP1
import Testing

@Suite("BodyFraming")
struct BodyFramingTests {
    static func response(_ status: Int, _ fields: [(String, String)], version: HTTPVersion = .http1_1) -> HTTPResponseHead {
        HTTPResponseHead(version: version, status: status, fields: fields.map { HTTPField(name: $0.0, value: $0.1) })
    }

    static func request(_ fields: [(String, String)], version: HTTPVersion = .http1_1) -> HTTPRequestHead {
        HTTPRequestHead(method: "POST", target: "/", version: version, fields: fields.map { HTTPField(name: $0.0, value: $0.1) })
    }

    @Test("D1 HEAD with a Content-Length has no body")
    func headRequest() throws {
        #expect(try BodyFraming.forResponse(Self.response(200, [("Content-Length", "1234")]), requestMethod: "HEAD") == BodyFraming.none)
        #expect(try BodyFraming.forResponse(Self.response(200, [("Transfer-Encoding", "chunked")]), requestMethod: "HEAD") == BodyFraming.none)
    }

    @Test("D2 204 and 304 have no body, even when a length is declared")
    func noContent() throws {
        #expect(try BodyFraming.forResponse(Self.response(204, []), requestMethod: "GET") == BodyFraming.none)
        #expect(try BodyFraming.forResponse(Self.response(204, [("Content-Length", "10")]), requestMethod: "DELETE") == BodyFraming.none)
        #expect(try BodyFraming.forResponse(Self.response(304, [("Content-Length", "99")]), requestMethod: "GET") == BodyFraming.none)
    }

    @Test("D3 1xx responses have no body")
    func informational() throws {
        for status in [100, 101, 102, 103, 199] {
            #expect(try BodyFraming.forResponse(Self.response(status, [("Content-Length", "5")]), requestMethod: "GET") == BodyFraming.none)
        }
    }

    @Test("2xx to CONNECT has no body; other statuses do")
    func connect() throws {
        #expect(try BodyFraming.forResponse(Self.response(200, []), requestMethod: "CONNECT") == BodyFraming.none)
        #expect(try BodyFraming.forResponse(Self.response(407, [("Content-Length", "3")]), requestMethod: "CONNECT") == .contentLength(3))
    }

    @Test("responseCanHaveBody: false for HEAD, 1xx, 204, 304 and a 2xx to CONNECT, true otherwise")
    func canHaveBody() {
        #expect(!BodyFraming.responseCanHaveBody(status: 200, requestMethod: "HEAD"))
        for status in [100, 103, 204, 304] { #expect(!BodyFraming.responseCanHaveBody(status: status, requestMethod: "GET")) }
        #expect(!BodyFraming.responseCanHaveBody(status: 200, requestMethod: "CONNECT"))
        #expect(BodyFraming.responseCanHaveBody(status: 407, requestMethod: "CONNECT"))
        for status in [200, 206, 301, 404, 500] { #expect(BodyFraming.responseCanHaveBody(status: status, requestMethod: "GET")) }
        #expect(BodyFraming.responseCanHaveBody(status: 200, requestMethod: "POST"))
    }

    @Test("D6 no length and no chunking: close-delimited; D5 an empty length")
    func closeDelimited() throws {
        #expect(try BodyFraming.forResponse(Self.response(200, []), requestMethod: "GET") == .untilClose)
        #expect(try BodyFraming.forResponse(Self.response(200, [], version: .http1_0), requestMethod: "GET") == .untilClose)
        #expect(try BodyFraming.forResponse(Self.response(200, [("Content-Length", "0")]), requestMethod: "GET") == .contentLength(0))
    }

    @Test("C4 two equal Content-Length values are accepted")
    func equalLengths() throws {
        #expect(try BodyFraming.forResponse(Self.response(200, [("Content-Length", "42"), ("content-length", "42")]), requestMethod: "GET") == .contentLength(42))
        #expect(try BodyFraming.forResponse(Self.response(200, [("Content-Length", "42, 42")]), requestMethod: "GET") == .contentLength(42))
        #expect(try BodyFraming.forRequest(Self.request([("Content-Length", "7,7")])) == .contentLength(7))
    }

    @Test("C4 two different Content-Length values are an error")
    func conflictingLengths() {
        #expect(throws: HTTP1Error.conflictingContentLength) {
            try BodyFraming.forResponse(Self.response(200, [("Content-Length", "42"), ("Content-Length", "43")]), requestMethod: "GET")
        }
        #expect(throws: HTTP1Error.conflictingContentLength) {
            try BodyFraming.forResponse(Self.response(200, [("Content-Length", "1, 2")]), requestMethod: "GET")
        }
        #expect(throws: HTTP1Error.conflictingContentLength) {
            try BodyFraming.forRequest(Self.request([("Content-Length", "5"), ("Content-Length", "6")]))
        }
    }

    @Test("C4 Content-Length with rubbish or a negative value", arguments: [
        "-1", "abc", "", "12a", "+5", "0x10", "1 2", "1.0", " , ", "5,",
        "99999999999999999999", "9223372036854775807", "\(Int.max / 2 + 1)",
    ])
    func invalidLength(value: String) {
        #expect(throws: HTTP1Error.invalidContentLength) {
            try BodyFraming.forResponse(Self.response(200, [("Content-Length", value)]), requestMethod: "GET")
        }
        #expect(throws: HTTP1Error.invalidContentLength) {
            try BodyFraming.forRequest(Self.request([("Content-Length", value)]))
        }
    }

    @Test("the largest accepted Content-Length is Int.max / 2")
    func largestLength() throws {
        #expect(try BodyFraming.forResponse(Self.response(200, [("Content-Length", "\(Int.max / 2)")]), requestMethod: "GET") == .contentLength(Int.max / 2))
        #expect(try BodyFraming.forResponse(Self.response(200, [("Content-Length", "000123")]), requestMethod: "GET") == .contentLength(123))
    }

    @Test("C4 chunked plus Content-Length: chunked wins")
    func chunkedWins() throws {
        #expect(try BodyFraming.forResponse(Self.response(200, [("Content-Length", "10"), ("Transfer-Encoding", "chunked")]), requestMethod: "GET") == .chunked)
        #expect(try BodyFraming.forResponse(Self.response(200, [("Content-Length", "nonsense"), ("Transfer-Encoding", "Chunked")]), requestMethod: "GET") == .chunked)
        #expect(try BodyFraming.forRequest(Self.request([("Transfer-Encoding", "chunked"), ("Content-Length", "3")])) == .chunked)
    }

    @Test("Transfer-Encoding lists in responses")
    func responseCodings() throws {
        #expect(try BodyFraming.forResponse(Self.response(200, [("Transfer-Encoding", "gzip, chunked")]), requestMethod: "GET") == .chunked)
        #expect(try BodyFraming.forResponse(Self.response(200, [("Transfer-Encoding", "gzip"), ("Transfer-Encoding", "chunked")]), requestMethod: "GET") == .chunked)
        #expect(try BodyFraming.forResponse(Self.response(200, [("Transfer-Encoding", "gzip"), ("Content-Length", "4")]), requestMethod: "GET") == .untilClose)
        #expect(try BodyFraming.forResponse(Self.response(200, [("Transfer-Encoding", "chunked, gzip")]), requestMethod: "GET") == .untilClose)
        #expect(throws: HTTP1Error.unsupportedTransferEncoding) {
            try BodyFraming.forResponse(Self.response(200, [("Transfer-Encoding", "chunked, chunked")]), requestMethod: "GET")
        }
    }

    @Test("Transfer-Encoding other than chunked in a request is unsupported", arguments: [
        ["gzip"], ["gzip, chunked"], ["chunked, gzip"], ["chunked", "chunked"], ["identity"],
    ])
    func requestCodings(values: [String]) {
        #expect(throws: HTTP1Error.unsupportedTransferEncoding) {
            try BodyFraming.forRequest(Self.request(values.map { ("Transfer-Encoding", $0) }))
        }
    }

    @Test("Transfer-Encoding in an HTTP/1.0 request is rejected")
    func http10Request() {
        #expect(throws: HTTP1Error.unsupportedTransferEncoding) {
            try BodyFraming.forRequest(Self.request([("Transfer-Encoding", "chunked")], version: .http1_0))
        }
    }

    @Test("requests without framing fields have no body")
    func requestWithoutBody() throws {
        #expect(try BodyFraming.forRequest(Self.request([])) == BodyFraming.none)
        #expect(try BodyFraming.forRequest(Self.request([("Content-Length", "0")])) == .contentLength(0))
    }
}

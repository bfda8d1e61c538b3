import CourierHTTP1
import Testing

@Suite("HTTPResponseHead")
struct HTTPResponseHeadTests {
    @Test("serializes to the wire form with the standard reason")
    func serialized() {
        let head = HTTPResponseHead(status: 404, fields: [HTTPField(name: "Content-Length", value: "0")])
        #expect(head.reason == "Not Found")
        #expect(String(decoding: head.serialized(), as: UTF8.self)
            == "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    }

    @Test("an empty reason keeps the space after the code")
    func emptyReason() throws {
        let head = HTTPResponseHead(status: 299, reason: "")
        let bytes = head.serialized()
        #expect(String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 299 \r\n\r\n")
        #expect(try Wire.parseResponse(bytes)?.0 == head)
    }

    @Test("serialize then parse round-trips")
    func roundTrip() throws {
        let head = HTTPResponseHead(version: .http1_0, status: 503, reason: "Busy, try later",
                                    fields: [HTTPField(name: "Retry-After", value: "120"),
                                             HTTPField(name: "Set-Cookie", value: "a=b; Path=/"),
                                             HTTPField(name: "Set-Cookie", value: "c=d")])
        let bytes = head.serialized()
        let parsed = try #require(try Wire.parseResponse(bytes + Wire.bytes("extra")))
        #expect(parsed.0 == head)
        #expect(parsed.1 == bytes.count)
        #expect(parsed.0.values(for: "set-cookie") == ["a=b; Path=/", "c=d"])
    }

    @Test("out-of-range status codes are clamped to three digits")
    func clampedStatus() {
        #expect(HTTPResponseHead(status: 12_345, reason: "X").serialized().prefix(12) == Wire.bytes("HTTP/1.1 999")[...])
        #expect(HTTPResponseHead(status: -1, reason: "X").serialized().prefix(12) == Wire.bytes("HTTP/1.1 000")[...])
    }

    @Test("keepAlive of responses")
    func keepAlive() {
        #expect(HTTPResponseHead(status: 200).keepAlive)
        #expect(!HTTPResponseHead(status: 200, fields: [HTTPField(name: "connection", value: "Close")]).keepAlive)
        #expect(!HTTPResponseHead(version: .http1_0, status: 200).keepAlive)
    }

    @Test("standard reasons")
    func reasons() {
        #expect(HTTPResponseHead.standardReason(for: 200) == "OK")
        #expect(HTTPResponseHead.standardReason(for: 431) == "Request Header Fields Too Large")
        #expect(HTTPResponseHead.standardReason(for: 799) == "")
    }
}

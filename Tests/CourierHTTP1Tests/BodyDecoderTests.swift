import CourierHTTP1
import Testing

@Suite("BodyDecoder")
struct BodyDecoderTests {
    struct TooLarge: Error {}

    @Test("D4 a Content-Length body stops exactly at its length; extra bytes stay unconsumed")
    func lengthStopsExactly() throws {
        let bytes = Wire.bytes("helloHTTP/1.1 200 OK\r\n")
        for step in [1, 3, 100] {
            let result = try Wire.decodeBody(bytes, framing: .contentLength(5), step: step)
            #expect(result.payload == Wire.bytes("hello"))
            #expect(result.consumed == 5)
            #expect(result.complete)
        }
    }

    @Test("D4 a Content-Length body that ends early is truncated")
    func lengthTruncated() throws {
        var decoder = BodyDecoder(framing: .contentLength(4))
        let (consumed, complete) = try Wire.bytes("abc").withUnsafeBytes { try decoder.decode($0) { _ in } }
        #expect(consumed == 3)
        #expect(!complete)
        #expect(decoder.payloadBytes == 3)
        #expect(throws: HTTP1Error.truncatedBody) { try decoder.finishOnClose() }
    }

    @Test("D5 empty bodies complete at once without an error")
    func emptyBodies() throws {
        for framing in [BodyFraming.none, .contentLength(0)] {
            var decoder = BodyDecoder(framing: framing)
            #expect(decoder.isComplete)
            let result = try Wire.bytes("next").withUnsafeBytes { try decoder.decode($0) { _ in Issue.record("no payload expected") } }
            #expect(result.consumed == 0)
            #expect(result.isComplete)
            try decoder.finishOnClose()
        }
        let chunked = try Wire.decodeBody(Wire.bytes("0\r\n\r\n"), framing: .chunked)
        #expect(chunked.payload.isEmpty)
        #expect(chunked.complete)
    }

    @Test("D6 a close-delimited body takes everything and ends on close")
    func untilClose() throws {
        var decoder = BodyDecoder(framing: .untilClose)
        var payload: [UInt8] = []
        for piece in ["abc", "", "def"] {
            let result = try Wire.bytes(piece).withUnsafeBytes { try decoder.decode($0) { payload += $0 } }
            #expect(result.consumed == piece.utf8.count)
            #expect(!result.isComplete)
        }
        try decoder.finishOnClose()
        #expect(decoder.isComplete)
        #expect(payload == Wire.bytes("abcdef"))
    }

    @Test("chunked body with C3 chunk extensions and trailers")
    func chunkedWithExtensionsAndTrailers() throws {
        let body = "5;name=value\r\nhello\r\n6 ; x ; y=\"q\"\r\n world\r\nA\r\n0123456789\r\n0;last\r\nX-Checksum: abc\r\nX-Other:  2 \r\n\r\nNEXT"
        let bytes = Wire.bytes(body)
        let whole = try Wire.decodeBody(bytes, framing: .chunked)
        #expect(whole.payload == Wire.bytes("hello world0123456789"))
        #expect(whole.complete)
        #expect(whole.consumed == bytes.count - 4)
        #expect(whole.decoder.trailers == [HTTPField(name: "X-Checksum", value: "abc"), HTTPField(name: "X-Other", value: "2")])
        for step in [1, 2, 7] {
            let pieces = try Wire.decodeBody(bytes, framing: .chunked, step: step)
            #expect(pieces.payload == whole.payload)
            #expect(pieces.consumed == whole.consumed)
            #expect(pieces.decoder.trailers == whole.decoder.trailers)
        }
    }

    @Test("uppercase and lowercase hex sizes")
    func hexSizes() throws {
        let payload = [UInt8](repeating: 0x41, count: 0xAB + 0x1f)
        let bytes = Wire.bytes("aB\r\n") + payload[..<0xAB] + Wire.bytes("\r\n001F\r\n") + payload[0xAB...] + Wire.bytes("\r\n0\r\n\r\n")
        let result = try Wire.decodeBody(bytes, framing: .chunked)
        #expect(result.payload == payload)
        #expect(result.complete)
    }

    @Test("C3 non-hex chunk size", arguments: ["g\r\n", "\r\n", "-1\r\n", "0x10\r\n", " 5\r\n", "5 x\r\n", ";ext\r\n"])
    func nonHexChunkSize(line: String) {
        #expect(throws: HTTP1Error.invalidChunkSize) {
            try Wire.decodeBody(Wire.bytes(line + "hello\r\n0\r\n\r\n"), framing: .chunked)
        }
    }

    @Test("C3 missing chunk body: data not followed by CRLF")
    func missingChunkData() {
        #expect(throws: HTTP1Error.invalidChunkFraming) {
            try Wire.decodeBody(Wire.bytes("3\r\nabcdef\r\n0\r\n\r\n"), framing: .chunked)
        }
        #expect(throws: HTTP1Error.invalidChunkFraming) {
            try Wire.decodeBody(Wire.bytes("3\r\nabc\n0\r\n\r\n"), framing: .chunked)
        }
        #expect(throws: HTTP1Error.invalidChunkFraming) {
            try Wire.decodeBody(Wire.bytes("3\r\nabc\r0\r\n\r\n"), framing: .chunked)
        }
    }

    @Test("bare LF and bare CR in chunk-size lines are framing errors")
    func bareLineEndings() {
        #expect(throws: HTTP1Error.invalidChunkFraming) {
            try Wire.decodeBody(Wire.bytes("3\nabc\r\n0\r\n\r\n"), framing: .chunked)
        }
        #expect(throws: HTTP1Error.invalidChunkFraming) {
            try Wire.decodeBody(Wire.bytes("3\rabc\r\n0\r\n\r\n"), framing: .chunked)
        }
        #expect(throws: HTTP1Error.invalidChunkFraming) {
            try Wire.decodeBody(Wire.bytes("0\r\n\n"), framing: .chunked)
        }
        #expect(throws: HTTP1Error.invalidChunkFraming) {
            try Wire.decodeBody(Wire.bytes("3;ext\u{0}\r\nabc\r\n0\r\n\r\n"), framing: .chunked)
        }
    }

    @Test("C3 chunked stream closed early", arguments: ["", "5", "5\r", "5\r\nhel", "5\r\nhello", "5\r\nhello\r\n", "5\r\nhello\r\n0\r\n", "5\r\nhello\r\n0\r\nX: y\r\n"])
    func chunkedClosedEarly(prefix: String) throws {
        let result = try Wire.decodeBody(Wire.bytes(prefix), framing: .chunked)
        #expect(!result.complete)
        var decoder = result.decoder
        #expect(throws: HTTP1Error.truncatedBody) { try decoder.finishOnClose() }
    }

    @Test("over-long and overflowing chunk sizes", arguments: [
        "00000000000000001", "FFFFFFFFFFFFFFFF", "8000000000000000", "123456789abcdef01",
    ])
    func oversizedChunkSize(size: String) {
        #expect(throws: HTTP1Error.invalidChunkSize) {
            try Wire.decodeBody(Wire.bytes(size + "\r\nx\r\n0\r\n\r\n"), framing: .chunked)
        }
    }

    @Test("the largest chunk size that fits in an Int is accepted")
    func hugeChunkSize() throws {
        let result = try Wire.decodeBody(Wire.bytes("7fffffffffffffff\r\nabc"), framing: .chunked)
        #expect(result.payload == Wire.bytes("abc"))
        #expect(!result.complete)
        #expect(result.decoder.payloadBytes == 3)
    }

    @Test("an over-long chunk-size line is rejected")
    func longChunkLine() {
        let line = "5;" + String(repeating: "e", count: 5000) + "\r\nhello\r\n0\r\n\r\n"
        #expect(throws: HTTP1Error.invalidChunkFraming) { try Wire.decodeBody(Wire.bytes(line), framing: .chunked) }
        #expect(throws: HTTP1Error.invalidChunkFraming) {
            try Wire.decodeBody(Wire.bytes("5;abcdefgh\r\nhello\r\n0\r\n\r\n"), framing: .chunked, limits: HTTP1Limits(maxChunkLineBytes: 8))
        }
    }

    @Test("trailer limits and malformed trailers")
    func trailerLimits() {
        let big = "0\r\nX-Big: " + String(repeating: "b", count: 20_000) + "\r\n\r\n"
        #expect(throws: HTTP1Error.trailersTooLarge) { try Wire.decodeBody(Wire.bytes(big), framing: .chunked) }
        #expect(throws: HTTP1Error.trailersTooLarge) { try Wire.decodeBody(Wire.bytes(big), framing: .chunked, step: 100) }
        var many = "0\r\n"
        for i in 0..<5 { many += "T\(i): v\r\n" }
        #expect(throws: HTTP1Error.tooManyFields) {
            try Wire.decodeBody(Wire.bytes(many + "\r\n"), framing: .chunked, limits: HTTP1Limits(maxFieldCount: 4))
        }
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.decodeBody(Wire.bytes("0\r\nno colon\r\n\r\n"), framing: .chunked)
        }
        #expect(throws: HTTP1Error.obsoleteLineFolding) {
            try Wire.decodeBody(Wire.bytes("0\r\nA: b\r\n c\r\n\r\n"), framing: .chunked)
        }
    }

    @Test("E5 10,000 one-byte chunks decode in linear time without recursion")
    func tenThousandChunks() throws {
        var bytes: [UInt8] = []
        var expected: [UInt8] = []
        for i in 0..<10_000 {
            let byte = UInt8(truncatingIfNeeded: i)
            bytes += Wire.bytes("1\r\n") + [byte] + Wire.bytes("\r\n")
            expected.append(byte)
        }
        bytes += Wire.bytes("0\r\n\r\n")
        var decoder = BodyDecoder(framing: .chunked)
        var runs = 0
        var payload: [UInt8] = []
        let result = try bytes.withUnsafeBytes { buffer in
            try decoder.decode(buffer) { run in
                runs += 1
                payload.append(contentsOf: run)
            }
        }
        #expect(result.consumed == bytes.count)
        #expect(result.isComplete)
        #expect(runs == 10_000)
        #expect(payload == expected)
        let fed = try Wire.decodeBody(bytes, framing: .chunked, step: 1)
        #expect(fed.payload == expected)
        #expect(fed.complete)
    }

    @Test("extra bytes after a chunked body are left unconsumed")
    func chunkedLeavesNextMessage() throws {
        let bytes = Wire.bytes("2\r\nok\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n")
        let result = try Wire.decodeBody(bytes, framing: .chunked)
        #expect(result.consumed == 12)
        #expect(result.complete)
        var decoder = result.decoder
        let again = try bytes.withUnsafeBytes { try decoder.decode($0) { _ in } }
        #expect(again.consumed == 0)
        #expect(again.isComplete)
    }

    @Test("E3 an error thrown by emit stops decoding and is rethrown")
    func emitErrorPropagates() {
        var decoder = BodyDecoder(framing: .chunked)
        let bytes = Wire.bytes("4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n")
        var seen = 0
        #expect(throws: TooLarge.self) {
            try bytes.withUnsafeBytes { buffer in
                try decoder.decode(buffer) { run in
                    seen += run.count
                    if seen > 5 { throw TooLarge() }
                }
            }
        }
        #expect(seen == 8)
    }
}

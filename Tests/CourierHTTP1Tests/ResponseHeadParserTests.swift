import CourierHTTP1
import Testing

@Suite("ResponseHeadParser")
struct ResponseHeadParserTests {
    static let sample = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nX-Empty:\r\nX-Space:   padded value \t \r\n\r\nhello"

    @Test("parses a status line and fields and reports the body offset")
    func parsesSimpleResponse() throws {
        let bytes = Wire.bytes(Self.sample)
        let (head, bodyStart) = try #require(try Wire.parseResponse(bytes))
        #expect(head.version == .http1_1)
        #expect(head.status == 200)
        #expect(head.reason == "OK")
        #expect(head.fields.count == 4)
        #expect(head.value(for: "content-type") == "text/plain")
        #expect(head.value(for: "CONTENT-LENGTH") == "5")
        #expect(head.value(for: "x-empty") == "")
        #expect(head.value(for: "x-space") == "padded value")
        #expect(head.value(for: "missing") == nil)
        #expect(Array(bytes[bodyStart...]) == Wire.bytes("hello"))
    }

    @Test("byte-at-a-time feeding equals whole feeding")
    func byteAtATime() throws {
        let bytes = Wire.bytes(Self.sample)
        let whole = try #require(try Wire.parseResponse(bytes))
        for step in [1, 2, 3, 7, 16] {
            let pieces = try #require(try Wire.parseResponse(bytes, step: step))
            #expect(pieces.0 == whole.0)
            #expect(pieces.1 == whole.1)
        }
    }

    @Test("every two-piece split, including CRLF split across feeds, gives the same head")
    func everySplit() throws {
        let bytes = Wire.bytes("HTTP/1.1 404 Not Found\r\nA: 1\r\nB: 2\r\n\r\nbody")
        let whole = try #require(try Wire.parseResponse(bytes))
        for cut in 1..<bytes.count {
            var parser = ResponseHeadParser()
            let first = try bytes[..<cut].withUnsafeBytes { try parser.parse($0) }
            if let first {
                #expect(first.head == whole.0)
                #expect(first.consumed == whole.1)
                continue
            }
            let second = try #require(try bytes[cut...].withUnsafeBytes { try parser.parse($0) })
            #expect(second.head == whole.0)
            #expect(cut + second.consumed == whole.1)
        }
    }

    @Test("returns nil until the empty line arrives")
    func incompleteHead() throws {
        var parser = ResponseHeadParser()
        let partial = Wire.bytes("HTTP/1.1 200 OK\r\nA: b\r\n")
        #expect(try partial.withUnsafeBytes { try parser.parse($0) } == nil)
        let rest = Wire.bytes("\r\nxyz")
        let result = try #require(try rest.withUnsafeBytes { try parser.parse($0) })
        #expect(result.consumed == 2)
        #expect(result.head.value(for: "a") == "b")
    }

    @Test("status line without reason and with an empty reason is accepted")
    func missingReason() throws {
        let bare = try #require(try Wire.parseResponse(Wire.bytes("HTTP/1.1 200\r\n\r\n")))
        #expect(bare.0.status == 200)
        #expect(bare.0.reason == "")
        let empty = try #require(try Wire.parseResponse(Wire.bytes("HTTP/1.0 204 \r\n\r\n")))
        #expect(empty.0.status == 204)
        #expect(empty.0.reason == "")
        #expect(empty.0.version == .http1_0)
        let spaced = try #require(try Wire.parseResponse(Wire.bytes("HTTP/1.1 599 Odd  reason\there\r\n\r\n")))
        #expect(spaced.0.reason == "Odd  reason\there")
    }

    @Test("any three-digit code 100-999 is accepted")
    func threeDigitCodes() throws {
        for code in [100, 101, 199, 299, 599, 600, 999] {
            let head = try #require(try Wire.parseResponse(Wire.bytes("HTTP/1.1 \(code) X\r\n\r\n")))
            #expect(head.0.status == code)
        }
    }

    @Test("C1 malformed status lines", arguments: [
        "HTP/1.1 200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK", "HTTP/1.1 00a OK",
        "HTTP/1.1 2147483648 OK", " HTTP/1.1 200 OK", "\tHTTP/1.1 200 OK", "HTTP/1.1 099 Low",
        "HTTP/1.1 000 Zero", "HTTP/1.1  200 OK", "HTTP/1.1 200\tOK", "http/1.1 200 OK",
        "HTTP/11 200 OK", "HTTP/1.1 -20 OK", "HTTP/1.1 200 O\u{01}K", "HTTP/1.1 200 OK\r\r",
        "ICY 200 OK", "HTTP/1.1",
    ])
    func malformedStatusLine(line: String) {
        #expect(throws: HTTP1Error.invalidStatusLine) {
            try Wire.parseResponse(Wire.bytes(line + "\r\nA: b\r\n\r\n"))
        }
    }

    @Test("C2 header line without a colon")
    func lineWithoutColon() {
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\r\nA: b\r\nno colon here\r\n\r\n"))
        }
    }

    @Test("C2 NUL byte in a header")
    func nulInHeader() {
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\r\nX-Bad: a\u{0}b\r\n\r\n"))
        }
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\r\nX-B\u{0}ad: ab\r\n\r\n"))
        }
    }

    @Test("C2 obs-fold lines in a response are unfolded into one space (RFC 9112 §5.2)")
    func obsFold() throws {
        let spaces = try #require(try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\r\nX-Long: first\r\n  second \r\n\tthird\r\nX-Next: n\r\n\r\n"))?.0)
        #expect(spaces.fields.map { $0.name } == ["X-Long", "X-Next"])
        #expect(spaces.value(for: "X-Long") == "first second third")
        let empty = try #require(try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\r\nX-Empty:\r\n  later\r\n\r\n"))?.0)
        #expect(empty.value(for: "X-Empty") == "later")
        // A fold before any field, and a fold carrying a control byte, are still errors.
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\r\n  orphan\r\n\r\n"))
        }
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\r\nX-Long: first\r\n  bad\u{0}byte\r\n\r\n"))
        }
    }

    @Test("C2 other malformed field lines", arguments: [
        "Name : value",        // whitespace before the colon (RFC 9112 §5.1)
        "Name\t: value",
        ": no name",
        "Na me: value",
        "Name: bare\rCR",
        "Name: vertical\u{0B}tab",
        "Name: del\u{7F}",
        "Näme: value",
    ])
    func malformedField(line: String) {
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\r\n\(line)\r\n\r\n"))
        }
    }

    @Test("whitespace between the status line and the first field is rejected")
    func whitespaceBeforeFirstField() {
        #expect(throws: HTTP1Error.invalidHeaderField) {
            try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\r\n X: y\r\n\r\n"))
        }
    }

    @Test("HTAB and obs-text are allowed in values; invalid UTF-8 is repaired")
    func permissiveValueBytes() throws {
        var bytes = Wire.bytes("HTTP/1.1 200 OK\r\nX-Tab: a\tb\r\nX-Utf8: caf\u{E9}\r\nX-Latin1: caf")
        bytes.append(0xE9)
        bytes += Wire.bytes("\r\n\r\n")
        let head = try #require(try Wire.parseResponse(bytes)).0
        #expect(head.value(for: "x-tab") == "a\tb")
        #expect(head.value(for: "x-utf8") == "caf\u{E9}")
        #expect(head.value(for: "x-latin1") == "caf\u{FFFD}")
    }

    @Test("bare LF line endings are accepted")
    func bareLF() throws {
        let head = try #require(try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\nA: 1\r\nB: 2\n\nrest")))
        #expect(head.0.fields == [HTTPField(name: "A", value: "1"), HTTPField(name: "B", value: "2")])
        #expect(head.1 == 28)
    }

    @Test("empty lines before the status line are skipped")
    func leadingEmptyLines() throws {
        let head = try #require(try Wire.parseResponse(Wire.bytes("\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"), step: 1))
        #expect(head.0.status == 200)
        #expect(head.1 == 23)
    }

    @Test("E1 head larger than the limit")
    func headTooLarge() {
        let big = "HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: 70_000) + "\r\n\r\n"
        #expect(throws: HTTP1Error.headTooLarge) { try Wire.parseResponse(Wire.bytes(big)) }
        #expect(throws: HTTP1Error.headTooLarge) { try Wire.parseResponse(Wire.bytes(big), step: 1000) }
    }

    @Test("E1 head too large is reported before the terminator arrives")
    func headTooLargeEarly() throws {
        let limits = HTTP1Limits(maxHeadBytes: 1024)
        var parser = ResponseHeadParser(limits: limits)
        let start = Wire.bytes("HTTP/1.1 200 OK\r\nX: ")
        #expect(try start.withUnsafeBytes { try parser.parse($0) } == nil)
        let filler = [UInt8](repeating: 0x61, count: 1024 - start.count)
        #expect(try filler.withUnsafeBytes { try parser.parse($0) } == nil)
        #expect(throws: HTTP1Error.headTooLarge) {
            try [UInt8(0x61)].withUnsafeBytes { try parser.parse($0) }
        }
    }

    @Test("a head exactly at the limit is accepted")
    func headAtLimit() throws {
        let head = Wire.bytes("HTTP/1.1 200 OK\r\nX: abc\r\n\r\n")
        let limits = HTTP1Limits(maxHeadBytes: head.count)
        #expect(try Wire.parseResponse(head + Wire.bytes("body"), limits: limits)?.1 == head.count)
        #expect(try Wire.parseResponse(head, step: 1, limits: limits)?.1 == head.count)
        #expect(throws: HTTP1Error.headTooLarge) {
            try Wire.parseResponse(head, limits: HTTP1Limits(maxHeadBytes: head.count - 1))
        }
    }

    @Test("E2 more fields than allowed")
    func tooManyFields() throws {
        func response(fields: Int) -> [UInt8] {
            var text = "HTTP/1.1 200 OK\r\n"
            for i in 0..<fields { text += "X-\(i): v\r\n" }
            return Wire.bytes(text + "\r\n")
        }
        #expect(try Wire.parseResponse(response(fields: 100))?.0.fields.count == 100)
        #expect(throws: HTTP1Error.tooManyFields) { try Wire.parseResponse(response(fields: 101)) }
        #expect(throws: HTTP1Error.tooManyFields) { try Wire.parseResponse(response(fields: 101), step: 1) }
        let limits = HTTP1Limits(maxFieldCount: 3)
        #expect(throws: HTTP1Error.tooManyFields) { try Wire.parseResponse(response(fields: 4), limits: limits) }
    }

    @Test("D3 a 1xx head followed by the final head in one buffer")
    func informationalThenFinal() throws {
        let bytes = Wire.bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        var parser = ResponseHeadParser()
        try bytes.withUnsafeBytes { buffer in
            let first = try #require(try parser.parse(buffer))
            #expect(first.head.status == 100)
            let rest = UnsafeRawBufferPointer(rebasing: buffer[first.consumed...])
            let second = try #require(try parser.parse(rest))
            #expect(second.head.status == 200)
            #expect(first.consumed + second.consumed == bytes.count - 2)
        }
    }

    @Test("the parser is usable again after an error and reset")
    func resetAfterError() throws {
        var parser = ResponseHeadParser()
        #expect(throws: HTTP1Error.invalidStatusLine) {
            try Wire.bytes("BAD\r\n\r\n").withUnsafeBytes { try parser.parse($0) }
        }
        _ = try Wire.bytes("HTTP/1.1 2").withUnsafeBytes { try parser.parse($0) }
        parser.reset()
        let ok = try Wire.bytes("HTTP/1.1 201 Created\r\n\r\n").withUnsafeBytes { try parser.parse($0) }
        #expect(ok?.head.status == 201)
    }

    @Test("feeding a large head one byte at a time is linear")
    func oneByteFeedingIsLinear() throws {
        var text = "HTTP/1.1 200 OK\r\n"
        for i in 0..<99 { text += "X-Field-\(i): " + String(repeating: "v", count: 600) + "\r\n" }
        let bytes = Wire.bytes(text + "\r\n")
        #expect(bytes.count > 60_000)
        let clock = ContinuousClock()
        let start = clock.now
        let head = try #require(try Wire.parseResponse(bytes, step: 1))
        #expect(head.0.fields.count == 99)
        #expect(head.1 == bytes.count)
        // A generous bound that only a quadratic rescan would exceed.
        #expect(clock.now - start < .seconds(20))
    }

    @Test("errors carry the offending line with control bytes escaped")
    func errorDetail() {
        do {
            _ = try Wire.parseResponse(Wire.bytes("HTTP/1.1 200 OK\r\nBad\u{1}Line\r\n\r\n"))
            Issue.record("expected an error")
        } catch let error as HTTP1Error {
            #expect(error == .invalidHeaderField)
            #expect(error.description.contains("Bad\\x01Line"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("control bytes are found at every position of a value (word and tail checks)")
    func controlBytesAtEveryPosition() throws {
        for length in [1, 7, 8, 9, 16, 23] {
            for position in 0..<length {
                for bad: UInt8 in [0x00, 0x01, 0x0B, 0x1F, 0x7F] {
                    var value = [UInt8](repeating: 0x61, count: length)
                    value[position] = bad
                    let bytes = Wire.bytes("HTTP/1.1 200 OK\r\nX: ") + value + Wire.bytes("\r\n\r\n")
                    #expect(throws: HTTP1Error.invalidHeaderField) { try Wire.parseResponse(bytes) }
                }
                var tabbed = [UInt8](repeating: 0x80, count: length)
                tabbed[position] = 0x09
                if position == 0 || position == length - 1 { tabbed[position] = 0x7E }
                let bytes = Wire.bytes("HTTP/1.1 200 OK\r\nX: ") + tabbed + Wire.bytes("\r\n\r\n")
                #expect(try Wire.parseResponse(bytes)?.0.fields.count == 1)
            }
        }
    }

    @Test("well-known names keep their wire spelling")
    func nameSpelling() throws {
        let bytes = Wire.bytes("HTTP/1.1 200 OK\r\nContent-Type: a\r\ncontent-length: 0\r\nCONTENT-ENCODING: gzip\r\nX-Custom-Header: b\r\nEtag: c\r\n\r\n")
        let head = try #require(try Wire.parseResponse(bytes)).0
        #expect(head.fields.map(\.name) == ["Content-Type", "content-length", "CONTENT-ENCODING", "X-Custom-Header", "Etag"])
        #expect(head.value(for: "content-encoding") == "gzip")
        #expect(head.value(for: "ETAG") == "c")
    }
}


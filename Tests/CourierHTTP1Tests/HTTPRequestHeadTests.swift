import CourierHTTP1
import Testing

@Suite("HTTPRequestHead")
struct HTTPRequestHeadTests {
    @Test("serializes to the wire form")
    func serialized() {
        let head = HTTPRequestHead(method: "GET", target: "/a?b=c",
                                   fields: [HTTPField(name: "Host", value: "example.com"),
                                            HTTPField(name: "Accept", value: "*/*")])
        #expect(String(decoding: head.serialized(), as: UTF8.self)
            == "GET /a?b=c HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n")
    }

    @Test("serialize then parse round-trips")
    func roundTrip() throws {
        let head = HTTPRequestHead(method: "PUT", target: "/upload/é", version: .http1_0,
                                   fields: [HTTPField(name: "Content-Length", value: "10"),
                                            HTTPField(name: "X-Tab", value: "a\tb"),
                                            HTTPField(name: "X-Empty", value: "")])
        let bytes = head.serialized()
        let parsed = try #require(try Wire.parseRequest(bytes))
        #expect(parsed.0 == head)
        #expect(parsed.1 == bytes.count)
    }

    @Test("CR, LF and NUL cannot inject fields")
    func noInjection() throws {
        let head = HTTPRequestHead(method: "GET", target: "/",
                                   fields: [HTTPField(name: "Host", value: "h"),
                                            HTTPField(name: "A", value: "1\r\nInjected: yes\u{0}")])
        let parsed = try #require(try Wire.parseRequest(head.serialized())).0
        let badTarget = HTTPRequestHead(method: "GET", target: "/\r\nX: y").serialized()
        #expect(badTarget.filter { $0 == 0x0A }.count == 2)
        #expect(parsed.fields.count == 2)
        #expect(parsed.value(for: "injected") == nil)
        #expect(parsed.value(for: "a") == "1  Injected: yes")
    }

    @Test("value lookups ignore case and keep order")
    func lookups() {
        let head = HTTPRequestHead(method: "GET", target: "/", fields: [
            HTTPField(name: "Accept", value: "a"), HTTPField(name: "X", value: "1"),
            HTTPField(name: "ACCEPT", value: "b"),
        ])
        #expect(head.value(for: "accept") == "a")
        #expect(head.values(for: "Accept") == ["a", "b"])
        #expect(head.values(for: "none").isEmpty)
        #expect(head.fields.value(for: "x") == "1")
    }

    @Test("keepAlive follows the version and Connection tokens")
    func keepAlive() {
        func head(_ version: HTTPVersion, _ connection: [String]) -> HTTPRequestHead {
            HTTPRequestHead(method: "GET", target: "/", version: version,
                            fields: connection.map { HTTPField(name: "Connection", value: $0) })
        }
        #expect(head(.http1_1, []).keepAlive)
        #expect(!head(.http1_1, ["close"]).keepAlive)
        #expect(!head(.http1_1, ["Upgrade, CLOSE"]).keepAlive)
        #expect(!head(.http1_1, ["keep-alive", "close"]).keepAlive)
        #expect(head(.http1_1, ["closed"]).keepAlive)
        #expect(!head(.http1_0, []).keepAlive)
        #expect(head(.http1_0, ["keep-alive"]).keepAlive)
        #expect(head(.http1_0, ["foo , Keep-Alive"]).keepAlive)
        #expect(!head(.http1_0, ["keep-alive, close"]).keepAlive)
    }

    @Test("field validation helpers")
    func validation() {
        #expect(HTTPField.isValidName("X-Custom_1"))
        #expect(!HTTPField.isValidName(""))
        #expect(!HTTPField.isValidName("Bad Name"))
        #expect(!HTTPField.isValidName("Bad:Name"))
        #expect(HTTPField.isValidValue("text/plain; charset=utf-8"))
        #expect(HTTPField.isValidValue(""))
        #expect(!HTTPField.isValidValue("a\r\nb"))
        #expect(!HTTPField.isValidValue(" padded"))
        #expect(!HTTPField.isValidValue("nul\u{0}"))
    }

    @Test("sanitizing finds CR, LF and NUL at every position of long values")
    func sanitizeEveryPosition() throws {
        for length in [1, 8, 9, 17, 40] {
            for position in 0..<length {
                for bad in ["\r", "\n", "\u{0}"] {
                    var chars = Array(repeating: "v", count: length)
                    chars[position] = bad
                    let value = chars.joined()
                    let fields = [HTTPField(name: "Host", value: "h"), HTTPField(name: "X", value: value)]
                    let bytes = HTTPRequestHead(method: "GET", target: "/", fields: fields).serialized()
                    #expect(bytes.filter { $0 == 0x0A }.count == 4)
                    #expect(!bytes.contains(0))
                    let parsed = try #require(try Wire.parseRequest(bytes)).0
                    #expect(parsed.fields.count == 2)
                }
            }
        }
        let tab = HTTPRequestHead(method: "GET", target: "/", fields: [HTTPField(name: "Host", value: "h"),
                                                                         HTTPField(name: "X", value: "a\tb\tc\td\te\tf")])
        #expect(try Wire.parseRequest(tab.serialized())?.0 == tab)
    }
}


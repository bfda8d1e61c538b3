import Courier
import Testing

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
    @Test("names are case-insensitive")
    func caseInsensitive() {
        let headers: HTTPHeaders = ["Content-Type": "application/json"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.contains("Content-type"))
        #expect(headers["Content-Length"] == nil)
    }

    @Test("repeated fields are kept in order")
    func repeatedFields() {
        var headers = HTTPHeaders()
        headers.add("a=1", for: "Set-Cookie")
        headers.add("text/html", for: "Accept")
        headers.add("b=2", for: "set-cookie")
        #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(headers.count == 3)
        #expect(headers.fields.map(\.name) == ["Set-Cookie", "Accept", "set-cookie"])
    }

    @Test("set replaces every field of a name in place")
    func setReplaces() {
        var headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3"]
        headers.set("9", for: "a")
        #expect(headers.fields.map(\.name) == ["A", "B"])
        #expect(headers["a"] == "9")
        headers["b"] = nil
        #expect(!headers.contains("B"))
    }

    @Test("merge lets the other side win by name")
    func merge() {
        var headers: HTTPHeaders = ["Accept": "*/*", "X-One": "1"]
        headers.merge(["accept": "application/json"])
        #expect(headers.values(for: "Accept") == ["application/json"])
        #expect(headers["X-One"] == "1")
        var repeated = HTTPHeaders([("X-A", "1"), ("x-b", "2"), ("X-C", "3")])
        repeated.merge(HTTPHeaders([("X-B", "4"), ("x-B", "5")]))
        #expect(repeated.fields.map(\.value) == ["1", "3", "4", "5"], "every field of a merged name goes, in order")
        var empty = HTTPHeaders()
        empty.merge(["Accept": "*/*"])
        #expect(empty.fields.map(\.name) == ["Accept"])
    }

    @Test("description redacts credentials")
    func redaction() {
        let headers: HTTPHeaders = ["Authorization": "Bearer s3cret", "X-Magic-Auth": "key-123",
                                    "Cookie": "session=abc", "Accept": "text/plain"]
        let text = headers.description
        #expect(!text.contains("s3cret"))
        #expect(!text.contains("key-123"))
        #expect(!text.contains("abc"))
        #expect(text.contains("Accept: text/plain"))
        #expect(text.contains("Authorization: <redacted>"))
    }

    @Test("equality ignores name case but not order or values")
    func equality() {
        let upper: HTTPHeaders = ["A": "1"]
        let lower: HTTPHeaders = ["a": "1"]
        let other: HTTPHeaders = ["A": "2"]
        #expect(upper == lower)
        #expect(upper != other)
        #expect(HTTPHeaders([("A", "1"), ("B", "2")]) != HTTPHeaders([("B", "2"), ("A", "1")]))
    }
}

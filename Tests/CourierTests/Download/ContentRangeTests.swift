@testable import Courier
import Foundation
import Testing

/// `Content-Range` of a `206` (RFC 9110, section 14.4), as a resumed download checks it.
@Suite("Content-Range parsing")
struct ContentRangeTests {
    @Test("valid single ranges", arguments: [
        ("bytes 0-499/1234", 0, 499, Int64?.some(1234)),
        ("bytes 500-999/*", 500, 999, nil),
        ("BYTES 7-7/8", 7, 7, 8),
        (" bytes 21010-47021/47022 ", 21010, 47021, 47022),
    ] as [(String, Int64, Int64, Int64?)])
    func valid(text: String, first: Int64, last: Int64, complete: Int64?) {
        let range = ContentRange(text)
        #expect(range?.first == first)
        #expect(range?.last == last)
        #expect(range?.completeLength == complete)
    }

    @Test("anything else is refused", arguments: [
        "bytes */1234", "bytes 5-4/10", "bytes 0-10/10", "items 0-1/2", "bytes 0-1", "bytes -1-5/10",
        "bytes +1-5/10", "bytes 0-5/ 10", "", "bytes ", "bytes 0 -5/10",
    ])
    func invalid(text: String) {
        #expect(ContentRange(text) == nil)
    }
}

/// What a partial download keeps for its resume: the `If-Range` value (RFC 9110, section 13.1.5).
@Suite("Partial download records")
struct PartialDownloadRecordTests {
    static let url = URL(string: "https://example.com/file")!

    static func head(_ fields: [(String, String)]) -> HTTPResponse {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.add(value, for: name) }
        return HTTPResponse(status: .init(code: 200), headers: headers, url: url)
    }

    @Test("a strong ETag is the If-Range value; a weak one is never used, the date is")
    func validators() {
        let strong = PartialDownload.Record(url: Self.url, head: Self.head([("ETag", "\"abc\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]))
        #expect(strong?.ifRange == "\"abc\"")
        let weak = PartialDownload.Record(url: Self.url, head: Self.head([("ETag", "W/\"abc\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]))
        #expect(weak?.ifRange == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(weak?.etag == nil)
        #expect(PartialDownload.Record(url: Self.url, head: Self.head([("ETag", "W/\"abc\"")])) == nil, "nothing to resume against")
        #expect(PartialDownload.Record(url: Self.url, head: Self.head([])) == nil)
    }

    @Test("the files sit beside the destination, hidden")
    func paths() {
        let partial = PartialDownload(destination: URL(fileURLWithPath: "/data/out/tool.tar.gz"))
        #expect(partial.partialPath == "/data/out/.tool.tar.gz.courier-partial")
        #expect(partial.recordPath == "/data/out/.tool.tar.gz.courier-partial.validator")
    }
}

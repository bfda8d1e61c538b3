@testable import Courier
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

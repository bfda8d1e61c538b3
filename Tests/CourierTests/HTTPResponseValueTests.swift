@testable import Courier
import Foundation
import Testing

/// `HTTPResponse` keeps its fields in one shared box: a copy must still behave as a value.
@Suite("HTTPResponse is a value")
struct HTTPResponseValueTests {
    private static func response() -> HTTPResponse {
        var response = HTTPResponse(status: .init(code: 200), headers: ["Content-Type": "text/plain"],
                                    body: Data("hello".utf8), url: URL(string: "https://example.com/a")!)
        response.trailers = ["X-Checksum": "1"]
        response.source = .network
        return response
    }

    @Test("changing a copy, field by field, leaves the original as it was")
    func copiesAreIndependent() {
        let original = Self.response()
        var copy = original
        copy.status = .init(code: 404)
        copy.headers["Content-Type"] = "application/json"
        copy.headers.add("1", for: "X-Added")
        copy.body.append(contentsOf: Data(" world".utf8))
        copy.url = URL(string: "https://example.com/b")!
        copy.trailers["X-Checksum"] = "2"
        copy.source = .cache
        copy.metrics = RequestMetrics()
        copy.contentDecoding = HTTPResponse.ContentDecoding(contentEncoding: "gzip", encodedLength: 10)
        #expect(original.status.code == 200)
        #expect(original.headers["Content-Type"] == "text/plain" && original.headers["X-Added"] == nil)
        #expect(original.body == Data("hello".utf8))
        #expect(original.url.absoluteString == "https://example.com/a")
        #expect(original.trailers["X-Checksum"] == "1")
        #expect(original.source == .network && (original.metrics == nil) && original.contentDecoding == nil)
        #expect(copy.status.code == 404 && copy.headers["X-Added"] == "1" && copy.body == Data("hello world".utf8))
        #expect(copy.url.absoluteString == "https://example.com/b" && copy.trailers["X-Checksum"] == "2")
        #expect(copy.source == .cache && copy.metrics != nil && copy.contentDecoding?.contentEncoding == "gzip")
    }

    @Test("copies handed to other tasks and changed there never change one another")
    func copiesAcrossTasks() async {
        let original = Self.response()
        let changed = await withTaskGroup(of: HTTPResponse.self) { group in
            for index in 0..<16 {
                group.addTask {
                    var mine = original
                    mine.headers["X-Task"] = String(index)
                    mine.body.append(UInt8(index))
                    return mine
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(changed.compactMap { $0.headers["X-Task"] }).count == 16)
        #expect(changed.allSatisfy { $0.body.count == 6 && $0.body.last.map { Int($0) } == Int($0.headers["X-Task"] ?? "") })
        #expect(original.headers["X-Task"] == nil && original.body == Data("hello".utf8))
    }
}

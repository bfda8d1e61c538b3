import CourierHTTP1
import Testing

@Suite("HTTP1Error")
struct HTTP1ErrorTests {
    @Test("equality compares the kind, not the detail")
    func equality() {
        #expect(HTTP1Error.headTooLarge == .headTooLarge)
        #expect(HTTP1Error.headTooLarge != .tooManyFields)
        #expect(HTTP1Error.invalidChunkSize.detail == nil)
    }

    @Test("descriptions are sentences with an escaped, truncated detail")
    func descriptions() throws {
        #expect(HTTP1Error.truncatedBody.description == "The connection closed before the message body was complete")
        var thrown: HTTP1Error?
        do {
            let line = "HTTP/1.1 2x0 " + String(repeating: "r", count: 200) + "\u{7}"
            _ = try Wire.parseResponse(Wire.bytes(line + "\r\n\r\n"))
        } catch let error as HTTP1Error {
            thrown = error
        }
        let error = try #require(thrown)
        #expect(error == .invalidStatusLine)
        let detail = try #require(error.detail)
        #expect(detail.hasPrefix("\"HTTP/1.1 2x0 rrr"))
        #expect(detail.contains("…"))
        #expect(detail.utf8.count < 100)
        #expect(error.description.hasPrefix("The response status line is malformed: \"HTTP/1.1 2x0"))
    }

    @Test("every kind has a distinct description")
    func distinctDescriptions() {
        let all: [HTTP1Error] = [
            .invalidStatusLine, .invalidRequestLine, .invalidHeaderField, .obsoleteLineFolding, .headTooLarge,
            .tooManyFields, .invalidContentLength, .conflictingContentLength, .unsupportedTransferEncoding,
            .invalidChunkSize, .invalidChunkFraming, .trailersTooLarge, .truncatedBody, .decompressionFailed,
            .decompressionLimitExceeded,
        ]
        #expect(Set(all.map(\.description)).count == all.count)
    }
}

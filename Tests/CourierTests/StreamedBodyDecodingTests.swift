@testable import Courier
import CourierHTTP1
import Foundation
import Testing

/// ``StreamedBodyDecoding`` without sockets: encoded bytes wait in it, each step decodes at most
/// ``StreamedBodyDecoding/step`` bytes, and the end is checked only once everything was decoded.
@Suite("Streamed body decoding, one bounded step at a time")
struct StreamedBodyDecodingTests {
    static func decoding(ratio: Int = 0) throws -> StreamedBodyDecoding {
        let decoder = try #require(ContentDecoder(contentEncoding: "gzip", maxOutputBytes: .max, maxRatio: ratio))
        return StreamedBodyDecoding(decoder: decoder)
    }

    /// Takes every step that is ready, checking each one's size.
    static func drain(_ decoding: inout StreamedBodyDecoding, into received: inout Data) throws {
        for _ in 0..<100_000 {
            guard let step = try decoding.next() else { return }
            #expect(!step.isEmpty && step.count <= StreamedBodyDecoding.step, "a step of \(step.count) bytes")
            received.append(step)
        }
        Issue.record("no end of steps")
    }

    @Test("an 8 MiB body of ratio 20 received in one piece decodes in steps of at most 32 KiB; the encoded bytes wait until taken; the end checks out once drained")
    func oneBigPiece() throws {
        let plain = PausedGzipBody.plain
        var decoding = try Self.decoding()
        decoding.receive(PausedGzipBody.gzip)
        #expect(decoding.pendingEncodedCount == PausedGzipBody.gzip.count)
        let first = try #require(try decoding.next())
        #expect(first.count <= StreamedBodyDecoding.step)
        #expect(decoding.pendingEncodedCount > PausedGzipBody.gzip.count / 2, "one step decodes only a little of the encoded body")
        #expect(!decoding.isDrained)
        #expect(throws: HTTP1Error.decompressionFailed) { try decoding.finish() }
        var received = first
        try Self.drain(&decoding, into: &received)
        #expect(decoding.isDrained && decoding.pendingEncodedCount == 0)
        let same = received == plain  // not in #expect: no diff of megabytes
        #expect(same)
        try decoding.finish()
    }

    @Test("pieces received between steps are kept in order: every octet arrives")
    func piecesBetweenSteps() throws {
        let gzip = PausedGzipBody.gzip
        var decoding = try Self.decoding()
        var received = Data()
        var offset = 0
        var piece = 1
        while offset < gzip.count {
            let end = min(offset + piece, gzip.count)
            decoding.receive(gzip[offset..<end])
            offset = end
            piece = piece * 3 + 1
            // Take one step only, so that encoded bytes pile up behind it.
            if let step = try decoding.next() { received.append(step) }
        }
        try Self.drain(&decoding, into: &received)
        let same = received == PausedGzipBody.plain
        #expect(same, "every octet, in order")
        try decoding.finish()
    }

    @Test("a truncated body fails its end check after its decodable part; corrupt data fails the step that meets it; the ratio limit applies")
    func failures() throws {
        var truncated = try Self.decoding()
        truncated.receive(PausedGzipBody.gzip.prefix(PausedGzipBody.gzip.count - 1000))
        var received = Data()
        try Self.drain(&truncated, into: &received)
        let prefix = received == PausedGzipBody.plain.prefix(received.count)
        #expect(received.count > PausedGzipBody.plain.count / 2 && prefix)
        #expect(throws: HTTP1Error.decompressionFailed) { try truncated.finish() }

        var corrupt = try Self.decoding()
        var bytes = PausedGzipBody.gzip
        for index in stride(from: bytes.count / 2, to: bytes.count / 2 + 500, by: 3) { bytes[index] ^= 0x5A }
        corrupt.receive(bytes)
        #expect(throws: HTTP1Error.decompressionFailed) {
            var ignored = Data()
            try Self.drain(&corrupt, into: &ignored)
        }

        var limited = try Self.decoding(ratio: 10)
        limited.receive(PausedGzipBody.gzip)
        #expect(throws: HTTP1Error.decompressionLimitExceeded) {
            var ignored = Data()
            try Self.drain(&limited, into: &ignored)
        }
    }
}

import CourierHTTP1
import Testing

@Suite("ContentDecoder")
struct ContentDecoderTests {
    /// Decodes `input` fed in pieces of `step` bytes, then finishes.
    static func decodeAll(_ decoder: ContentDecoder, _ input: [UInt8], step: Int = .max) throws -> [UInt8] {
        var output: [UInt8] = []
        var offset = 0
        while offset < input.count {
            let end = offset + Swift.min(step, input.count - offset)
            output += try input[offset..<end].withUnsafeBytes { try decoder.decode($0) }
            offset = end
        }
        try decoder.finish()
        return output
    }

    static func decoder(_ header: String, maxOutput: Int = 64 << 20, ratio: Int = 1000) throws -> ContentDecoder {
        try #require(ContentDecoder(contentEncoding: header, maxOutputBytes: maxOutput, maxRatio: ratio))
    }

    @Test("header values map to codings")
    func headerValues() {
        #expect(ContentDecoder.encoding(for: "gzip") == .gzip)
        #expect(ContentDecoder.encoding(for: " X-GZIP ") == .gzip)
        #expect(ContentDecoder.encoding(for: "Deflate") == .deflate)
        #expect(ContentDecoder.encoding(for: "identity") == nil)
        #expect(ContentDecoder.encoding(for: "br") == nil)
        #expect(ContentDecoder.encoding(for: "gzip, gzip") == nil)
        #expect(ContentDecoder(contentEncoding: "identity", maxOutputBytes: 10, maxRatio: 10) == nil)
        #expect(ContentDecoder(contentEncoding: "", maxOutputBytes: 10, maxRatio: 10) == nil)
    }

    @Test("gzip round trip, whole and in pieces")
    func gzipRoundTrip() throws {
        let original = Zlib.sampleData(count: 300_000)
        let compressed = Zlib.compress(original, windowBits: Zlib.gzip)
        for step in [Int.max, 4096, 7] {
            #expect(try Self.decodeAll(Self.decoder("gzip"), compressed, step: step) == original)
        }
        let tiny = Wire.bytes("hi")
        #expect(try Self.decodeAll(Self.decoder("gzip"), Zlib.compress(tiny, windowBits: Zlib.gzip), step: 1) == tiny)
    }

    @Test("concatenated gzip members decode one after another")
    func gzipMembers() throws {
        let first = Wire.bytes("first member, ")
        let second = Zlib.sampleData(count: 50_000)
        let wire = Zlib.compress(first, windowBits: Zlib.gzip) + Zlib.compress(second, windowBits: Zlib.gzip)
        for step in [Int.max, 3] {
            #expect(try Self.decodeAll(Self.decoder("gzip"), wire, step: step) == first + second)
        }
    }

    @Test("trailing garbage after a gzip member is ignored")
    func gzipTrailingGarbage() throws {
        let original = Wire.bytes("payload")
        let wire = Zlib.compress(original, windowBits: Zlib.gzip) + [0, 0, 0, 0]
        #expect(try Self.decodeAll(Self.decoder("gzip"), wire) == original)
    }

    @Test("deflate accepts the zlib-wrapped form")
    func deflateZlib() throws {
        let original = Zlib.sampleData(count: 100_000)
        let compressed = Zlib.compress(original, windowBits: Zlib.zlib)
        for step in [Int.max, 1000, 1] where step != 1 || original.count < 200_000 {
            #expect(try Self.decodeAll(Self.decoder("deflate"), compressed, step: step) == original)
        }
    }

    @Test("deflate accepts raw deflate")
    func deflateRaw() throws {
        for count in [1, 5, 100_000] {
            let original = Zlib.sampleData(count: count)
            let compressed = Zlib.compress(original, windowBits: Zlib.raw)
            for step in [Int.max, 1] {
                #expect(try Self.decodeAll(Self.decoder("deflate"), compressed, step: step) == original)
            }
        }
    }

    @Test("an empty encoded body decodes to nothing")
    func emptyBody() throws {
        #expect(try Self.decodeAll(Self.decoder("gzip"), []).isEmpty)
        #expect(try Self.decodeAll(Self.decoder("deflate"), []).isEmpty)
    }

    @Test("C5 corrupted gzip fails")
    func corruptedGzip() throws {
        var compressed = Zlib.compress(Zlib.sampleData(count: 10_000), windowBits: Zlib.gzip)
        for i in stride(from: 20, to: 60, by: 1) { compressed[i] ^= 0x5A }
        #expect(throws: HTTP1Error.decompressionFailed) { try Self.decodeAll(Self.decoder("gzip"), compressed) }
        #expect(throws: HTTP1Error.decompressionFailed) {
            try Self.decodeAll(Self.decoder("gzip"), Wire.bytes("this is not gzip at all"))
        }
        var badCRC = Zlib.compress(Wire.bytes("checksummed"), windowBits: Zlib.gzip)
        badCRC[badCRC.count - 6] ^= 0xFF
        #expect(throws: HTTP1Error.decompressionFailed) { try Self.decodeAll(Self.decoder("gzip"), badCRC) }
    }

    @Test("C5 broken deflate fails and the error is sticky")
    func corruptedDeflate() throws {
        let decoder = try Self.decoder("deflate")
        let broken = Wire.bytes("\u{78}\u{9C}garbage garbage garbage")
        #expect(throws: HTTP1Error.decompressionFailed) { try broken.withUnsafeBytes { try decoder.decode($0) } }
        #expect(throws: HTTP1Error.decompressionFailed) { try Wire.bytes("more").withUnsafeBytes { try decoder.decode($0) } }
        #expect(throws: HTTP1Error.decompressionFailed) { try decoder.finish() }
    }

    @Test("truncated compressed data fails on finish")
    func truncated() throws {
        let compressed = Zlib.compress(Zlib.sampleData(count: 10_000), windowBits: Zlib.gzip)
        #expect(throws: HTTP1Error.decompressionFailed) {
            try Self.decodeAll(Self.decoder("gzip"), Array(compressed.prefix(compressed.count / 2)))
        }
        #expect(throws: HTTP1Error.decompressionFailed) {
            try Self.decodeAll(Self.decoder("deflate"), [0x78])
        }
    }

    @Test("E4 a gzip bomb (100 MB of zeros) stops at the ratio limit in the first piece")
    func gzipBombRatio() throws {
        let bomb = Zlib.compress([UInt8](repeating: 0, count: 1 << 20), times: 100, windowBits: Zlib.gzip, level: 9)
        #expect(bomb.count < 200_000)
        let decoder = try Self.decoder("gzip", maxOutput: 1 << 30, ratio: 100)
        var delivered = 0
        var offset = 0
        var thrown: (any Error)?
        while offset < bomb.count && thrown == nil {
            let end = Swift.min(offset + 16_384, bomb.count)
            do {
                delivered += try bomb[offset..<end].withUnsafeBytes { try decoder.decode($0) }.count
            } catch {
                thrown = error
            }
            offset = end
        }
        #expect(thrown as? HTTP1Error == .decompressionLimitExceeded)
        #expect(offset == 16_384)
        #expect(delivered == 0)
    }

    @Test("E4 a gzip bomb stops at the output size limit")
    func gzipBombSize() throws {
        let bomb = Zlib.compress([UInt8](repeating: 0, count: 1 << 20), times: 100, windowBits: Zlib.gzip, level: 9)
        let limit = 2 << 20
        let decoder = try Self.decoder("gzip", maxOutput: limit, ratio: 0)
        var delivered = 0
        var thrown: (any Error)?
        var offset = 0
        while offset < bomb.count && thrown == nil {
            let end = Swift.min(offset + 512, bomb.count)
            do {
                delivered += try bomb[offset..<end].withUnsafeBytes { try decoder.decode($0) }.count
            } catch {
                thrown = error
            }
            offset = end
        }
        #expect(thrown as? HTTP1Error == .decompressionLimitExceeded)
        #expect(delivered <= limit)
        #expect(delivered > limit / 2)
        #expect(offset < bomb.count / 10)
    }

    @Test("small, highly compressible bodies are not mistaken for bombs")
    func noFalsePositive() throws {
        let zeros = [UInt8](repeating: 0, count: 60_000)
        let compressed = Zlib.compress(zeros, windowBits: Zlib.gzip, level: 9)
        #expect(zeros.count / compressed.count > 100)
        #expect(try Self.decodeAll(Self.decoder("gzip", ratio: 100), compressed) == zeros)
    }
}

import CourierHTTP1
import Testing

/// ``ContentDecoder/decode(_:maxOutput:)``: a highly compressed body decodes one bounded step at
/// a time, the input not consumed is reported, and what zlib still holds comes out on the next
/// call (with empty input, too), so that every octet arrives and the end is checked only after.
@Suite("ContentDecoder in bounded steps")
struct ContentDecoderBoundedOutputTests {
    /// Decodes `input` fed in pieces of at most `piece` bytes, each step returning at most
    /// `maxOutput` bytes: the unconsumed rest of a piece is passed again, and once the input is
    /// used up, empty input drains zlib. Checks every step's size and the end.
    /// - Returns: the decoded bytes, and the number of steps.
    static func decodeInSteps(_ decoder: ContentDecoder, _ input: [UInt8], piece: Int, maxOutput: Int,
                              slack: Int = 0) throws -> (output: [UInt8], steps: Int) {
        var output: [UInt8] = []
        var offset = 0
        var steps = 0
        while offset < input.count || decoder.hasPendingOutput {
            steps += 1
            try #require(steps < 1_000_000, "no end of decoding")
            let end = offset + Swift.min(piece, input.count - offset)
            let (decoded, consumed) = try input[offset..<end].withUnsafeBytes { try decoder.decode($0, maxOutput: maxOutput) }
            #expect(decoded.count <= maxOutput + slack, "a step of \(decoded.count) bytes")
            #expect(consumed >= 0 && consumed <= end - offset)
            #expect(consumed > 0 || !decoded.isEmpty || (offset == end && !decoder.hasPendingOutput), "a step without progress")
            output += decoded
            offset += consumed
        }
        try decoder.finish()
        return (output, steps)
    }

    static func decoder(_ header: String, ratio: Int = 0) throws -> ContentDecoder {
        try #require(ContentDecoder(contentEncoding: header, maxOutputBytes: 1 << 30, maxRatio: ratio))
    }

    @Test("8 MiB that compress 300-fold decode in steps of at most 32 KiB, every octet in order, whole input or in pieces")
    func highRatioInSteps() throws {
        let block = Array("a pattern that repeats, and repeats. ".utf8)
        let repeats = (8 << 20) / block.count
        let original = Array([[UInt8]](repeating: block, count: repeats).joined())
        let compressed = Zlib.compress(block, times: repeats, windowBits: Zlib.gzip)
        #expect(original.count / compressed.count > 300, "the body compresses \(original.count / compressed.count)-fold")
        for piece in [Int.max, 4096, 7] {
            let (output, steps) = try Self.decodeInSteps(Self.decoder("gzip"), compressed, piece: piece, maxOutput: 32 << 10)
            let same = output == original  // not in #expect: no diff of megabytes
            #expect(same, "pieces of \(piece)")
            #expect(steps >= original.count / (32 << 10))
        }
    }

    @Test("a step stops at its output bound with input left, which the next call takes: gzip members, zlib and raw deflate (its first byte apart), trailing garbage")
    func boundedStepsOfEveryForm() throws {
        let original = Zlib.sampleData(count: 300_000)
        let second = Zlib.sampleData(count: 20_000)
        let members = Zlib.compress(original, windowBits: Zlib.gzip) + Zlib.compress(second, windowBits: Zlib.gzip) + [0, 0, 0]
        for (piece, maxOutput) in [(Int.max, 1000), (4096, 333), (1, 64)] {
            #expect(try Self.decodeInSteps(Self.decoder("gzip"), members, piece: piece, maxOutput: maxOutput).output == original + second)
            for bits in [Zlib.zlib, Zlib.raw] {
                let deflated = Zlib.compress(original, windowBits: bits) + [9, 9]
                // The first two bytes of a deflate body arriving apart may decode a few hundred
                // bytes past the bound at once.
                let decoded = try Self.decodeInSteps(Self.decoder("deflate"), deflated, piece: piece, maxOutput: maxOutput, slack: 512)
                #expect(decoded.output == original, "window bits \(bits), pieces of \(piece), steps of \(maxOutput)")
            }
        }
    }

    @Test("a step that filled its bound reports that zlib may hold more; a call with empty input then takes what zlib holds without consuming anything, and the rest still decodes in order")
    func emptyInputTakesHeldOutput() throws {
        let original = Zlib.sampleData(count: 200_000) + [UInt8](repeating: 0, count: 100_000)
        let compressed = Zlib.compress(original, windowBits: Zlib.gzip)
        let decoder = try Self.decoder("gzip")
        var output: [UInt8] = []
        var offset = 0
        var heldSteps = 0
        for _ in 0..<1_000_000 where offset < compressed.count || decoder.hasPendingOutput {
            let (decoded, consumed) = try compressed[offset...].withUnsafeBytes { try decoder.decode($0, maxOutput: 700) }
            output += decoded
            offset += consumed
            guard decoder.hasPendingOutput else { continue }
            #expect(decoded.count == 700, "only a step that filled its bound leaves output held")
            let (held, none) = try decoder.decode(UnsafeRawBufferPointer(start: nil, count: 0), maxOutput: 700)
            #expect(none == 0 && held.count <= 700)
            if !held.isEmpty { heldSteps += 1 }
            output += held
        }
        try decoder.finish()
        #expect(output == original, "every octet, in order")
        #expect(heldSteps > 0, "no empty input ever took held output")
    }

    @Test("limits and corruption still stop a bounded decoding: the ratio past 64 KiB, corrupt data, truncation")
    func limitsStillApply() throws {
        let zeros = Zlib.compress([UInt8](repeating: 0, count: 1 << 20), times: 16, windowBits: Zlib.gzip)
        let limited = try Self.decoder("gzip", ratio: 100)
        #expect(throws: HTTP1Error.decompressionLimitExceeded) {
            _ = try Self.decodeInSteps(limited, zeros, piece: .max, maxOutput: 32 << 10)
        }
        var corrupt = Zlib.compress(Zlib.sampleData(count: 200_000), windowBits: Zlib.gzip)
        for index in stride(from: 5_000, to: 6_000, by: 7) { corrupt[index] ^= 0x5A }
        #expect(throws: HTTP1Error.decompressionFailed) {
            _ = try Self.decodeInSteps(Self.decoder("gzip"), corrupt, piece: 4096, maxOutput: 32 << 10)
        }
        let whole = Zlib.compress(Zlib.sampleData(count: 200_000), windowBits: Zlib.gzip)
        #expect(throws: HTTP1Error.decompressionFailed) {
            _ = try Self.decodeInSteps(Self.decoder("gzip"), Array(whole.dropLast(100)), piece: 4096, maxOutput: 32 << 10)
        }
    }
}

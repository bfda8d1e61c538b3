@testable import CourierHTTP2
import CourierTestServer
import Testing

@Suite("HPACK Huffman code")
struct HuffmanCodeTests {
    @Test("the table has 257 codes of 5 to 30 bits, EOS is thirty 1 bits")
    func shape() {
        #expect(HuffmanCode.table.count == 257)
        #expect(HuffmanCode.table.allSatisfy { (5...30).contains($0.length) && $0.code < (1 << UInt32($0.length)) })
        #expect(HuffmanCode.table[HuffmanCode.eos].code == 0x3fff_ffff)
        #expect(HuffmanCode.table[HuffmanCode.eos].length == 30)
    }

    @Test("the code is canonical: codes follow from the lengths in symbol order")
    func canonical() {
        let order = (0..<257).sorted {
            (HuffmanCode.table[$0].length, $0) < (HuffmanCode.table[$1].length, $1)
        }
        var expected: UInt64 = 0
        var previousLength = HuffmanCode.table[order[0]].length
        for (rank, symbol) in order.enumerated() {
            let entry = HuffmanCode.table[symbol]
            if rank > 0 {
                expected = (expected + 1) << UInt64(entry.length - previousLength)
            }
            previousLength = entry.length
            #expect(UInt64(entry.code) == expected, "symbol \(symbol)")
        }
    }

    @Test("no code is a prefix of another, and the code is complete (Kraft sum is exactly 1)")
    func prefixFree() {
        let codes = HuffmanCode.table.map { (UInt64($0.code), Int($0.length)) }
        for (i, a) in codes.enumerated() {
            for (j, b) in codes.enumerated() where i != j && a.1 <= b.1 {
                #expect(b.0 >> UInt64(b.1 - a.1) != a.0, "\(i) is a prefix of \(j)")
            }
        }
        // Sum of 2^(30 - length) must be 2^30 for a complete prefix code.
        let kraft = codes.reduce(UInt64(0)) { $0 + (UInt64(1) << UInt64(30 - $1.1)) }
        #expect(kraft == 1 << 30)
    }

    @Test("RFC 7541 C.4 and C.6 strings encode and decode byte for byte")
    func rfcStrings() throws {
        let cases: [(String, String)] = [
            ("www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"),
            ("no-cache", "a8eb 1064 9cbf"),
            ("custom-key", "25a8 49e9 5ba9 7d7f"),
            ("custom-value", "25a8 49e9 5bb8 e8b4 bf"),
            ("302", "6402"),
            ("307", "640e ff"),
            ("private", "aec3 771a 4b"),
            ("Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"),
            ("Mon, 21 Oct 2013 20:13:22 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff"),
            ("https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"),
            ("gzip", "9bd9 ab"),
            ("foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
             "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07"),
        ]
        for (text, encoded) in cases {
            var output: [UInt8] = []
            HuffmanCoder.encode(Array(text.utf8), into: &output)
            #expect(output == hex(encoded), "\(text)")
            #expect(HuffmanCoder.encodedLength(Array(text.utf8)) == output.count)
            var decoded: [UInt8] = []
            try HuffmanCoder.decode(hex(encoded), maxLength: 100, into: &decoded)
            #expect(decoded == Array(text.utf8))
        }
    }

    @Test("every octet round-trips alone and in random strings")
    func roundTrips() throws {
        for byte in 0...255 {
            var output: [UInt8] = []
            HuffmanCoder.encode([UInt8(byte)], into: &output)
            var decoded: [UInt8] = []
            try HuffmanCoder.decode(output, maxLength: 1, into: &decoded)
            #expect(decoded == [UInt8(byte)])
        }
        var random = SeededRandom(seed: 7541)
        for _ in 0..<500 {
            let input = (0..<Int.random(in: 0...80, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            var output: [UInt8] = []
            HuffmanCoder.encode(input, into: &output)
            var decoded: [UInt8] = []
            try HuffmanCoder.decode(output, maxLength: input.count, into: &decoded)
            #expect(decoded == input)
        }
    }

    @Test("padding longer than 7 bits is rejected (§5.2)")
    func longPadding() {
        // "0" is 00000; then 11 one bits: 8 bits of padding after a full byte of ones.
        #expect(throws: HPACKError.invalidHuffmanPadding) {
            var out: [UInt8] = []
            try HuffmanCoder.decode([0x07, 0xff], maxLength: 10, into: &out)
        }
        #expect(throws: HPACKError.invalidHuffmanPadding) {
            var out: [UInt8] = []
            try HuffmanCoder.decode([0xff], maxLength: 10, into: &out)
        }
    }

    @Test("padding that is not all ones is rejected (§5.2)")
    func zeroPadding() {
        // "0" (00000) then 000 padding.
        #expect(throws: HPACKError.invalidHuffmanPadding) {
            var out: [UInt8] = []
            try HuffmanCoder.decode([0x00], maxLength: 10, into: &out)
        }
    }

    @Test("an encoded EOS is rejected (§5.2)")
    func eos() {
        // Thirty 1 bits then two 1 bits of padding.
        #expect(throws: HPACKError.huffmanEOS) {
            var out: [UInt8] = []
            try HuffmanCoder.decode([0xff, 0xff, 0xff, 0xff], maxLength: 10, into: &out)
        }
    }

    @Test("decoding stops at the length limit")
    func lengthLimit() throws {
        var encoded: [UInt8] = []
        HuffmanCoder.encode(Array("Some string".utf8), into: &encoded)
        var out: [UInt8] = []
        try HuffmanCoder.decode(encoded, maxLength: 11, into: &out)
        #expect(out.count == 11)
        #expect(throws: HPACKError.stringTooLong) {
            var out: [UInt8] = []
            try HuffmanCoder.decode(encoded, maxLength: 10, into: &out)
        }
    }
}

@Suite("HPACK Huffman decoder against a bit-by-bit oracle")
struct HuffmanOracleTests {
    /// Walks the tree one bit at a time (the definition), independent of the nibble table.
    static func reference(_ bytes: [UInt8]) -> Result<[UInt8], HPACKError> {
        let children = HuffmanTree.shared.children
        var node = 0, depth = 0, onlyOnes = true
        var output: [UInt8] = []
        for byte in bytes {
            for shift in stride(from: 7, through: 0, by: -1) {
                let bit = Int(byte >> UInt8(shift)) & 1
                depth += 1
                onlyOnes = onlyOnes && bit == 1
                let next = children[node * 2 + bit]
                if next >= 0 { node = Int(next); continue }
                if -next - 1 == 256 { return .failure(.huffmanEOS) }
                output.append(UInt8(-next - 1))
                node = 0; depth = 0; onlyOnes = true
            }
        }
        return depth <= 7 && onlyOnes ? .success(output) : .failure(.invalidHuffmanPadding)
    }

    static func decoded(_ bytes: [UInt8]) -> Result<[UInt8], HPACKError> {
        var output: [UInt8] = []
        do {
            try HuffmanCoder.decode(bytes, maxLength: .max, into: &output)
            return .success(output)
        } catch {
            return .failure(error)
        }
    }

    @Test("every 1- and 2-octet input, and 20,000 random longer ones, decode exactly as the oracle says")
    func exhaustive() {
        var mismatches = 0
        for first in 0...255 {
            if Self.decoded([UInt8(first)]) != Self.reference([UInt8(first)]) { mismatches += 1 }
            for second in 0...255 {
                let input = [UInt8(first), UInt8(second)]
                if Self.decoded(input) != Self.reference(input) { mismatches += 1 }
            }
        }
        var random = SeededRandom(seed: 30)
        for _ in 0..<20_000 {
            // Mostly ones, so that long codes and EOS come up often.
            let input = (0..<Int.random(in: 3...12, using: &random)).map { _ in
                Bool.random(using: &random) ? 0xff : UInt8.random(in: 0...255, using: &random)
            }
            if Self.decoded(input) != Self.reference(input) { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }
}

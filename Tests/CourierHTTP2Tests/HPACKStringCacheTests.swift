@testable import CourierHTTP2
import CourierTestServer
import Testing

@Suite("HPACK decoded-string cache")
struct HPACKStringCacheTests {
    /// A field block of literals without indexing, each with a new name: what nginx sends for
    /// every response field that is not in the static table.
    private func literalBlock(_ fields: [(String, String)], huffman: HPACKHuffmanPolicy = .whenNotLonger) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in fields {
            block.append(0x00)
            HPACKString.encode(name, huffman: huffman, into: &block)
            HPACKString.encode(value, huffman: huffman, into: &block)
        }
        return block
    }

    @Test("a block sent again decodes to the same fields, and a changed value to the new one")
    func repeatedBlocks() throws {
        var decoder = HPACKDecoder()
        let first = [("server", "nginx/1.22.1"), ("date", "Thu, 26 Nov 2026 15:50:01 GMT"), ("x-tls", "TLSv1.3 TLS_AES_128_GCM_SHA256 .")]
        for _ in 0..<3 {
            #expect(try decoder.decode(literalBlock(first)) == first.map { field($0.0, $0.1, .withoutIndexing) })
        }
        let next = [("server", "nginx/1.22.1"), ("date", "Thu, 26 Nov 2026 15:50:02 GMT"), ("x-tls", "TLSv1.3 TLS_AES_128_GCM_SHA256 r")]
        #expect(try decoder.decode(literalBlock(next)) == next.map { field($0.0, $0.1, .withoutIndexing) })
        #expect(try decoder.decode(literalBlock(first)) == first.map { field($0.0, $0.1, .withoutIndexing) })
    }

    @Test("many more distinct literals than slots, twice over, raw and Huffman-coded, all decode to what was sent")
    func collisions() throws {
        var random = SeededRandom(seed: 7541)
        var decoder = HPACKDecoder()
        let fields = (0..<600).map { index -> (String, String) in
            let length = Int.random(in: 0...(index % 3 == 0 ? 200 : 40), using: &random)
            return ("x-\(index % 7)", String((0..<length).map { _ in "abcxyz019 -_/é".randomElement(using: &random)! }))
        }
        for round in 0..<2 {
            for chunk in stride(from: 0, to: fields.count, by: 10) {
                let part = Array(fields[chunk..<(chunk + 10)])
                let huffman: HPACKHuffmanPolicy = (chunk / 10 + round) % 2 == 0 ? .whenNotLonger : .never
                #expect(try decoder.decode(literalBlock(part, huffman: huffman)) == part.map { field($0.0, $0.1, .withoutIndexing) })
            }
        }
    }

    /// `count` distinct raw values whose literals fall in the same set of the cache.
    private func valuesInOneSet(_ count: Int) -> [String] {
        var bySet: [Int: [String]] = [:]
        for index in 0... {
            let value = "value-\(index)"
            let set = HPACKStringCache.setIndex(ArraySlice(Array(value.utf8)), isHuffman: false)
            bySet[set, default: []].append(value)
            if bySet[set]!.count == count { return bySet[set]! }
        }
        return []
    }

    @Test("two literals that hash to the same set are both remembered; a third evicts the one used less recently")
    func twoWays() throws {
        let values = valuesInOneSet(3)
        var decoder = HPACKDecoder()
        // The name is from the static table (index 58, user-agent), so only values are literals.
        func block(_ value: String) -> [UInt8] {
            var block: [UInt8] = [0x0f, 0x2b]
            HPACKString.encode(value, huffman: .never, into: &block)
            return block
        }
        func decode(_ value: String) throws {
            #expect(try decoder.decode(block(value)) == [field("user-agent", value, .withoutIndexing)])
        }
        try decode(values[0])
        try decode(values[1])
        #expect(decoder.strings.decodedCount == 2)
        for _ in 0..<3 {
            try decode(values[0])
            try decode(values[1])
        }
        #expect(decoder.strings.decodedCount == 2, "both values of one set are answered from the cache")
        // values[1] was used last: values[2] takes values[0]'s slot.
        try decode(values[2])
        try decode(values[1])
        #expect(decoder.strings.decodedCount == 3)
        try decode(values[0])
        #expect(decoder.strings.decodedCount == 4)
    }

    @Test("the same octets raw and Huffman-coded are two different strings")
    func huffmanBitIsPartOfTheKey() throws {
        var coded: [UInt8] = []
        HPACKString.encode("www.example.com", huffman: .whenNotLonger, into: &coded)
        #expect(coded[0] & 0x80 != 0)
        let octets = Array(coded.dropFirst())
        var raw: [UInt8] = [UInt8(octets.count)]
        raw += octets
        var decoder = HPACKDecoder()
        let huffmanField = try decoder.decode([0x00, 0x01, 0x61] + coded)
        let rawField = try decoder.decode([0x00, 0x01, 0x61] + raw)
        #expect(huffmanField == [field("a", "www.example.com", .withoutIndexing)])
        #expect(rawField == [field("a", String(decoding: octets, as: UTF8.self), .withoutIndexing)])
    }

    @Test("a remembered string still meets the length limit when the limit is lowered")
    func limitOnAHit() throws {
        var decoder = HPACKDecoder()
        let block = literalBlock([("x-a", "a value of twenty-six chars")])
        #expect(try decoder.decode(block) == [field("x-a", "a value of twenty-six chars", .withoutIndexing)])
        decoder.maxStringLength = 10
        #expect(throws: HPACKError.stringTooLong) { try decoder.decode(block) }
    }

    @Test("a value that is not UTF-8 is answered from the cache under a limit its octets meet (its text is longer: a replacement character per bad octet)")
    func limitCountsOctetsNotText() throws {
        var decoder = HPACKDecoder()
        decoder.maxStringLength = 100
        // user-agent (static index 58) with a raw 40-octet value of 0xFF.
        let block: [UInt8] = [0x0f, 0x2b, 40] + [UInt8](repeating: 0xff, count: 40)
        let expected = String(repeating: "\u{FFFD}", count: 40)
        for _ in 0..<3 {
            #expect(try decoder.decode(block) == [field("user-agent", expected, .withoutIndexing)])
        }
        #expect(expected.utf8.count > decoder.maxStringLength)
        #expect(decoder.strings.decodedCount == 1)
    }

    @Test("a truncated literal fails as before, whether or not the same octets were remembered")
    func truncated() throws {
        var decoder = HPACKDecoder()
        let block = literalBlock([("x-a", "remembered value")])
        _ = try decoder.decode(block)
        #expect(throws: HPACKError.truncated) { try decoder.decode(Array(block.dropLast())) }
    }
}

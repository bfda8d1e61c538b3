@testable import CourierHTTP2
import Testing

/// Every example of RFC 7541 Appendix C, decoded and encoded byte for byte.
@Suite("HPACK RFC 7541 Appendix C")
struct HPACKAppendixCTests {
    /// One block of a C.3 to C.6 sequence: its bytes, its fields, and the dynamic table after it.
    struct Step {
        let bytes: String
        let fields: [HPACKHeaderField]
        let table: [HPACKHeaderField]
        let tableSize: Int
    }

    @Test("C.1 integers: 10 in a 5-bit prefix, 1337 in a 5-bit prefix, 42 at an octet boundary")
    func integers() throws {
        let cases: [(Int, Int, [UInt8])] = [(10, 5, [0x0a]), (1337, 5, [0x1f, 0x9a, 0x0a]), (42, 8, [0x2a])]
        for (value, prefix, bytes) in cases {
            var output: [UInt8] = []
            HPACKInteger.encode(value, prefixBits: prefix, into: &output)
            #expect(output == bytes)
            var position = 0
            #expect(try HPACKInteger.decode(bytes, at: &position, prefixBits: prefix) == value)
            #expect(position == bytes.count)
        }
        // The pattern bits above the prefix are kept on encode and ignored on decode.
        var output: [UInt8] = []
        HPACKInteger.encode(1337, prefixBits: 5, firstByte: 0xe0, into: &output)
        #expect(output == [0xff, 0x9a, 0x0a])
        var position = 0
        #expect(try HPACKInteger.decode(output, at: &position, prefixBits: 5) == 1337)
    }

    @Test("C.2.1 literal with indexing")
    func literalWithIndexing() throws {
        let bytes = hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572")
        let fields = [field("custom-key", "custom-header")]
        try expectBothWays(bytes, fields, tableSize: 55, huffman: .never)
    }

    @Test("C.2.2 literal without indexing")
    func literalWithoutIndexing() throws {
        let bytes = hex("040c 2f73 616d 706c 652f 7061 7468")
        let fields = [field(":path", "/sample/path", .withoutIndexing)]
        try expectBothWays(bytes, fields, tableSize: 0, huffman: .never)
        var decoder = HPACKDecoder()
        #expect(try decoder.decode(bytes).first?.indexing == .withoutIndexing)
    }

    @Test("C.2.3 literal never indexed")
    func literalNeverIndexed() throws {
        let bytes = hex("1008 7061 7373 776f 7264 0673 6563 7265 74")
        let fields = [field("password", "secret", .never)]
        try expectBothWays(bytes, fields, tableSize: 0, huffman: .never)
        var decoder = HPACKDecoder()
        #expect(try decoder.decode(bytes).first?.indexing == .never)
    }

    @Test("C.2.4 indexed field")
    func indexedField() throws {
        try expectBothWays([0x82], [field(":method", "GET")], tableSize: 0, huffman: .never)
    }

    static let request1 = [field(":method", "GET"), field(":scheme", "http"), field(":path", "/"), field(":authority", "www.example.com")]
    static let request2 = request1 + [field("cache-control", "no-cache")]
    static let request3 = [
        field(":method", "GET"), field(":scheme", "https"), field(":path", "/index.html"),
        field(":authority", "www.example.com"), field("custom-key", "custom-value"),
    ]

    static func requestSteps(_ blocks: [String]) -> [Step] {
        [
            Step(bytes: blocks[0], fields: request1, table: [field(":authority", "www.example.com")], tableSize: 57),
            Step(bytes: blocks[1], fields: request2,
                 table: [field("cache-control", "no-cache"), field(":authority", "www.example.com")], tableSize: 110),
            Step(bytes: blocks[2], fields: request3,
                 table: [field("custom-key", "custom-value"), field("cache-control", "no-cache"), field(":authority", "www.example.com")],
                 tableSize: 164),
        ]
    }

    @Test("C.3 requests without Huffman coding")
    func requestsWithoutHuffman() throws {
        let steps = Self.requestSteps([
            "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
            "8286 84be 5808 6e6f 2d63 6163 6865",
            "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        ])
        try run(steps, tableSize: 4096, huffman: .never)
    }

    @Test("C.4 requests with Huffman coding")
    func requestsWithHuffman() throws {
        let steps = Self.requestSteps([
            "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
            "8286 84be 5886 a8eb 1064 9cbf",
            "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
        ])
        try run(steps, tableSize: 4096, huffman: .whenNotLonger)
    }

    static let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
    static let date1 = "Mon, 21 Oct 2013 20:13:21 GMT"
    static let date2 = "Mon, 21 Oct 2013 20:13:22 GMT"
    static let location = "https://www.example.com"

    static func responseSteps(_ blocks: [String]) -> [Step] {
        [
            Step(bytes: blocks[0],
                 fields: [field(":status", "302"), field("cache-control", "private"), field("date", date1), field("location", location)],
                 table: [field("location", location), field("date", date1), field("cache-control", "private"), field(":status", "302")],
                 tableSize: 222),
            Step(bytes: blocks[1],
                 fields: [field(":status", "307"), field("cache-control", "private"), field("date", date1), field("location", location)],
                 table: [field(":status", "307"), field("location", location), field("date", date1), field("cache-control", "private")],
                 tableSize: 222),
            Step(bytes: blocks[2],
                 fields: [
                    field(":status", "200"), field("cache-control", "private"), field("date", date2), field("location", location),
                    field("content-encoding", "gzip"), field("set-cookie", cookie),
                 ],
                 table: [field("set-cookie", cookie), field("content-encoding", "gzip"), field("date", date2)],
                 tableSize: 215),
        ]
    }

    @Test("C.5 responses without Huffman coding, table size 256, with evictions")
    func responsesWithoutHuffman() throws {
        let steps = Self.responseSteps([
            """
            4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
            2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
            6c65 2e63 6f6d
            """,
            "4803 3330 37c1 c0bf",
            """
            88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
            54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
            5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
            3d31
            """,
        ])
        try run(steps, tableSize: 256, huffman: .never)
    }

    @Test("C.6 responses with Huffman coding, table size 256, with evictions")
    func responsesWithHuffman() throws {
        let steps = Self.responseSteps([
            """
            4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
            2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3
            """,
            "4883 640e ffc1 c0bf",
            """
            88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
            77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
            9587 3160 65c0 03ed 4ee5 b106 3d50 07
            """,
        ])
        try run(steps, tableSize: 256, huffman: .whenNotLonger)
    }

    /// Decodes and encodes each step on one decoder and one encoder (the RFC's examples index
    /// set-cookie, so the encoder here has no never-indexed names), checking the bytes, the
    /// fields and both dynamic tables after every block.
    private func run(_ steps: [Step], tableSize: Int, huffman: HPACKHuffmanPolicy) throws {
        var decoder = HPACKDecoder(maxTableSize: tableSize)
        var encoder = HPACKEncoder(maxTableSize: tableSize, huffman: huffman, neverIndexedNames: [])
        for (number, step) in steps.enumerated() {
            let bytes = hex(step.bytes)
            #expect(try decoder.decode(bytes) == step.fields, "step \(number + 1)")
            #expect(decoder.dynamicTableEntries == step.table, "step \(number + 1)")
            #expect(decoder.dynamicTableSize == step.tableSize, "step \(number + 1)")
            var output: [UInt8] = []
            encoder.encode(step.fields, into: &output)
            #expect(output == bytes, "step \(number + 1)")
            #expect(encoder.dynamicTableSize == step.tableSize, "step \(number + 1)")
        }
    }

    private func expectBothWays(_ bytes: [UInt8], _ fields: [HPACKHeaderField], tableSize: Int, huffman: HPACKHuffmanPolicy) throws {
        var decoder = HPACKDecoder()
        #expect(try decoder.decode(bytes) == fields)
        #expect(decoder.dynamicTableSize == tableSize)
        var encoder = HPACKEncoder(huffman: huffman, neverIndexedNames: [])
        var output: [UInt8] = []
        encoder.encode(fields, into: &output)
        #expect(output == bytes)
        #expect(encoder.dynamicTableSize == tableSize)
    }
}

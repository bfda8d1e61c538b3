@testable import CourierHTTP2
import CourierTestServer
import Testing

@Suite("HPACK encoder and decoder")
struct HPACKCodecTests {
    @Test("random header lists round-trip through one encoder and one decoder, block after block")
    func roundTrips() throws {
        var random = SeededRandom(seed: 9113)
        var encoder = HPACKEncoder(maxTableSize: 512)
        var decoder = HPACKDecoder(maxTableSize: 512)
        let names = [":status", "content-type", "x-trace", "cookie", "authorization", "set-cookie", "server", "vary", "x-long"]
        for _ in 0..<300 {
            let fields = (0..<Int.random(in: 0...12, using: &random)).map { _ -> HPACKHeaderField in
                let name = names.randomElement(using: &random)!
                let length = name == "x-long" ? 600 : Int.random(in: 0...20, using: &random)
                let value = String((0..<length).map { _ in "abcxyz019 -_/é".randomElement(using: &random)! })
                return field(name, value)
            }
            var block: [UInt8] = []
            encoder.encode(fields, into: &block)
            #expect(try decoder.decode(block) == fields)
            #expect(decoder.dynamicTableEntries == (0..<encoder.dynamicTableCount).map { encoder.tableEntry($0) })
        }
    }

    @Test("authorization, proxy-authorization, cookie and set-cookie are sent never-indexed and never enter a table")
    func sensitiveFields() throws {
        var encoder = HPACKEncoder()
        var block: [UInt8] = []
        let fields = [
            field("authorization", "Bearer secret"), field("proxy-authorization", "Basic abc"),
            field("cookie", "a=b"), field("set-cookie", "c=d"), field("x-secret", "s", .never),
        ]
        encoder.encode(fields, into: &block)
        encoder.encode(fields, into: &block)
        #expect(encoder.dynamicTableCount == 0)
        var decoder = HPACKDecoder()
        let decoded = try decoder.decode(block)
        #expect(decoded == fields + fields)
        #expect(decoded.allSatisfy { $0.indexing == .never })
        #expect(decoder.dynamicTableCount == 0)
        // The first field names static entry 23 (authorization) in a 4-bit prefix: 0001 1111, 8.
        #expect(Array(block.prefix(2)) == [0x1f, 0x08])
    }

    @Test("an exact static match is one octet; a repeated literal becomes one octet from the dynamic table")
    func indexing() {
        var encoder = HPACKEncoder()
        var block: [UInt8] = []
        encoder.encode([field(":method", "GET")], into: &block)
        #expect(block == [0x82])
        block = []
        encoder.encode([field("x-a", "b")], into: &block)
        #expect(block.first == 0x40)
        block = []
        encoder.encode([field("x-a", "b")], into: &block)
        #expect(block == [0xbe])
    }

    @Test("Huffman is used only when not longer than the raw octets")
    func huffmanChoice() {
        var encoder = HPACKEncoder()
        var block: [UInt8] = []
        // "\u{1}" is 23 bits in Huffman, 1 octet raw: raw wins.
        encoder.encode([field("x-raw", "\u{1}", .withoutIndexing)], into: &block)
        #expect(block.suffix(2) == [0x01, 0x01])
        block = []
        encoder.encode([field("x-h", "aaaa", .withoutIndexing)], into: &block)
        // "aaaa" is 20 bits: 3 octets with the H bit.
        #expect(block.suffix(4).first == 0x83)
    }

    @Test("a field larger than the table is sent without indexing and leaves the table alone")
    func oversizedField() throws {
        var encoder = HPACKEncoder(maxTableSize: 100)
        var block: [UInt8] = []
        encoder.encode([field("x-a", "b"), field("x-big", String(repeating: "v", count: 200))], into: &block)
        #expect(encoder.dynamicTableCount == 1)
        var decoder = HPACKDecoder(maxTableSize: 100)
        #expect(try decoder.decode(block).count == 2)
        #expect(decoder.dynamicTableCount == 1)
    }

    @Test("the peer's smaller table size is announced at the start of the next block, smallest first")
    func encoderTableSizeUpdate() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        var block: [UInt8] = []
        encoder.encode([field("x-a", "b")], into: &block)
        _ = try decoder.decode(block)
        encoder.setPeerMaxTableSize(0)
        encoder.setPeerMaxTableSize(100)
        #expect(encoder.dynamicTableCount == 0)
        block = []
        encoder.encode([field("x-a", "b")], into: &block)
        // 001 00000 (size 0), then 001 11111 + 69 (size 100), then the literal.
        #expect(Array(block.prefix(3)) == [0x20, 0x3f, 0x45])
        #expect(try decoder.decode(block) == [field("x-a", "b")])
        #expect(decoder.dynamicTableMaxSize == 100)
        // A larger peer limit never grows the table past the encoder's own size.
        encoder.setPeerMaxTableSize(1 << 20)
        block = []
        encoder.encode([], into: &block)
        #expect(block == [0x3f, 0xe1, 0x1f])
    }

    @Test("a size update to zero empties the decoder's table")
    func decoderTableSizeUpdate() throws {
        var decoder = HPACKDecoder()
        _ = try decoder.decode(hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"))
        #expect(decoder.dynamicTableCount == 1)
        #expect(try decoder.decode([0x20]).isEmpty)
        #expect(decoder.dynamicTableCount == 0)
        #expect(decoder.dynamicTableSize == 0)
    }
}

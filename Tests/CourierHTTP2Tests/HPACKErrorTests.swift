@testable import CourierHTTP2
import Testing

@Suite("HPACK errors")
struct HPACKErrorTests {
    private func decode(_ bytes: [UInt8], _ decoder: HPACKDecoder = HPACKDecoder()) throws(HPACKError) {
        var decoder = decoder
        _ = try decoder.decode(bytes)
    }

    @Test("index 0 and an index past the dynamic table are invalid")
    func invalidIndex() {
        #expect(throws: HPACKError.invalidIndex) { try decode([0x80]) }
        #expect(throws: HPACKError.invalidIndex) { try decode([0xbe]) }
        // A literal naming index 70 with an empty table.
        #expect(throws: HPACKError.invalidIndex) { try decode([0x7f, 0x07, 0x00]) }
    }

    @Test("a block cut inside an integer, a string length or a string is truncated")
    func truncated() {
        #expect(throws: HPACKError.truncated) { try decode([0xff]) }
        #expect(throws: HPACKError.truncated) { try decode([0x40]) }
        #expect(throws: HPACKError.truncated) { try decode([0x40, 0x03, 0x61]) }
        #expect(throws: HPACKError.truncated) { try decode([0x40, 0x01, 0x61]) }
    }

    @Test("an integer over 2^32 - 1, or with too many continuation octets, overflows")
    func integerOverflow() {
        #expect(throws: HPACKError.integerOverflow) { try decode([0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]) }
        #expect(throws: HPACKError.integerOverflow) { try decode([0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]) }
    }

    @Test("a string longer than the limit is rejected, raw or Huffman")
    func stringTooLong() {
        let decoder = HPACKDecoder(maxStringLength: 4)
        #expect(throws: HPACKError.stringTooLong) { try decode([0x40, 0x05] + Array("abcde".utf8) + [0x00], decoder) }
        #expect(throws: HPACKError.stringTooLong) { try decode([0x40, 0x01, 0x61, 0x05] + Array("abcde".utf8), decoder) }
        var huffman: [UInt8] = []
        HuffmanCoder.encode(Array("abcde".utf8), into: &huffman)
        #expect(throws: HPACKError.stringTooLong) { try decode([0x40, 0x80 | UInt8(huffman.count)] + huffman + [0x00], decoder) }
        #expect(throws: Never.self) { try decode([0x40, 0x04] + Array("abcd".utf8) + [0x00], decoder) }
    }

    @Test("bad Huffman padding and an encoded EOS are distinct errors inside a block")
    func huffmanErrors() {
        #expect(throws: HPACKError.invalidHuffmanPadding) { try decode([0x40, 0x81, 0x00, 0x00]) }
        #expect(throws: HPACKError.huffmanEOS) { try decode([0x40, 0x84, 0xff, 0xff, 0xff, 0xff, 0x00]) }
    }

    @Test("an HPACK bomb (one large entry referenced many times) hits the header list limit, and the table stays in step")
    func headerListBomb() throws {
        var decoder = HPACKDecoder(maxHeaderListSize: 16_384)
        var block: [UInt8] = []
        var encoder = HPACKEncoder()
        encoder.encode([field("x-bomb", String(repeating: "b", count: 4000))], into: &block)
        block += [UInt8](repeating: 0xbe, count: 1000)
        #expect(throws: HPACKError.headerListTooLarge) { _ = try decoder.decode(block) }
        // The entry was still added, so the next block that references it decodes.
        #expect(decoder.dynamicTableCount == 1)
        #expect(try decoder.decode([0xbe]).first?.name == "x-bomb")
    }

    @Test("a size update above the advertised limit is rejected")
    func tableSizeUpdateTooLarge() {
        #expect(throws: HPACKError.tableSizeUpdateTooLarge) { try decode([0x3f, 0xe2, 0x1f]) }
        #expect(throws: Never.self) { try decode([0x3f, 0xe1, 0x1f]) }
    }

    @Test("a size update after a field is misplaced")
    func misplacedTableSizeUpdate() {
        #expect(throws: HPACKError.misplacedTableSizeUpdate) { try decode([0x82, 0x20]) }
    }

    @Test("after the limit is lowered, a block without a size update first is rejected")
    func missingTableSizeUpdate() throws {
        var decoder = HPACKDecoder()
        decoder.setMaxTableSizeLimit(1024)
        #expect(throws: HPACKError.missingTableSizeUpdate) { try decode([0x82], decoder) }
        #expect(throws: HPACKError.tableSizeUpdateTooLarge) { try decode([0x3f, 0xe2, 0x07, 0x82], decoder) }
        #expect(try decoder.decode([0x3f, 0xe1, 0x07, 0x82]) == [field(":method", "GET")])
        #expect(try decoder.decode([0x82]) == [field(":method", "GET")])
    }

    @Test("every kind has a distinct description, and details never change equality")
    func descriptions() {
        let all: [HPACKError] = [
            .truncated, .integerOverflow, .invalidIndex, .stringTooLong, .headerListTooLarge,
            .invalidHuffmanPadding, .huffmanEOS, .tableSizeUpdateTooLarge, .misplacedTableSizeUpdate,
            .missingTableSizeUpdate,
        ]
        #expect(Set(all.map(\.description)).count == all.count)
        #expect(HPACKError.invalidIndex.with("index 99") == .invalidIndex)
        #expect(HPACKError.invalidIndex.with("index 99").description.hasSuffix(": index 99"))
    }
}

// libFuzzer target: CourierHTTP2's HPACKDecoder and HPACKEncoder (see Fuzz/README.md).
import CourierHTTP2

/// The input is one or more field blocks for one decoder, cut at pseudo-random points taken
/// from the input's hash (HPACK blocks are not incremental: where a block ends is part of the
/// input). Half the inputs use small limits so that short inputs reach them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let seed = inputHash(input)
    var random = SplitMix64(seed: seed)
    let small = seed & 1 == 0
    let maxListSize = small ? 64 + random.next(upTo: 512) : 65_536
    let maxString = small ? 1 + random.next(upTo: 64) : 65_536
    let tableSize = small ? random.next(upTo: 300) : 4096
    var decoder = HPACKDecoder(maxTableSize: tableSize, maxHeaderListSize: maxListSize, maxStringLength: maxString)
    let ways = splits(count: size, seed: seed, byteByByteUpTo: 0)
    let cuts = ways[random.next(upTo: ways.count - 1)]
    for (_, piece) in pieces(input, cuts: cuts) {
        let block = Array(piece)
        let fields: [HPACKHeaderField]
        do {
            fields = try decoder.decode(block)
        } catch {
            if error == .headerListTooLarge { continue }
            break
        }
        invariant(decoder.dynamicTableSize <= decoder.dynamicTableMaxSize, "table over its maximum")
        invariant(decoder.dynamicTableMaxSize <= tableSize, "table maximum over the advertised limit")
        invariant(fields.reduce(0) { $0 + $1.size } <= maxListSize, "a field list over the limit was returned")
        // Literals are bounded by the limit (tripled: each invalid UTF-8 octet becomes U+FFFD);
        // names and values from the static table are up to 27 octets.
        let bound = Swift.max(maxString * 3, 27)
        for field in fields {
            invariant(field.name.utf8.count <= bound && field.value.utf8.count <= bound, "a string over the limit was returned")
        }
        // Encode then decode gives the same list, whatever the Huffman choice.
        for huffman in [HPACKHuffmanPolicy.never, .whenNotLonger] {
            var encoder = HPACKEncoder(maxTableSize: 256, huffman: huffman)
            var roundTrip = HPACKDecoder(maxTableSize: 256, maxHeaderListSize: .max, maxStringLength: .max)
            var encoded: [UInt8] = []
            encoder.encode(fields, into: &encoded)
            encoder.encode(fields, into: &encoded)
            let decoded = try? roundTrip.decode(encoded)
            invariant(decoded == fields + fields, "encode then decode changed the field list")
            invariant(decoded.map { zip($0, fields + fields).allSatisfy { a, b in a.indexing == .never || b.indexing != .never } } ?? false,
                      "a never-indexed field lost its representation")
        }
    }
    return 0
}

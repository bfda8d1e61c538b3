import CourierHTTP1
import Testing

@Suite("ChunkedEncoder")
struct ChunkedEncoderTests {
    @Test("frames a chunk with a lowercase hex size")
    func frames() {
        let data = [UInt8](repeating: 0x7A, count: 26)
        #expect(ChunkedEncoder.chunk(data) == Wire.bytes("1a\r\n") + data + Wire.bytes("\r\n"))
        #expect(data.withUnsafeBytes { ChunkedEncoder.chunk($0) } == ChunkedEncoder.chunk(data))
        #expect(ChunkedEncoder.chunkHeader(count: 4096) == Wire.bytes("1000\r\n"))
        #expect(ChunkedEncoder.chunkHeader(count: 1) == Wire.bytes("1\r\n"))
        #expect(ChunkedEncoder.chunkHeader(count: Int.max) == Wire.bytes("7fffffffffffffff\r\n"))
        #expect(ChunkedEncoder.lastChunk == Wire.bytes("0\r\n\r\n"))
    }

    @Test("empty data produces nothing (an empty chunk would end the body)")
    func emptyChunk() {
        #expect(ChunkedEncoder.chunk([UInt8]()).isEmpty)
        #expect(ChunkedEncoder.chunk(UnsafeRawBufferPointer(start: nil, count: 0)).isEmpty)
    }

    @Test("encoded chunks and trailers decode back")
    func roundTrip() throws {
        let pieces = [Wire.bytes("first"), Zlib.sampleData(count: 70_000), [], Wire.bytes("x")]
        var wire: [UInt8] = []
        for piece in pieces { wire += ChunkedEncoder.chunk(piece) }
        wire += ChunkedEncoder.lastChunk(trailers: [HTTPField(name: "X-Sum", value: "42")])
        for step in [Int.max, 999] {
            let result = try Wire.decodeBody(wire, framing: .chunked, step: step)
            #expect(result.complete)
            #expect(result.consumed == wire.count)
            #expect(result.payload == pieces.flatMap { $0 })
            #expect(result.decoder.trailers == [HTTPField(name: "X-Sum", value: "42")])
        }
    }
}

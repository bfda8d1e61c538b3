import CourierHTTP1
import Testing

/// Inputs that the fuzz targets under `Fuzz/` found, one test per finding, named after it.
@Suite("Fuzz regressions (CourierHTTP1)")
struct FuzzRegressionTests {
    @Test("ChunkedBodyFuzzer payloadBytes counts the chunk data emitted before a framing error")
    func payloadBytesBeforeFramingError() {
        // Found by the ChunkedBodyFuzzer: "hello" was emitted, then the missing CRLF threw,
        // and payloadBytes stayed 0 although the doc promises the count of emitted bytes.
        let wire = Wire.bytes("5\r\nhelloX0\r\n\r\n")
        for step in [1, 4, wire.count] {
            var decoder = BodyDecoder(framing: .chunked)
            var emitted: [UInt8] = []
            var offset = 0
            var failure: (any Error)?
            while offset < wire.count, failure == nil {
                let end = min(offset + step, wire.count)
                do {
                    let result = try wire[offset..<end].withUnsafeBytes { piece in
                        try decoder.decode(piece) { emitted.append(contentsOf: $0) }
                    }
                    offset += result.consumed
                } catch {
                    failure = error
                }
            }
            #expect(failure as? HTTP1Error == .invalidChunkFraming, "step \(step)")
            #expect(emitted == Wire.bytes("hello"), "step \(step)")
            #expect(decoder.payloadBytes == emitted.count, "step \(step)")
        }
    }
}

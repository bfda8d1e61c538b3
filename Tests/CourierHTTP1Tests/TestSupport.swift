import CourierHTTP1
import CZlib

/// Helpers shared by the CourierHTTP1 suites.
enum Wire {
    /// The UTF-8 bytes of `text`.
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Feeds `bytes` to a response parser in pieces of `step` bytes.
    /// - Returns: The head and the absolute offset where the body starts, or `nil`.
    static func parseResponse(_ bytes: [UInt8], step: Int = .max, limits: HTTP1Limits = HTTP1Limits()) throws -> (HTTPResponseHead, Int)? {
        var parser = ResponseHeadParser(limits: limits)
        var offset = 0
        while offset < bytes.count {
            let end = offset + Swift.min(step, bytes.count - offset)
            let result = try bytes[offset..<end].withUnsafeBytes { try parser.parse($0) }
            if let result { return (result.head, offset + result.consumed) }
            offset = end
        }
        return nil
    }

    /// Feeds `bytes` to a request parser in pieces of `step` bytes.
    /// - Returns: The head and the absolute offset where the body starts, or `nil`.
    static func parseRequest(_ bytes: [UInt8], step: Int = .max, limits: HTTP1Limits = HTTP1Limits()) throws -> (HTTPRequestHead, Int)? {
        var parser = RequestHeadParser(limits: limits)
        var offset = 0
        while offset < bytes.count {
            let end = offset + Swift.min(step, bytes.count - offset)
            let result = try bytes[offset..<end].withUnsafeBytes { try parser.parse($0) }
            if let result { return (result.head, offset + result.consumed) }
            offset = end
        }
        return nil
    }

    /// Decodes a whole body fed in pieces of `step` bytes, stopping when the body completes.
    /// - Returns: The payload, the absolute number of bytes consumed, and completion.
    static func decodeBody(_ bytes: [UInt8], framing: BodyFraming, step: Int = .max,
                           limits: HTTP1Limits = HTTP1Limits()) throws -> (payload: [UInt8], consumed: Int, complete: Bool, decoder: BodyDecoder) {
        var decoder = BodyDecoder(framing: framing, limits: limits)
        var payload: [UInt8] = []
        var offset = 0
        var complete = decoder.isComplete
        while offset < bytes.count && !complete {
            let end = offset + Swift.min(step, bytes.count - offset)
            let (consumed, done) = try bytes[offset..<end].withUnsafeBytes { buffer in
                try decoder.decode(buffer) { payload.append(contentsOf: $0) }
            }
            offset += consumed
            complete = done
        }
        return (payload, offset, complete, decoder)
    }
}

/// Compression helpers for the tests, straight over zlib.
enum Zlib {
    /// gzip wrapper window bits.
    static let gzip: Int32 = 15 + 16
    /// zlib wrapper window bits.
    static let zlib: Int32 = 15
    /// Raw deflate window bits.
    static let raw: Int32 = -15

    /// Compresses `input` repeated `times` times (so that huge inputs need no huge buffer).
    static func compress(_ input: [UInt8], times: Int = 1, windowBits: Int32, level: Int32 = 6) -> [UInt8] {
        var stream = z_stream()
        let initStatus = deflateInit2_(&stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY,
                                      ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        precondition(initStatus == Z_OK, "deflateInit2 failed")
        defer { deflateEnd(&stream) }
        var output: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        var source = input
        for round in 0..<times {
            let flush = round == times - 1 ? Z_FINISH : Z_NO_FLUSH
            source.withUnsafeMutableBufferPointer { inBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                var status: Int32
                repeat {
                    status = scratch.withUnsafeMutableBufferPointer { outBuffer in
                        stream.next_out = outBuffer.baseAddress
                        stream.avail_out = UInt32(outBuffer.count)
                        let status = deflate(&stream, flush)
                        output.append(contentsOf: outBuffer[0..<(outBuffer.count - Int(stream.avail_out))])
                        return status
                    }
                } while stream.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END)
            }
        }
        return output
    }

    /// Pseudo-random but compressible test data.
    static func sampleData(count: Int) -> [UInt8] {
        var state: UInt32 = 0x1234_5678
        var words = ["alpha ", "beta ", "gamma ", "delta ", "courier ", "chunk ", "\n"].map { Array($0.utf8) }
        words.append([0, 255, 128])
        var out: [UInt8] = []
        out.reserveCapacity(count + 16)
        while out.count < count {
            state = state &* 1_103_515_245 &+ 12345
            out.append(contentsOf: words[Int(state >> 16) % words.count])
            if state & 0x100 != 0 { out.append(UInt8(truncatingIfNeeded: state >> 8)) }
        }
        return Array(out.prefix(count))
    }
}

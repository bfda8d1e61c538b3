import CourierHTTP1

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

    /// Decodes a whole body fed in pieces of `step` bytes.
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
            if consumed < end - (offset - consumed) && !done { break }
        }
        return (payload, offset, complete, decoder)
    }
}

import CourierHTTP1
import Foundation

/// The content decoding of a streamed response body, done as its reader takes the bytes: the
/// encoded bytes wait here, and each ``next()`` decodes one bounded step of them.
///
/// A reader that pauses thus holds at most its buffer plus one step of decoded bytes, whatever
/// the compression ratio; the encoded bytes waiting here are what the connection read before
/// it saw the pause (one read, or one HTTP/2 stream window). ``NativeExchange`` owns it and
/// feeds it; the connection hands it the encoded body as it arrives.
///
/// A value with no I/O; the ``ContentDecoder`` it holds is a class (zlib's state), so only one
/// copy may be used.
struct StreamedBodyDecoding {
    /// The most decoded bytes one ``next()`` returns.
    static let step = 32 << 10

    /// Removes the content coding.
    private let decoder: ContentDecoder
    /// Encoded bytes received; those before ``start`` were decoded.
    private var pending: [UInt8] = []
    /// Where the encoded bytes not decoded yet start in ``pending``.
    private var start = 0

    /// Decodes with `decoder`, which has seen no input yet.
    init(decoder: ContentDecoder) {
        self.decoder = decoder
    }

    /// The encoded bytes waiting to be decoded.
    var pendingEncodedCount: Int { pending.count - start }

    /// Whether everything received was decoded and handed out.
    var isDrained: Bool { start == pending.count && !decoder.hasPendingOutput }

    /// Keeps the next encoded bytes of the body, to decode as the reader asks.
    mutating func receive(_ bytes: Data) {
        if start > 0 {
            pending.removeFirst(start)
            start = 0
        }
        pending.append(contentsOf: bytes)
    }

    /// Decodes the next step: at most ``step`` bytes (a few hundred more in one corner, see
    /// ``ContentDecoder/decode(_:maxOutput:)``).
    /// - Returns: the decoded bytes, never empty; `nil` when everything received was decoded.
    /// - Throws: the decoder's `HTTP1Error` (corrupt data, a limit passed).
    mutating func next() throws(HTTP1Error) -> Data? {
        while !isDrained {
            let (output, consumed) = try decodeStep()
            start += consumed
            if start == pending.count {
                pending = []
                start = 0
            }
            if !output.isEmpty { return Data(output) }
            // Each round consumes input or ends zlib's held output; one that does neither would
            // spin, so it is refused (the decoder reports no progress itself).
            if consumed == 0 { throw .decompressionFailed }
        }
        return nil
    }

    /// Decodes one step of the waiting encoded bytes (which may be none: zlib's held output).
    private func decodeStep() throws(HTTP1Error) -> (output: [UInt8], consumed: Int) {
        let result = pending.withUnsafeBytes { all -> Result<(output: [UInt8], consumed: Int), HTTP1Error> in
            Result { () throws(HTTP1Error) in
                try decoder.decode(UnsafeRawBufferPointer(rebasing: all[start...]), maxOutput: Self.step)
            }
        }
        return try result.get()
    }

    /// Checks that the coded body ended properly, once everything received was decoded.
    /// - Throws: `.decompressionFailed` when it is truncated (or not drained), or the earlier error.
    func finish() throws(HTTP1Error) {
        guard isDrained else { throw .decompressionFailed }
        try decoder.finish()
    }
}

/// Removes a message body's framing incrementally: a fixed length, the chunked coding, or
/// everything until the connection closes.
///
/// Feed each received buffer to `decode(_:emit:)`; payload bytes are passed to `emit` as
/// slices of that buffer (never copied). Bytes after the end of the body are left unconsumed:
/// they belong to the next message.
public struct BodyDecoder: Sendable {
    private enum Mode: Sendable {
        case none, length, chunked, untilClose
    }

    private let mode: Mode
    /// The declared length (`.contentLength` only).
    private let expected: Int
    /// Bytes still to come (`.contentLength` only).
    private var remaining: Int
    private var chunked: ChunkedBodyDecoder
    /// Whether the whole body has been decoded.
    public private(set) var isComplete: Bool
    /// The number of payload bytes passed to `emit` so far.
    public private(set) var payloadBytes = 0

    /// Creates a decoder.
    /// - Parameters:
    ///   - framing: The body's framing, from `BodyFraming.forResponse` / `forRequest`.
    ///   - limits: The limits for chunk-size lines and trailers. Default: `HTTP1Limits()`.
    public init(framing: BodyFraming, limits: HTTP1Limits = HTTP1Limits()) {
        chunked = ChunkedBodyDecoder(limits: limits)
        switch framing {
        case .none:
            mode = .none
            expected = 0
        case .contentLength(let length):
            mode = .length
            expected = Swift.max(length, 0)
        case .chunked:
            mode = .chunked
            expected = 0
        case .untilClose:
            mode = .untilClose
            expected = 0
        }
        remaining = expected
        isComplete = mode == .none || (mode == .length && expected == 0)
    }

    /// The trailer fields of a chunked body, once it is complete; empty otherwise.
    public var trailers: [HTTPField] { chunked.trailers }

    /// Decodes as much of `bytes` as belongs to this body.
    /// - Parameters:
    ///   - bytes: The next received bytes.
    ///   - emit: Called with each run of payload bytes, a slice of `bytes` valid only during
    ///     the call. An error it throws stops decoding and is rethrown.
    /// - Returns: How many bytes of `bytes` belonged to the body (the rest is the next
    ///   message), and whether the body is now complete. After completion every call returns
    ///   `(0, true)`.
    /// - Throws: `HTTP1Error` `.invalidChunkSize`, `.invalidChunkFraming`,
    ///   `.trailersTooLarge`, `.tooManyFields`, `.invalidHeaderField`,
    ///   `.obsoleteLineFolding` (chunked bodies), or any error thrown by `emit`.
    public mutating func decode(
        _ bytes: UnsafeRawBufferPointer,
        emit: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> (consumed: Int, isComplete: Bool) {
        if isComplete { return (0, true) }
        switch mode {
        case .none:
            return (0, true)
        case .length:
            let take = Swift.min(remaining, bytes.count)
            guard take > 0 else { return (0, false) }
            remaining -= take
            payloadBytes += take
            isComplete = remaining == 0
            try emit(UnsafeRawBufferPointer(rebasing: bytes[..<take]))
            return (take, isComplete)
        case .untilClose:
            guard !bytes.isEmpty else { return (0, false) }
            payloadBytes &+= bytes.count
            try emit(bytes)
            return (bytes.count, false)
        case .chunked:
            var emitted = 0
            // Also when decoding stops with an error: the runs emitted before it count.
            defer { payloadBytes &+= emitted }
            let consumed = try chunked.decode(bytes) { run in
                emitted &+= run.count
                try emit(run)
            }
            isComplete = chunked.isComplete
            return (consumed, isComplete)
        }
    }

    /// Tells the decoder that the peer closed the connection.
    ///
    /// A close-delimited body is complete now; a length-delimited or chunked body that is not
    /// complete was truncated.
    /// - Throws: `.truncatedBody` when the body was incomplete.
    public mutating func finishOnClose() throws(HTTP1Error) {
        if isComplete { return }
        switch mode {
        case .none:
            return
        case .untilClose:
            isComplete = true
        case .length:
            throw HTTP1Error.truncatedBody.with("received \(expected - remaining) of \(expected) bytes")
        case .chunked:
            throw HTTP1Error.truncatedBody.with("chunked body ended \(chunked.progressDescription)")
        }
    }
}

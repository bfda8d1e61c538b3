/// The chunked transfer coding's decoder (RFC 9112 §7.1): a byte-driven state machine with
/// no recursion; chunk data is passed on in runs, never byte by byte.
///
/// Strict framing: every line of the coding (chunk-size lines, the CRLF after chunk data, the
/// trailer section) must end with CRLF; a bare LF is `.invalidChunkFraming`. Chunk extensions
/// (`;name=value`, optionally preceded by whitespace) are accepted and ignored.
struct ChunkedBodyDecoder: Sendable {
    private enum State: Sendable {
        case size, sizeWhitespace, chunkExtension, sizeLF, data, dataCR, dataLF, trailers, done
    }

    private var state = State.size
    /// The chunk size being read (at most 16 hexadecimal digits).
    private var size: UInt64 = 0
    private var digits = 0
    /// Bytes of the current chunk-size line so far.
    private var lineBytes = 0
    /// Chunk data bytes still to come in the current chunk.
    private var remaining = 0
    private let maxLineBytes: Int
    private var trailerSection: HeadAccumulator
    /// The trailer fields, once the body is complete.
    private(set) var trailers: [HTTPField] = []

    init(limits: HTTP1Limits) {
        maxLineBytes = limits.maxChunkLineBytes
        trailerSection = HeadAccumulator(
            maxBytes: limits.maxTrailerBytes, maxLines: limits.maxFieldCount,
            skipLeadingEmptyLines: false, strictCRLF: true,
            tooLarge: .trailersTooLarge, bareLineFeed: .invalidChunkFraming)
    }

    /// Whether the last chunk and the trailer section have been read.
    var isComplete: Bool { state == .done }

    /// Decodes as much of `bytes` as belongs to the body.
    /// - Returns: The bytes consumed; fewer than `bytes.count` only once the body is complete.
    mutating func decode(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        var i = 0
        let count = bytes.count
        while i < count {
            switch state {
            case .data:
                let take = Swift.min(remaining, count - i)
                remaining -= take
                if remaining == 0 { state = .dataCR }
                try emit(UnsafeRawBufferPointer(rebasing: bytes[i..<(i + take)]))
                i += take
            case .trailers:
                let rest = UnsafeRawBufferPointer(rebasing: bytes[i...])
                guard let outcome = try trailerSection.feed(rest, parse: ChunkedBodyDecoder.parseTrailers) else {
                    return count
                }
                trailers = outcome.result
                state = .done
                return i + outcome.consumed
            case .done:
                return i
            default:
                try step(bytes[i])
                i += 1
            }
        }
        return i
    }

    /// Advances the line states by one byte.
    private mutating func step(_ byte: UInt8) throws(HTTP1Error) {
        switch state {
        case .size, .sizeWhitespace, .chunkExtension, .sizeLF:
            lineBytes += 1
            if lineBytes > maxLineBytes {
                throw HTTP1Error.invalidChunkFraming.with("chunk-size line longer than \(maxLineBytes) bytes")
            }
        default:
            break
        }
        switch state {
        case .size:
            if let value = HTTPSyntax.hexValue(byte) {
                digits += 1
                guard digits <= 16 else {
                    throw HTTP1Error.invalidChunkSize.with("more than 16 hexadecimal digits")
                }
                size = (size << 4) | UInt64(value)
                return
            }
            guard digits > 0 else { throw unexpected(byte) }
            switch byte {
            case 0x3B: state = .chunkExtension
            case HTTPSyntax.space, HTTPSyntax.htab: state = .sizeWhitespace
            case HTTPSyntax.cr: state = .sizeLF
            case HTTPSyntax.lf: throw HTTP1Error.invalidChunkFraming.with("bare LF after the chunk size")
            default: throw unexpected(byte)
            }
        case .sizeWhitespace:
            switch byte {
            case HTTPSyntax.space, HTTPSyntax.htab: break
            case 0x3B: state = .chunkExtension
            case HTTPSyntax.cr: state = .sizeLF
            default: throw unexpected(byte)
            }
        case .chunkExtension:
            if byte == HTTPSyntax.cr {
                state = .sizeLF
            } else if !HTTPSyntax.isFieldValueByte(byte) {
                throw HTTP1Error.invalidChunkFraming.with("control byte in a chunk extension")
            }
        case .sizeLF:
            guard byte == HTTPSyntax.lf else {
                throw HTTP1Error.invalidChunkFraming.with("CR without LF in a chunk-size line")
            }
            guard size <= UInt64(Int.max) else {
                throw HTTP1Error.invalidChunkSize.with("chunk size does not fit in an Int")
            }
            remaining = Int(size)
            state = remaining == 0 ? .trailers : .data
            size = 0
            digits = 0
            lineBytes = 0
        case .dataCR:
            guard byte == HTTPSyntax.cr else {
                throw HTTP1Error.invalidChunkFraming.with("chunk data not followed by CRLF")
            }
            state = .dataLF
        case .dataLF:
            guard byte == HTTPSyntax.lf else {
                throw HTTP1Error.invalidChunkFraming.with("chunk data not followed by CRLF")
            }
            state = .size
        case .data, .trailers, .done:
            break
        }
    }

    /// An `.invalidChunkSize` error naming one offending byte.
    private func unexpected(_ byte: UInt8) -> HTTP1Error {
        withUnsafeBytes(of: byte) { HTTP1Error.invalidChunkSize.with(bytes: $0) }
    }

    /// Where the decoder stopped, for a truncation error's detail.
    var progressDescription: String {
        switch state {
        case .data: "inside chunk data, \(remaining) bytes missing"
        case .trailers: "inside the trailer section"
        case .done: "complete"
        default: "inside a chunk-size line"
        }
    }

    /// Parses a complete trailer section.
    static func parseTrailers(_ section: UnsafeRawBufferPointer, lines: Int) throws(HTTP1Error) -> [HTTPField] {
        var cursor = LineCursor(section)
        return try FieldLineParser.parseFields(&cursor, capacity: lines)
    }
}

import CZlib

/// Decodes a `Content-Encoding` of `gzip` or `deflate` with zlib, incrementally and within
/// limits, so that a compression bomb stops early instead of exhausting memory.
///
/// - `gzip` (and `x-gzip`): concatenated members are decoded one after another; bytes after a
///   member that do not start another member are ignored as trailing garbage (as gzip(1) does).
/// - `deflate`: both the zlib-wrapped form (RFC 1950, what the RFC means) and raw deflate
///   (RFC 1951, what some servers send) are accepted; the form is chosen from the first two
///   bytes (a valid zlib header means zlib). Bytes after the end of the stream are ignored.
///
/// Not `Sendable`: a decoder belongs to one connection and is used from one thread at a time.
public final class ContentDecoder {
    /// A supported content coding.
    public enum Encoding: Sendable, Equatable {
        /// `gzip` / `x-gzip` (RFC 1952).
        case gzip
        /// `deflate`: zlib-wrapped (RFC 1950) or raw (RFC 1951).
        case deflate
    }

    private enum State {
        /// `deflate` before its first two bytes are known.
        case sniffing
        case inflating
        /// `gzip` between members.
        case memberEnded
        case finished
        case failed
    }

    /// The coding this decoder removes.
    public let encoding: Encoding
    private let maxOutputBytes: Int
    private let maxRatio: Int
    private let stream: UnsafeMutablePointer<z_stream>
    private let scratch: UnsafeMutableRawPointer
    private static let scratchSize = 32 * 1024
    /// Output below this size is never judged by its ratio (tiny bodies compress very well).
    private static let ratioGrace = 64 * 1024
    private var state: State
    /// The first byte of a `deflate` body whose second byte has not arrived yet.
    private var pending: [UInt8] = []
    private var totalIn = 0
    private var totalOut = 0
    /// The last inflate step filled the output it was allowed: zlib may hold more.
    private var outputPending = false
    private var failure = HTTP1Error.decompressionFailed

    /// The coding named by a `Content-Encoding` value, ignoring case and whitespace.
    /// - Parameter headerValue: e.g. `gzip`.
    /// - Returns: `.gzip` for `gzip`/`x-gzip`, `.deflate` for `deflate`; `nil` for `identity`,
    ///   empty, unknown or multiple codings.
    public static func encoding(for headerValue: String) -> Encoding? {
        HTTPSyntax.withUTF8(headerValue) { bytes in
            let value = HTTPSyntax.trimmed(bytes)
            if HTTPSyntax.equalsIgnoringCase(value, lowercased: "gzip")
                || HTTPSyntax.equalsIgnoringCase(value, lowercased: "x-gzip") {
                return .gzip
            }
            return HTTPSyntax.equalsIgnoringCase(value, lowercased: "deflate") ? .deflate : nil
        }
    }

    /// Creates a decoder for a `Content-Encoding` header value.
    /// - Parameters:
    ///   - headerValue: The `Content-Encoding` value, e.g. `gzip`.
    ///   - maxOutputBytes: The most decoded bytes allowed in total.
    ///   - maxRatio: The largest allowed ratio of decoded to encoded bytes, checked once the
    ///     output passes 64 KiB; 0 or less disables the ratio check.
    /// - Returns: `nil` for `identity`, empty, unknown or multiple codings (deliver the body
    ///   as received), or when zlib cannot allocate its state.
    public convenience init?(contentEncoding headerValue: String, maxOutputBytes: Int, maxRatio: Int) {
        guard let encoding = ContentDecoder.encoding(for: headerValue) else { return nil }
        self.init(encoding: encoding, maxOutputBytes: maxOutputBytes, maxRatio: maxRatio)
    }

    /// Creates a decoder for a coding.
    /// - Parameters:
    ///   - encoding: The coding to remove.
    ///   - maxOutputBytes: The most decoded bytes allowed in total.
    ///   - maxRatio: The largest allowed ratio of decoded to encoded bytes, checked once the
    ///     output passes 64 KiB; 0 or less disables the ratio check.
    /// - Returns: `nil` when zlib cannot allocate its state.
    public init?(encoding: Encoding, maxOutputBytes: Int, maxRatio: Int) {
        self.encoding = encoding
        self.maxOutputBytes = Swift.max(maxOutputBytes, 0)
        self.maxRatio = maxRatio
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // gzip: 15 + 16 selects the gzip wrapper; deflate starts as zlib and may switch to raw.
        let windowBits: Int32 = encoding == .gzip ? 15 + 16 : 15
        let status = inflateInit2_(stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
        scratch = UnsafeMutableRawPointer.allocate(byteCount: ContentDecoder.scratchSize, alignment: 16)
        state = encoding == .gzip ? .inflating : .sniffing
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        scratch.deallocate()
    }

    /// Decodes the next piece of the encoded body.
    /// - Parameter input: The next encoded bytes (e.g. each run from `BodyDecoder`).
    /// - Returns: The decoded bytes available so far (possibly empty).
    /// - Throws: `.decompressionFailed` for corrupt data, `.decompressionLimitExceeded` when the
    ///   output passes `maxOutputBytes` or the ratio limit. After an error every call throws it.
    public func decode(_ input: UnsafeRawBufferPointer) throws(HTTP1Error) -> [UInt8] {
        try decode(input, maxOutput: .max).output
    }

    /// Decodes the next piece of the encoded body, stopping once `maxOutput` decoded bytes are
    /// out, so that a highly compressed input expands one bounded step at a time.
    ///
    /// Input after the consumed part is not looked at: pass it again (with more behind it, if
    /// any). When a step stops at `maxOutput`, zlib may still hold decoded bytes although all the
    /// input was consumed (``hasPendingOutput``): call again, with empty input if there is no
    /// more, before ``finish()``.
    /// - Parameters:
    ///   - input: The next encoded bytes.
    ///   - maxOutput: The most decoded bytes to return (a few hundred more when the very first
    ///     two bytes of a `deflate` body arrive apart, which cannot expand further than that).
    /// - Returns: The decoded bytes, and how many bytes of `input` were consumed (bytes after the
    ///   end of the coded data count as consumed: they are ignored).
    /// - Throws: as ``decode(_:)``.
    public func decode(_ input: UnsafeRawBufferPointer, maxOutput: Int) throws(HTTP1Error) -> (output: [UInt8], consumed: Int) {
        var output: [UInt8] = []
        switch state {
        case .failed:
            throw failure
        case .finished:
            return (output, input.count)
        case .sniffing:
            if pending.isEmpty && input.count >= 2 {
                try chooseDeflateForm(input[0], input[1])
                let consumed = try inflate(input, maxOutput: maxOutput, into: &output)
                return (output, consumed)
            }
            guard !input.isEmpty else { return (output, 0) }
            guard let first = pending.first else {
                pending = [input[0]]
                return (output, 1)
            }
            // The second byte arrived apart from the first: the two bytes decode (to a few hundred
            // bytes at most) before the rest of the input.
            pending = []
            try chooseDeflateForm(first, input[0])
            try [first, input[0]].withBytes { (pair) throws(HTTP1Error) in
                _ = try inflate(pair, maxOutput: .max, into: &output)
            }
            let rest = try inflate(UnsafeRawBufferPointer(rebasing: input[1...]), maxOutput: maxOutput, into: &output)
            return (output, 1 + rest)
        case .inflating, .memberEnded:
            let consumed = try inflate(input, maxOutput: maxOutput, into: &output)
            return (output, consumed)
        }
    }

    /// Whether zlib may hold decoded bytes that the last ``decode(_:maxOutput:)`` did not return
    /// (it stopped at its `maxOutput`).
    public var hasPendingOutput: Bool { outputPending }

    /// Checks that the encoded body ended properly.
    ///
    /// An empty body (no input at all) is accepted and decodes to nothing.
    /// - Throws: `.decompressionFailed` when the stream is truncated, or the earlier error.
    public func finish() throws(HTTP1Error) {
        switch state {
        case .failed:
            throw failure
        case .finished, .memberEnded:
            return
        case .sniffing:
            guard pending.isEmpty else { throw fail(.decompressionFailed.with("deflate data truncated")) }
        case .inflating:
            guard totalIn == 0 else { throw fail(.decompressionFailed.with("compressed data truncated")) }
        }
    }

    /// Picks zlib or raw deflate from the first two bytes (RFC 1950 §2.2 header check).
    private func chooseDeflateForm(_ cmf: UInt8, _ flg: UInt8) throws(HTTP1Error) {
        state = .inflating
        let isZlib = cmf & 0x0F == 8 && cmf >> 4 <= 7 && (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0
        if !isZlib && inflateReset2(stream, -15) != Z_OK {
            throw fail(.decompressionFailed.with("cannot switch to raw deflate"))
        }
    }

    /// Records a terminal error.
    private func fail(_ error: HTTP1Error) -> HTTP1Error {
        state = .failed
        failure = error
        return error
    }

    /// Runs zlib over `input`, appending the decoded bytes to `output` until the input is used
    /// up or `output` holds `maxOutput` bytes; takes what zlib still held from the last call first.
    /// - Returns: how many bytes of `input` were consumed (all of them once the coded data ended).
    private func inflate(_ input: UnsafeRawBufferPointer, maxOutput: Int, into output: inout [UInt8]) throws(HTTP1Error) -> Int {
        var offset = 0
        var flushing = outputPending
        outputPending = false
        while (offset < input.count || flushing) && output.count < maxOutput {
            flushing = false
            if state == .memberEnded {
                // Another gzip member starts with 0x1f; anything else is trailing garbage.
                guard input[offset] == 0x1F else {
                    state = .finished
                    return input.count
                }
                guard inflateReset(stream) == Z_OK else { throw fail(.decompressionFailed.with("cannot reset")) }
                state = .inflating
            }
            let count = Swift.min(input.count - offset, Int(UInt32.max))
            stream.pointee.next_in = input.baseAddress.map {
                UnsafeMutablePointer(mutating: ($0 + offset).assumingMemoryBound(to: Bytef.self))
            }
            stream.pointee.avail_in = UInt32(count)
            var status: Int32 = Z_OK
            var producedInRound = 0
            repeat {
                let room = Swift.min(ContentDecoder.scratchSize, maxOutput - output.count)
                stream.pointee.next_out = scratch.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = UInt32(room)
                status = CZlib.inflate(stream, Z_NO_FLUSH)
                let produced = room - Int(stream.pointee.avail_out)
                let consumed = count - Int(stream.pointee.avail_in)
                switch status {
                case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
                    break
                default:
                    let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                    throw fail(.decompressionFailed.with(reason))
                }
                if produced > 0 {
                    producedInRound += produced
                    totalOut += produced
                    try checkLimits(encodedSoFar: totalIn + consumed)
                    output.append(contentsOf: UnsafeRawBufferPointer(start: scratch, count: produced))
                }
            } while status == Z_OK && output.count < maxOutput && (stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0)
            outputPending = status == Z_OK && stream.pointee.avail_out == 0
            let consumed = count - Int(stream.pointee.avail_in)
            totalIn += consumed
            offset += consumed
            if status == Z_STREAM_END {
                state = encoding == .gzip ? .memberEnded : .finished
                if state == .finished { return input.count }
            } else if consumed == 0 && producedInRound == 0 && offset < input.count {
                throw fail(.decompressionFailed.with("no progress"))
            }
        }
        return offset
    }

    /// Throws when the output is over the size limit, or over the ratio limit past 64 KiB.
    private func checkLimits(encodedSoFar: Int) throws(HTTP1Error) {
        if totalOut > maxOutputBytes {
            throw fail(.decompressionLimitExceeded.with("more than \(maxOutputBytes) decoded bytes"))
        }
        guard maxRatio > 0, totalOut > ContentDecoder.ratioGrace else { return }
        let (allowed, overflow) = Swift.max(encodedSoFar, 1).multipliedReportingOverflow(by: maxRatio)
        if !overflow && totalOut > allowed {
            throw fail(.decompressionLimitExceeded.with(
                "\(totalOut) decoded bytes from \(encodedSoFar) encoded bytes exceeds ratio \(maxRatio)"))
        }
    }
}

@available(*, unavailable, message: "A ContentDecoder belongs to one connection")
extension ContentDecoder: Sendable {}

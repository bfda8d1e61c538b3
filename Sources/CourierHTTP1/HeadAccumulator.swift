#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Collects a section of lines (a message head, or a chunked body's trailer section) that may
/// arrive in many pieces, and finds its end: the first empty line.
///
/// Already-scanned bytes are never scanned again, so feeding one byte at a time is linear.
/// When a whole section arrives in a single buffer it is handed to the parser in place,
/// without copying. Line endings are CRLF; a bare LF is accepted unless `strictCRLF` is set
/// (RFC 9112 §2.2 allows a recipient to accept it).
struct HeadAccumulator: Sendable {
    /// The largest section in bytes, including leading empty lines and the final empty line.
    let maxBytes: Int
    /// The most non-empty lines in a section.
    let maxLines: Int
    /// Whether empty lines before the first line are skipped (RFC 9112 §2.2) rather than ending
    /// the section. True for heads, false for trailer sections.
    let skipLeadingEmptyLines: Bool
    /// Whether a LF must be preceded by CR.
    let strictCRLF: Bool
    /// Thrown when the section exceeds `maxBytes`.
    let tooLarge: HTTP1Error
    /// Thrown for a bare LF when `strictCRLF` is set.
    let bareLineFeed: HTTP1Error

    /// Bytes of an incomplete section received by earlier calls.
    private var buffer: [UInt8] = []
    /// Bytes of the current, unfinished line seen so far.
    private var lineLength = 0
    /// The last byte scanned by an earlier call (to see a CR split from its LF).
    private var lastByte: UInt8 = 0
    /// Non-empty lines completed so far.
    private var lineCount = 0
    /// Stream offset of the first non-empty line.
    private var contentStart = 0

    init(maxBytes: Int, maxLines: Int, skipLeadingEmptyLines: Bool, strictCRLF: Bool,
         tooLarge: HTTP1Error, bareLineFeed: HTTP1Error) {
        self.maxBytes = Swift.max(maxBytes, 0)
        self.maxLines = Swift.max(maxLines, 0)
        self.skipLeadingEmptyLines = skipLeadingEmptyLines
        self.strictCRLF = strictCRLF
        self.tooLarge = tooLarge
        self.bareLineFeed = bareLineFeed
    }

    /// Forgets any partial section.
    mutating func reset() {
        if buffer.capacity > 16_384 {
            buffer = []
        } else {
            buffer.removeAll(keepingCapacity: true)
        }
        lineLength = 0
        lastByte = 0
        lineCount = 0
        contentStart = 0
    }

    /// Feeds the next bytes of the stream.
    ///
    /// When the section completes, `parse` is called with the section's bytes (from its first
    /// non-empty line through the final empty line) and its number of non-empty lines, and the
    /// accumulator resets itself for the next section.
    /// - Parameters:
    ///   - bytes: The next bytes received.
    ///   - parse: Parses a complete section.
    /// - Returns: `nil` when more bytes are needed (all of `bytes` were taken), otherwise the
    ///   parse result and how many bytes of `bytes` belonged to the section.
    /// - Throws: `tooLarge`, `.tooManyFields`, `bareLineFeed`, or what `parse` throws; the
    ///   accumulator is reset after an error.
    mutating func feed<R>(
        _ bytes: UnsafeRawBufferPointer,
        parse: (UnsafeRawBufferPointer, Int) throws(HTTP1Error) -> R
    ) throws(HTTP1Error) -> (result: R, consumed: Int)? {
        do throws(HTTP1Error) {
            guard let end = try scan(bytes) else { return nil }
            let result: R
            if buffer.isEmpty {
                result = try parse(UnsafeRawBufferPointer(rebasing: bytes[contentStart..<end]), lineCount)
            } else {
                buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[..<end]))
                let start = contentStart
                let lines = lineCount
                result = try buffer.withBytes { (all) throws(HTTP1Error) -> R in
                    try parse(UnsafeRawBufferPointer(rebasing: all[start...]), lines)
                }
            }
            reset()
            return (result, end)
        } catch {
            reset()
            throw error
        }
    }

    /// Scans `bytes` for the end of the section.
    /// - Returns: The index just past the final LF in `bytes`, or `nil` after buffering `bytes`.
    private mutating func scan(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) -> Int? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
        let already = buffer.count
        let scanCount = Swift.min(bytes.count, maxBytes - already)
        var i = 0
        while i < scanCount {
            guard let found = memchr(base + i, Int32(HTTPSyntax.lf), scanCount - i) else {
                lineLength += scanCount - i
                lastByte = bytes[scanCount - 1]
                break
            }
            let lfIndex = UnsafeRawPointer(found) - base
            let length = lineLength + (lfIndex - i)
            let previous = lfIndex > i ? bytes[lfIndex - 1] : lastByte
            let endsWithCR = length > 0 && previous == HTTPSyntax.cr
            if strictCRLF && !endsWithCR {
                throw bareLineFeed.with("a line ends with LF without CR")
            }
            lineLength = 0
            i = lfIndex + 1
            if length == (endsWithCR ? 1 : 0) {
                if lineCount == 0 && skipLeadingEmptyLines {
                    contentStart = already + i
                    continue
                }
                return i
            }
            lineCount += 1
            if lineCount > maxLines {
                throw HTTP1Error.tooManyFields.with("more than \(maxLines - (skipLeadingEmptyLines ? 1 : 0)) fields")
            }
        }
        if scanCount < bytes.count {
            throw tooLarge.with("more than \(maxBytes) bytes")
        }
        buffer.append(contentsOf: bytes)
        return nil
    }
}

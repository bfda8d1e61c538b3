/// Parses response heads (status line and fields) from bytes that arrive in pieces.
///
/// Feed every received buffer to `parse(_:)` until it returns a head; the bytes after the
/// head in that last buffer (from `consumed` on) are the start of the body. The parser then
/// resets itself, ready for the next head (after a 1xx, or on a keep-alive connection).
///
/// Accepted syntax (RFC 9112 §4, §5):
/// - `HTTP/` DIGIT `.` DIGIT SP 3DIGIT [SP reason]: the code is 100–999 (callers classify
///   it), the reason may be empty or missing entirely (`HTTP/1.1 200`), and may contain
///   HTAB, SP, visible ASCII and obs-text but no control bytes. Leading whitespace is rejected.
/// - Field lines are `token ":" OWS value OWS`; whitespace before the colon, a missing colon,
///   an empty name, and NUL/CR/LF/other control bytes (except HTAB) or DEL in the value are
///   rejected; an obs-fold line (one that starts with whitespace) continues the previous
///   value, joined by one space, as RFC 9112 §5.2 requires of a user agent. Values are trimmed and
///   decoded as UTF-8 (invalid sequences become U+FFFD).
/// - Lines end with CRLF; a bare LF is also accepted as a line end (RFC 9112 §2.2, as most
///   clients do), a bare CR is not. Empty lines before the status line are skipped.
public struct ResponseHeadParser: Sendable {
    private var accumulator: HeadAccumulator

    /// Creates a parser.
    /// - Parameter limits: The size limits. Default: `HTTP1Limits()`.
    public init(limits: HTTP1Limits = HTTP1Limits()) {
        accumulator = HeadAccumulator(
            maxBytes: limits.maxHeadBytes, maxLines: limits.maxFieldCount &+ 1,
            skipLeadingEmptyLines: true, strictCRLF: false,
            tooLarge: .headTooLarge, bareLineFeed: .invalidStatusLine)
    }

    /// Feeds the next received bytes.
    /// - Parameter bytes: The next bytes of the connection.
    /// - Returns: `nil` when the head is not complete yet (every byte was taken and kept);
    ///   otherwise the head and how many bytes of *this* buffer belonged to it.
    /// - Throws: `HTTP1Error` `.invalidStatusLine`, `.invalidHeaderField`, `.headTooLarge` (as soon as the limit is passed, before the
    ///   head ends) or `.tooManyFields`. After an error the parser is reset.
    public mutating func parse(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) -> (head: HTTPResponseHead, consumed: Int)? {
        guard let outcome = try accumulator.feed(bytes, parse: ResponseHeadParser.parseHead) else { return nil }
        return (outcome.result, outcome.consumed)
    }

    /// Discards a partially received head.
    public mutating func reset() {
        accumulator.reset()
    }

    /// Parses a complete head section.
    static func parseHead(_ section: UnsafeRawBufferPointer, lines: Int) throws(HTTP1Error) -> HTTPResponseHead {
        var cursor = LineCursor(section)
        guard let line = cursor.next(), !line.isEmpty else {
            throw HTTP1Error.invalidStatusLine.with("empty status line")
        }
        var head = try parseStatusLine(line)
        head.fields = try FieldLineParser.parseFields(&cursor, capacity: lines &- 1, unfoldingObsoleteFolds: true)
        return head
    }

    /// Parses `HTTP/x.y SP 3DIGIT [SP reason]`.
    static func parseStatusLine(_ line: UnsafeRawBufferPointer) throws(HTTP1Error) -> HTTPResponseHead {
        func error() -> HTTP1Error { HTTP1Error.invalidStatusLine.with(bytes: line) }
        guard line.count >= 12,
              line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F, // HTTP/
              let major = RequestHeadParser.decimal(line[5]), line[6] == 0x2E,
              let minor = RequestHeadParser.decimal(line[7]), line[8] == HTTPSyntax.space,
              let d1 = RequestHeadParser.decimal(line[9]),
              let d2 = RequestHeadParser.decimal(line[10]),
              let d3 = RequestHeadParser.decimal(line[11]), d1 > 0 else { throw error() }
        var reason = ""
        if line.count > 12 {
            guard line[12] == HTTPSyntax.space else { throw error() }
            let bytes = UnsafeRawBufferPointer(rebasing: line[13...])
            guard HTTPSyntax.isValidFieldValue(bytes) else { throw error() }
            reason = HTTPSyntax.string(bytes)
        }
        var head = HTTPResponseHead(version: HTTPVersion(major: major, minor: minor),
                                    status: d1 * 100 + d2 * 10 + d3, reason: reason)
        head.fields = []
        return head
    }
}

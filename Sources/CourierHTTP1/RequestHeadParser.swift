/// Parses request heads (request line and fields) from bytes that arrive in pieces.
///
/// Feed every received buffer to `parse(_:)` until it returns a head; the bytes after the
/// head in that last buffer (from `consumed` on) are the start of the body or of the next
/// request. The parser then resets itself for the next head.
///
/// Accepted syntax (RFC 9112 §3, §5):
/// - `method SP request-target SP HTTP/1.x`: the method is a token, single spaces, the
///   target is non-empty without whitespace or control bytes, the version is `HTTP/1.` DIGIT.
/// - Every line ends with CRLF: a bare LF (which RFC 9112 §2.2 lets a recipient accept) is
///   refused, as is a bare CR, so that the server never frames a request differently from a
///   proxy in front of it. Empty lines before the request line are skipped (they count toward
///   the limit).
/// - An HTTP/1.1 (or later) request has exactly one `Host` field (RFC 9112 §3.2); HTTP/1.0
///   requests may have none.
/// - Field rules as in `ResponseHeadParser`.
public struct RequestHeadParser: Sendable {
    private var accumulator: HeadAccumulator

    /// Creates a parser.
    /// - Parameter limits: The size limits. Default: `HTTP1Limits()`.
    public init(limits: HTTP1Limits = HTTP1Limits()) {
        accumulator = HeadAccumulator(
            maxBytes: limits.maxHeadBytes, maxLines: limits.maxFieldCount &+ 1,
            skipLeadingEmptyLines: true, strictCRLF: true,
            tooLarge: .headTooLarge, bareLineFeed: .invalidRequestLine)
    }

    /// Feeds the next received bytes.
    /// - Parameter bytes: The next bytes of the connection.
    /// - Returns: `nil` when the head is not complete yet (every byte was taken and kept);
    ///   otherwise the head and how many bytes of *this* buffer belonged to it.
    /// - Throws: `HTTP1Error` `.invalidRequestLine` (also for a line ending in a bare LF),
    ///   `.invalidHeaderField` (also for an HTTP/1.1 request without exactly one `Host`),
    ///   `.obsoleteLineFolding`, `.headTooLarge` (as soon as the limit is passed, before the
    ///   head ends) or `.tooManyFields`. After an error the parser is reset.
    public mutating func parse(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) -> (head: HTTPRequestHead, consumed: Int)? {
        guard let outcome = try accumulator.feed(bytes, parse: RequestHeadParser.parseHead) else { return nil }
        return (outcome.result, outcome.consumed)
    }

    /// Discards a partially received head.
    public mutating func reset() {
        accumulator.reset()
    }

    /// Parses a complete head section.
    static func parseHead(_ section: UnsafeRawBufferPointer, lines: Int) throws(HTTP1Error) -> HTTPRequestHead {
        var cursor = LineCursor(section)
        guard let line = cursor.next(), !line.isEmpty else {
            throw HTTP1Error.invalidRequestLine.with("empty request line")
        }
        var head = try parseRequestLine(line)
        head.fields = try FieldLineParser.parseFields(&cursor, capacity: lines &- 1)
        try checkHost(head)
        return head
    }

    /// Requires exactly one `Host` field in an HTTP/1.1 (or later) request (RFC 9112 §3.2).
    static func checkHost(_ head: HTTPRequestHead) throws(HTTP1Error) {
        guard head.version.persistsByDefault else { return }
        let count = head.fields.reduce(0) { HTTPSyntax.name($1.name, is: "host") ? $0 &+ 1 : $0 }
        guard count == 1 else {
            throw HTTP1Error.invalidHeaderField.with("an \(head.version) request needs exactly one Host field, not \(count)")
        }
    }

    /// Parses `method SP target SP HTTP/1.x`.
    static func parseRequestLine(_ line: UnsafeRawBufferPointer) throws(HTTP1Error) -> HTTPRequestHead {
        func error() -> HTTP1Error { HTTP1Error.invalidRequestLine.with(bytes: line) }
        var i = 0
        while i < line.count, HTTPSyntax.isTokenByte(line[i]) { i += 1 }
        let methodEnd = i
        guard methodEnd > 0, i < line.count, line[i] == HTTPSyntax.space else { throw error() }
        i += 1
        let targetStart = i
        while i < line.count, line[i] > HTTPSyntax.space, line[i] != 0x7F { i += 1 }
        let targetEnd = i
        guard targetEnd > targetStart, i < line.count, line[i] == HTTPSyntax.space else { throw error() }
        i += 1
        guard line.count - i == 8,
              line[i] == 0x48, line[i + 1] == 0x54, line[i + 2] == 0x54, line[i + 3] == 0x50, // HTTP
              line[i + 4] == 0x2F, line[i + 5] == 0x31, line[i + 6] == 0x2E,                   // /1.
              let minor = decimal(line[i + 7]) else { throw error() }
        return HTTPRequestHead(
            method: HTTPSyntax.string(UnsafeRawBufferPointer(rebasing: line[..<methodEnd])),
            target: HTTPSyntax.string(UnsafeRawBufferPointer(rebasing: line[targetStart..<targetEnd])),
            version: HTTPVersion(major: 1, minor: minor),
            fields: [])
    }

    @inline(__always)
    static func decimal(_ byte: UInt8) -> Int? {
        (0x30...0x39).contains(byte) ? Int(byte &- 0x30) : nil
    }
}

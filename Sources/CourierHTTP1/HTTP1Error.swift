/// An error in HTTP/1.1 wire data: a malformed head, inconsistent framing, a broken chunked
/// body, a body cut short, or compressed content that cannot (or may not) be decoded.
///
/// The error is a struct with a private kind and static members, so that new kinds never break
/// callers. Compare with `==` (which compares the kind only, never the detail):
///
/// ```swift
/// catch let error as HTTP1Error where error == .headTooLarge { … }
/// ```
///
/// `description` is a human sentence followed, where known, by a short detail such as the
/// offending line (truncated, with control bytes escaped).
public struct HTTP1Error: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case invalidStatusLine, invalidRequestLine, invalidHeaderField, obsoleteLineFolding
        case headTooLarge, tooManyFields
        case invalidContentLength, conflictingContentLength, unsupportedTransferEncoding
        case invalidChunkSize, invalidChunkFraming, trailersTooLarge, truncatedBody
        case decompressionFailed, decompressionLimitExceeded
    }

    private let code: Code

    /// A short detail about this occurrence (the offending line, the limit that was hit, …),
    /// or `nil` when there is none. Control bytes are escaped and long text is truncated.
    public let detail: String?

    private init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// The status line of a response is not `HTTP/x.y SP 3DIGIT [SP reason]`.
    public static let invalidStatusLine = HTTP1Error(.invalidStatusLine)
    /// The request line is not `token SP target SP HTTP/1.x`.
    public static let invalidRequestLine = HTTP1Error(.invalidRequestLine)
    /// A field line is malformed: no colon, a name that is not a token, whitespace before the
    /// colon, or a control byte (NUL, CR, LF, …) in the value.
    public static let invalidHeaderField = HTTP1Error(.invalidHeaderField)
    /// A field line starts with whitespace (obsolete line folding, RFC 9112 §5.2).
    public static let obsoleteLineFolding = HTTP1Error(.obsoleteLineFolding)
    /// The head is larger than `HTTP1Limits.maxHeadBytes`.
    public static let headTooLarge = HTTP1Error(.headTooLarge)
    /// The head (or the trailer section) has more than `HTTP1Limits.maxFieldCount` fields.
    public static let tooManyFields = HTTP1Error(.tooManyFields)
    /// A `Content-Length` value is not a non-negative decimal number that fits the limits.
    public static let invalidContentLength = HTTP1Error(.invalidContentLength)
    /// Several `Content-Length` values disagree.
    public static let conflictingContentLength = HTTP1Error(.conflictingContentLength)
    /// The `Transfer-Encoding` cannot be decoded (a request whose final coding is not
    /// `chunked`, a coding other than `chunked`, or `chunked` applied twice).
    public static let unsupportedTransferEncoding = HTTP1Error(.unsupportedTransferEncoding)
    /// A chunk-size line does not start with a valid hexadecimal size that fits in an `Int`.
    public static let invalidChunkSize = HTTP1Error(.invalidChunkSize)
    /// The chunked framing is broken: chunk data not followed by CRLF, a bare LF, or an
    /// over-long chunk line.
    public static let invalidChunkFraming = HTTP1Error(.invalidChunkFraming)
    /// The trailer section of a chunked body is larger than `HTTP1Limits.maxTrailerBytes`.
    public static let trailersTooLarge = HTTP1Error(.trailersTooLarge)
    /// The connection closed before the body was complete.
    public static let truncatedBody = HTTP1Error(.truncatedBody)
    /// Compressed content (gzip / deflate) is corrupt or truncated.
    public static let decompressionFailed = HTTP1Error(.decompressionFailed)
    /// Decompressed content exceeds the allowed size or compression ratio (a likely bomb).
    public static let decompressionLimitExceeded = HTTP1Error(.decompressionLimitExceeded)

    /// Compares the kinds of two errors; the details are ignored.
    /// - Parameters:
    ///   - lhs: An error.
    ///   - rhs: Another error.
    /// - Returns: `true` when both errors are of the same kind.
    public static func == (lhs: HTTP1Error, rhs: HTTP1Error) -> Bool {
        lhs.code == rhs.code
    }

    /// A clear sentence describing the error, followed by its detail when there is one.
    public var description: String {
        guard let detail, !detail.isEmpty else { return summary }
        return "\(summary): \(detail)"
    }

    private var summary: String {
        switch code {
        case .invalidStatusLine: "The response status line is malformed"
        case .invalidRequestLine: "The request line is malformed"
        case .invalidHeaderField: "A header field line is malformed"
        case .obsoleteLineFolding: "A header field uses obsolete line folding, which is not accepted"
        case .headTooLarge: "The message head exceeds the size limit"
        case .tooManyFields: "The message has more header fields than allowed"
        case .invalidContentLength: "The Content-Length value is invalid"
        case .conflictingContentLength: "The message has conflicting Content-Length values"
        case .unsupportedTransferEncoding: "The Transfer-Encoding is not supported"
        case .invalidChunkSize: "A chunk size in the chunked body is invalid"
        case .invalidChunkFraming: "The chunked body framing is broken"
        case .trailersTooLarge: "The chunked body's trailer section exceeds the size limit"
        case .truncatedBody: "The connection closed before the message body was complete"
        case .decompressionFailed: "The compressed content could not be decoded"
        case .decompressionLimitExceeded: "The decompressed content exceeds the allowed size or ratio"
        }
    }

    /// Returns this error with a detail attached (the kind is unchanged).
    /// - Parameter detail: Free text; it is truncated and control bytes are escaped.
    /// - Returns: A copy of the error carrying `detail`.
    func with(_ detail: String) -> HTTP1Error {
        HTTP1Error(code, detail: HTTP1Error.sanitize(Array(detail.utf8)[...]))
    }

    /// Returns this error with a detail made from raw wire bytes (e.g. the offending line).
    /// - Parameter bytes: The bytes; at most 80 are shown, control bytes escaped as `\xNN`.
    /// - Returns: A copy of the error carrying the quoted bytes.
    func with(bytes: UnsafeRawBufferPointer) -> HTTP1Error {
        HTTP1Error(code, detail: "\"" + HTTP1Error.sanitize(bytes) + "\"")
    }

    /// Escapes control and non-ASCII bytes and truncates to 80 bytes.
    private static func sanitize<C: Collection<UInt8>>(_ bytes: C) -> String {
        let limit = 80
        var out = ""
        out.reserveCapacity(Swift.min(bytes.count, limit) + 8)
        var shown = 0
        let hex: [Character] = Array("0123456789ABCDEF")
        for byte in bytes {
            if shown == limit {
                out += "…"
                break
            }
            shown += 1
            switch byte {
            case 0x0D: out += "\\r"
            case 0x0A: out += "\\n"
            case 0x09: out += "\\t"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "\\x"
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }
}

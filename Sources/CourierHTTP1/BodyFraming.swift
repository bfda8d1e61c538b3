/// How a message body is delimited on the wire (RFC 9112 §6.3).
public enum BodyFraming: Sendable, Equatable {
    /// No body follows the head.
    case none
    /// Exactly this many body bytes follow the head (may be 0).
    case contentLength(Int)
    /// The body uses the chunked transfer coding.
    case chunked
    /// The body runs until the peer closes the connection (responses only); the connection
    /// cannot be reused afterwards.
    case untilClose

    /// The largest accepted `Content-Length` (`Int.max / 2`); larger values are invalid.
    public static let maxContentLength = Int.max / 2

    /// The framing of a response body, per RFC 9112 §6.3.
    ///
    /// In order: a response to `HEAD`, a 1xx, 204 or 304 response, and a 2xx response to
    /// `CONNECT` have no body (any `Content-Length` is ignored). Otherwise a
    /// `Transfer-Encoding` whose final coding is `chunked` means `.chunked` (a
    /// `Content-Length` is then ignored), also in an HTTP/1.0 response, as curl does; any other
    /// `Transfer-Encoding` means `.untilClose`. Otherwise a valid `Content-Length` gives its length;
    /// without either the body runs until the connection closes.
    /// - Parameters:
    ///   - head: The response head.
    ///   - requestMethod: The method of the request this response answers, e.g. `GET`.
    /// - Returns: The body framing.
    /// - Throws: `.invalidContentLength`, `.conflictingContentLength`, or
    ///   `.unsupportedTransferEncoding` when `chunked` is applied more than once.
    public static func forResponse(_ head: HTTPResponseHead, requestMethod: String) throws(HTTP1Error) -> BodyFraming {
        guard responseCanHaveBody(status: head.status, requestMethod: requestMethod) else { return .none }
        if let codings = try transferCodings(head.fields) {
            if codings.chunkedIsFinal { return .chunked }
            return .untilClose
        }
        if let length = try contentLength(head.fields) {
            return .contentLength(length)
        }
        return .untilClose
    }

    /// Whether a response with this status, to this method, can carry a body (RFC 9110 §6.4.1):
    /// not a response to `HEAD`, not a 1xx, 204 or 304, and not a 2xx response to `CONNECT`.
    /// - Parameters:
    ///   - status: the response's status code.
    ///   - requestMethod: the method of the request it answers, e.g. `GET`.
    /// - Returns: `false` when the response has no body, whatever its fields say.
    public static func responseCanHaveBody(status: Int, requestMethod: String) -> Bool {
        if requestMethod == "HEAD" || (100...199).contains(status) || status == 204 || status == 304 { return false }
        return !(requestMethod == "CONNECT" && (200...299).contains(status))
    }

    /// The framing of a request body, per RFC 9112 §6.3.
    ///
    /// A `Transfer-Encoding` of exactly `chunked` means `.chunked` (a `Content-Length` is then
    /// ignored, as RFC 9112 §6.3 rule 3 allows; a server should close the connection after such
    /// a request). A valid `Content-Length` gives its length; otherwise there is no body.
    /// Never returns `.untilClose`.
    /// - Parameter head: The request head.
    /// - Returns: `.none`, `.contentLength(n)` or `.chunked`.
    /// - Throws: `.unsupportedTransferEncoding` for any other coding (including `gzip,
    ///   chunked`, `chunked` twice, or `Transfer-Encoding` in an HTTP/1.0 request: a server
    ///   answers 400 or 501 and closes), `.invalidContentLength`, `.conflictingContentLength`.
    public static func forRequest(_ head: HTTPRequestHead) throws(HTTP1Error) -> BodyFraming {
        if let codings = try transferCodings(head.fields) {
            guard head.version.persistsByDefault else {
                throw HTTP1Error.unsupportedTransferEncoding.with("Transfer-Encoding in an HTTP/1.0 request")
            }
            guard codings.chunkedIsFinal, codings.count == 1 else {
                throw HTTP1Error.unsupportedTransferEncoding.with(head.values(for: "transfer-encoding").joined(separator: ", "))
            }
            return .chunked
        }
        if let length = try contentLength(head.fields) {
            return .contentLength(length)
        }
        return .none
    }

    /// A summary of the `Transfer-Encoding` fields.
    struct TransferCodings {
        /// The number of (non-empty) codings.
        var count = 0
        /// Whether the last coding is `chunked`.
        var chunkedIsFinal = false
    }

    /// Reads the `Transfer-Encoding` fields.
    /// - Returns: `nil` when there is no such field.
    /// - Throws: `.unsupportedTransferEncoding` when `chunked` appears more than once.
    static func transferCodings(_ fields: [HTTPField]) throws(HTTP1Error) -> TransferCodings? {
        var result: TransferCodings?
        var chunkedTwice = false
        for field in fields where HTTPSyntax.name(field.name, is: "transfer-encoding") {
            var codings = result ?? TransferCodings()
            var chunkedSeen = codings.chunkedIsFinal
            HTTPSyntax.withUTF8(field.value) { value in
                HTTPSyntax.forEachListElement(value) { element in
                    guard !element.isEmpty else { return true }
                    let isChunked = HTTPSyntax.equalsIgnoringCase(element, lowercased: "chunked")
                    if isChunked && chunkedSeen {
                        chunkedTwice = true
                        return false
                    }
                    chunkedSeen = chunkedSeen || isChunked
                    codings.count += 1
                    codings.chunkedIsFinal = isChunked
                    return true
                }
            }
            if chunkedTwice {
                throw HTTP1Error.unsupportedTransferEncoding.with("chunked applied more than once")
            }
            result = codings
        }
        return result
    }

    /// Reads the `Content-Length` fields: every element of every field must be the same
    /// decimal number.
    /// - Returns: The length, or `nil` when there is no such field.
    /// - Throws: `.invalidContentLength`, `.conflictingContentLength`.
    static func contentLength(_ fields: [HTTPField]) throws(HTTP1Error) -> Int? {
        var result: Int?
        for field in fields where HTTPSyntax.name(field.name, is: "content-length") {
            var invalid = false
            var conflict = false
            HTTPSyntax.withUTF8(field.value) { value in
                HTTPSyntax.forEachListElement(value) { element in
                    guard let length = parseLength(element) else {
                        invalid = true
                        return false
                    }
                    if let previous = result, previous != length {
                        conflict = true
                        return false
                    }
                    result = length
                    return true
                }
            }
            if invalid {
                throw HTTP1Error.invalidContentLength.with(field.value.isEmpty ? "empty value" : field.value)
            }
            if conflict {
                let all = fields.filter { HTTPSyntax.name($0.name, is: "content-length") }.map(\.value)
                throw HTTP1Error.conflictingContentLength.with(all.joined(separator: ", "))
            }
        }
        return result
    }

    /// Parses one decimal length of at most `maxContentLength` digits-only bytes.
    /// - Returns: The length, or `nil` when the text is empty, not all digits, or too large.
    static func parseLength(_ text: UnsafeRawBufferPointer) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            let digit = Int(byte &- 0x30)
            guard value <= (maxContentLength - digit) / 10 else { return nil }
            value = value * 10 + digit
        }
        return value
    }
}

/// The head of an HTTP/1.1 response: status line and header fields.
///
/// Produced by `ResponseHeadParser` (client side) and serialized by servers with `serialized()`.
public struct HTTPResponseHead: Sendable, Equatable {
    /// The protocol version of the status line.
    public var version: HTTPVersion
    /// The three-digit status code (100–999 when parsed; callers classify).
    public var status: Int
    /// The reason phrase; may be empty.
    public var reason: String
    /// The header fields in wire order.
    public var fields: [HTTPField]

    /// Creates a response head.
    /// - Parameters:
    ///   - version: The protocol version. Default: `.http1_1`.
    ///   - status: The status code, 100–999.
    ///   - reason: The reason phrase. Default: the standard phrase for `status`
    ///     (`standardReason(for:)`), empty for unknown codes.
    ///   - fields: The header fields in order. Default: none.
    public init(version: HTTPVersion = .http1_1, status: Int, reason: String? = nil, fields: [HTTPField] = []) {
        self.version = version
        self.status = status
        self.reason = reason ?? HTTPResponseHead.standardReason(for: status)
        self.fields = fields
    }

    /// The value of the first field named `name`, ignoring ASCII case.
    /// - Parameter name: The field name, e.g. `content-type`.
    /// - Returns: The first value, or `nil` when the field is absent.
    public func value(for name: String) -> String? { fields.value(for: name) }

    /// The values of all fields named `name`, ignoring ASCII case, in wire order (lists are not split).
    /// - Parameter name: The field name.
    /// - Returns: The values; empty when the field is absent.
    public func values(for name: String) -> [String] { fields.values(for: name) }

    /// Whether the connection stays open after this message: `Connection: close` closes it;
    /// HTTP/1.0 closes it unless `Connection: keep-alive`; HTTP/1.1 keeps it open otherwise.
    /// (A close-delimited body also ends the connection: see `BodyFraming.untilClose`.)
    public var keepAlive: Bool { fields.keepAlive(version: version) }

    /// The wire form: status line, one line per field, and the empty line (CRLF).
    ///
    /// The status is written as three digits (values outside 0–999 are clamped); CR, LF and NUL
    /// in the reason, names or values are replaced by spaces. An empty reason still gets the
    /// space after the code, as RFC 9112 §4 requires.
    /// - Returns: The bytes to send, ending with CRLF CRLF.
    public func serialized() -> [UInt8] {
        // HTTP/x.y SP 3DIGIT SP reason CRLF fields CRLF
        let capacity = 15 &+ reason.utf8.count &+ fields.serializedCount &+ 2
        let code = Swift.min(Swift.max(status, 0), 999)
        return HTTPSyntax.build(capacity: capacity) { writer in
            version.write(to: &writer)
            writer.write(HTTPSyntax.space)
            writer.write(0x30 &+ UInt8(truncatingIfNeeded: code / 100))
            writer.write(0x30 &+ UInt8(truncatingIfNeeded: (code / 10) % 10))
            writer.write(0x30 &+ UInt8(truncatingIfNeeded: code % 10))
            writer.write(HTTPSyntax.space)
            writer.write(sanitized: reason)
            writer.writeCRLF()
            fields.write(to: &writer)
            writer.writeCRLF()
        }
    }
}

/// The head of an HTTP/1.1 request: request line and header fields.
///
/// Produced by `RequestHeadParser` (server side). `serialized()` gives its wire form for the
/// parser's round-trip tests, the fuzzer and raw test clients; Courier's client does not use it:
/// `NativeRequestEncoder` writes a `TransportRequest`'s head directly, refusing (not replacing)
/// characters HTTP forbids.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The method token, e.g. `GET` (case-sensitive).
    public var method: String
    /// The request target, e.g. `/path?query` (origin form) or `host:443` (CONNECT).
    public var target: String
    /// The protocol version of the request line.
    public var version: HTTPVersion
    /// The header fields in wire order.
    public var fields: [HTTPField]

    /// Creates a request head.
    /// - Parameters:
    ///   - method: The method token, e.g. `GET`.
    ///   - target: The request target, e.g. `/index.html`.
    ///   - version: The protocol version. Default: `.http1_1`.
    ///   - fields: The header fields in order. Default: none.
    public init(method: String, target: String, version: HTTPVersion = .http1_1, fields: [HTTPField] = []) {
        self.method = method
        self.target = target
        self.version = version
        self.fields = fields
    }

    /// The value of the first field named `name`, ignoring ASCII case.
    /// - Parameter name: The field name, e.g. `host`.
    /// - Returns: The first value, or `nil` when the field is absent.
    public func value(for name: String) -> String? { fields.value(for: name) }

    /// The values of all fields named `name`, ignoring ASCII case, in wire order (lists are not split).
    /// - Parameter name: The field name.
    /// - Returns: The values; empty when the field is absent.
    public func values(for name: String) -> [String] { fields.values(for: name) }

    /// Whether the connection stays open after this message: `Connection: close` closes it;
    /// HTTP/1.0 closes it unless `Connection: keep-alive`; HTTP/1.1 keeps it open otherwise.
    public var keepAlive: Bool { fields.keepAlive(version: version) }

    /// The wire form: request line, one line per field, and the empty line (CRLF).
    ///
    /// CR, LF and NUL inside the method, target, names or values are replaced by spaces so that
    /// a bad value can never inject a field or a second request; validate user input with
    /// `HTTPField.isValidName(_:)` / `isValidValue(_:)` to report such values instead.
    /// - Returns: The bytes to send, ending with CRLF CRLF.
    public func serialized() -> [UInt8] {
        // method SP target SP HTTP/x.y CRLF fields CRLF
        let capacity = method.utf8.count &+ target.utf8.count &+ 12 &+ fields.serializedCount &+ 2
        return HTTPSyntax.build(capacity: capacity) { writer in
            writer.write(sanitized: method)
            writer.write(HTTPSyntax.space)
            writer.write(sanitized: target)
            writer.write(HTTPSyntax.space)
            version.write(to: &writer)
            writer.writeCRLF()
            fields.write(to: &writer)
            writer.writeCRLF()
        }
    }
}

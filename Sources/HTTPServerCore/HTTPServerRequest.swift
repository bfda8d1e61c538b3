import CourierHTTP1
import CourierWire

/// A complete HTTP request as received by an ``HTTPServer``: head and whole body.
public struct HTTPServerRequest: Sendable {
    /// The method token as sent, for example `"GET"`.
    public let method: String
    /// The request target exactly as sent: `"/echo/x?a=1"` (or absolute-form, or `"*"`).
    public let target: String
    /// The target's path without the query, still percent-encoded: `"/echo/x"`.
    /// For absolute-form targets the scheme and authority are removed.
    public let path: String
    /// The raw query string without the `?`; empty when there is none.
    public let query: String
    /// The protocol version of the request line.
    public let version: HTTPVersion
    /// The header fields in received order.
    public let fields: [HTTPField]
    /// The request body with its framing (length or chunked coding) removed.
    public let body: [UInt8]
    /// The 1-based number of the connection, in order of acceptance by this server.
    public let connectionNumber: Int
    /// The 1-based number of this request on its connection.
    public let requestNumber: Int
    /// The client's address, when the kernel reported it.
    public let remoteAddress: SocketAddress?
    /// Whether the client allows the connection to stay open after the response.
    public let keepAlive: Bool

    /// Creates a request from a parsed head and body.
    ///
    /// - Parameters:
    ///   - head: The parsed head.
    ///   - body: The decoded body.
    ///   - connectionNumber: The connection's 1-based number.
    ///   - requestNumber: The request's 1-based number on its connection.
    ///   - remoteAddress: The peer's address.
    public init(
        head: HTTPRequestHead, body: [UInt8], connectionNumber: Int, requestNumber: Int, remoteAddress: SocketAddress?
    ) {
        method = head.method
        target = head.target
        version = head.version
        fields = head.fields
        keepAlive = head.keepAlive
        self.body = body
        self.connectionNumber = connectionNumber
        self.requestNumber = requestNumber
        self.remoteAddress = remoteAddress
        (path, query) = HTTPServerRequest.split(target: head.target)
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    ///
    /// - Parameter name: The field name.
    /// - Returns: The value, or `nil` when absent.
    public func value(for name: String) -> String? { fields.value(for: name) }

    /// Splits a request target into path and raw query.
    ///
    /// - Parameter target: The request target.
    /// - Returns: The path (`"/"` when an absolute-form target has none) and the query.
    public static func split(target: String) -> (path: String, query: String) {
        var pathAndQuery = Substring(target)
        if !target.hasPrefix("/"), let schemeEnd = target.firstRange(of: "://") {
            let afterAuthority = target[schemeEnd.upperBound...]
            if let slash = afterAuthority.firstIndex(where: { $0 == "/" || $0 == "?" }) {
                pathAndQuery = afterAuthority[slash...]
            } else {
                pathAndQuery = "/"
            }
        }
        guard let mark = pathAndQuery.firstIndex(of: "?") else {
            return (pathAndQuery.isEmpty ? "/" : String(pathAndQuery), "")
        }
        let path = pathAndQuery[..<mark]
        let query = pathAndQuery[pathAndQuery.index(after: mark)...]
        return (path.isEmpty ? "/" : String(path), String(query))
    }
}

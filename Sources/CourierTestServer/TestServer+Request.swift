import Foundation
import HTTPServerCore

extension TestServer {
    /// A request as seen by a route handler.
    public struct Request: Sendable {
        /// The method, for example `"POST"`.
        public let method: String
        /// The request target as sent, for example `"/echo/x?a=1"`.
        public let target: String
        /// The path without the query, percent-encoded as sent: `"/echo/x"`.
        public let path: String
        /// The raw query string without `?`; empty when there is none.
        public let query: String
        /// The header fields in received order.
        public let fields: [(name: String, value: String)]
        /// The request body (framing removed).
        public let body: Data
        /// The 1-based number of the connection, in the order the server accepted them.
        public let connectionNumber: Int
        /// The 1-based number of this request on its connection.
        public let requestNumber: Int

        init(_ request: HTTPServerRequest) {
            method = request.method
            target = request.target
            path = request.path
            query = request.query
            fields = request.fields.map { (name: $0.name, value: $0.value) }
            body = Data(request.body)
            connectionNumber = request.connectionNumber
            requestNumber = request.requestNumber
        }

        /// Creates a request by hand, for unit-testing route handlers.
        ///
        /// - Parameters:
        ///   - method: The method. Default: `"GET"`.
        ///   - target: The request target, for example `"/a?b=1"`.
        ///   - fields: Header fields. Default: none.
        ///   - body: The body. Default: empty.
        ///   - connectionNumber: Default 1.
        ///   - requestNumber: Default 1.
        public init(
            method: String = "GET", target: String, fields: [(name: String, value: String)] = [],
            body: Data = Data(), connectionNumber: Int = 1, requestNumber: Int = 1
        ) {
            self.method = method
            self.target = target
            (path, query) = HTTPServerRequest.split(target: target)
            self.fields = fields
            self.body = body
            self.connectionNumber = connectionNumber
            self.requestNumber = requestNumber
        }

        /// The first value of header `name` (ASCII case-insensitive).
        ///
        /// - Parameter name: The field name.
        /// - Returns: The value, or `nil`.
        public func value(for name: String) -> String? {
            let wanted = name.lowercased()
            return fields.first { $0.name.lowercased() == wanted }?.value
        }

        /// The value of query parameter `name` (not percent-decoded), or `nil`.
        ///
        /// - Parameter name: The parameter name.
        /// - Returns: The first value; an empty string for a name without `=`.
        public func queryValue(_ name: String) -> String? {
            for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                if parts.first.map(String.init) == name {
                    return parts.count > 1 ? String(parts[1]) : ""
                }
            }
            return nil
        }

        /// A query parameter as an integer, or `nil` when absent or not a number.
        ///
        /// - Parameter name: The parameter name.
        /// - Returns: The value.
        public func queryInt(_ name: String) -> Int? {
            queryValue(name).flatMap { Int($0) }
        }
    }
}

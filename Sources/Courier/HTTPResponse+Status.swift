import CourierHTTP1

extension HTTPResponse {
    /// An HTTP status: the code, the reason phrase sent with it, and its class.
    public struct Status: Sendable, Hashable, CustomStringConvertible {
        /// The three-digit code.
        public var code: Int
        /// The reason phrase as received (may be empty, as HTTP/2-style servers send).
        public var reason: String

        /// Creates a status.
        /// - Parameters:
        ///   - code: the code.
        ///   - reason: the reason phrase; the standard one for `code` by default.
        public init(code: Int, reason: String? = nil) {
            self.code = code
            self.reason = reason ?? Self.standardReason(for: code)
        }

        /// The class of a status code.
        public enum Kind: Sendable, Hashable {
            /// 1xx.
            case informational
            /// 2xx.
            case success
            /// 3xx.
            case redirect
            /// 4xx.
            case clientError
            /// 5xx.
            case serverError
            /// Any other code.
            case invalid
        }

        /// The class of ``code``.
        public var kind: Kind {
            switch code {
            case 100..<200: .informational
            case 200..<300: .success
            case 300..<400: .redirect
            case 400..<500: .clientError
            case 500..<600: .serverError
            default: .invalid
            }
        }

        /// `"404 Not Found"`.
        public var description: String { reason.isEmpty ? "\(code)" : "\(code) \(reason)" }

        /// Statuses compare by code alone: the reason phrase is informational.
        public static func == (lhs: Status, rhs: Status) -> Bool { lhs.code == rhs.code }

        /// Hashes the code.
        public func hash(into hasher: inout Hasher) { hasher.combine(code) }

        /// 200 OK.
        public static let ok = Status(code: 200)
        /// 201 Created.
        public static let created = Status(code: 201)
        /// 204 No Content.
        public static let noContent = Status(code: 204)
        /// 304 Not Modified.
        public static let notModified = Status(code: 304)
        /// 401 Unauthorized.
        public static let unauthorized = Status(code: 401)
        /// 403 Forbidden.
        public static let forbidden = Status(code: 403)
        /// 404 Not Found.
        public static let notFound = Status(code: 404)

        /// The standard reason phrase for a code (RFC 9110 §15, from CourierHTTP1's one table), or
        /// an empty string.
        public static func standardReason(for code: Int) -> String {
            HTTPResponseHead.standardReason(for: code)
        }
    }
}

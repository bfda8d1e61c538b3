import CourierHTTP1

extension HTTPRequest {
    /// An HTTP method token. The common ones are static members; any other token works too.
    public struct Method: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The token as sent on the wire, e.g. `"GET"`.
        public let rawValue: String

        /// Creates a method from its token. Tokens are case-sensitive in HTTP; use upper case.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Creates a method from a string literal.
        public init(stringLiteral value: String) { self.rawValue = value }

        /// The token.
        public var description: String { rawValue }

        /// GET.
        public static let get = Method(rawValue: "GET")
        /// HEAD.
        public static let head = Method(rawValue: "HEAD")
        /// POST.
        public static let post = Method(rawValue: "POST")
        /// PUT.
        public static let put = Method(rawValue: "PUT")
        /// PATCH.
        public static let patch = Method(rawValue: "PATCH")
        /// DELETE.
        public static let delete = Method(rawValue: "DELETE")
        /// OPTIONS.
        public static let options = Method(rawValue: "OPTIONS")
        /// TRACE.
        public static let trace = Method(rawValue: "TRACE")

        /// Whether the method is idempotent (RFC 9110 §9.2.2): GET, HEAD, PUT, DELETE, OPTIONS, TRACE.
        public var isIdempotent: Bool {
            switch rawValue {
            case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": true
            default: false
            }
        }

        /// Whether the token is a valid RFC 9110 token (visible ASCII, no separators).
        public var isValidToken: Bool {
            HTTPField.isValidName(rawValue)
        }
    }
}

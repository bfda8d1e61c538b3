/// Decides which responses are successes; every other response goes to the error path as
/// ``HTTPConnectionError/unacceptableStatus`` with the response attached.
public struct ResponseValidation: Sendable {
    private let accepts: @Sendable (HTTPResponse) -> Bool

    /// Creates a validation from a rule.
    /// - Parameter accepts: returns `true` for a success.
    public init(_ accepts: @escaping @Sendable (HTTPResponse) -> Bool) {
        self.accepts = accepts
    }

    /// Whether the response is a success.
    public func isAcceptable(_ response: HTTPResponse) -> Bool { accepts(response) }

    /// Any 2xx status is a success (NitroConnection's rule). The default.
    public static let successStatusCodes = statusCodes(200..<300)

    /// The given codes are successes.
    public static func statusCodes<Codes: Collection & Sendable>(_ codes: Codes) -> ResponseValidation where Codes.Element == Int {
        ResponseValidation { codes.contains($0.status.code) }
    }

    /// Every response is a success: the caller inspects the status itself.
    public static let acceptAll = ResponseValidation { _ in true }
}

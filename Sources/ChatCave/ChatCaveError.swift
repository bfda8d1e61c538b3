/// Why a ChatCave request failed, in the service's own terms — never an HTTP status.
///
/// | case | when |
/// |---|---|
/// | ``notAuthorized`` | the server wants (other) credentials, and none could be had |
/// | ``forbidden`` | the user may not do this (e.g. join a room as someone else) |
/// | ``notFound`` | the room, user or message does not exist |
/// | ``rejected(_:)`` | the server refused the input, with its reason (`"A room named 'x' already exists"`) |
/// | ``server`` | the server failed |
/// | ``transport(_:)`` | the network failed: no connection, timeout, connection lost |
/// | ``cancelled`` | the request was cancelled |
/// | ``invalidResponse(_:)`` | the server answered something this client cannot read |
///
/// Two errors are equal when they are the same case (and, for ``rejected(_:)``, the same reason).
public enum ChatCaveError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not signed in, or the credentials were refused and the authentication handler gave none.
    case notAuthorized
    /// Signed in, but not allowed to do this.
    case forbidden
    /// The room, user or message does not exist.
    case notFound
    /// The server refused the request, for the reason it gave.
    case rejected(String)
    /// The server failed to answer properly.
    case server
    /// The network failed; the underlying error says how.
    case transport(any Error)
    /// The request was cancelled (``ChatCaveService/cancelRequest(id:)`` or task cancellation).
    case cancelled
    /// The server's answer could not be understood; the text says what was wrong.
    case invalidResponse(String)

    /// Compares the cases (and the reasons of ``rejected(_:)``); underlying errors are not compared.
    public static func == (lhs: ChatCaveError, rhs: ChatCaveError) -> Bool {
        switch (lhs, rhs) {
        case (.notAuthorized, .notAuthorized), (.forbidden, .forbidden), (.notFound, .notFound), (.server, .server),
             (.transport, .transport), (.cancelled, .cancelled), (.invalidResponse, .invalidResponse):
            return true
        case (.rejected(let left), .rejected(let right)):
            return left == right
        default:
            return false
        }
    }

    /// A sentence for people.
    public var description: String {
        switch self {
        case .notAuthorized: "Not authorized: sign in first"
        case .forbidden: "Forbidden: you may not do that"
        case .notFound: "Not found"
        case .rejected(let reason): "Rejected: \(reason)"
        case .server: "The server failed"
        case .transport(let underlying): "Network failure: \(underlying)"
        case .cancelled: "Cancelled"
        case .invalidResponse(let detail): "Unreadable answer from the server: \(detail)"
        }
    }
}

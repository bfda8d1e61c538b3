/// A request the ChatCave API refuses: a status code and the text of the `{"error": …}` body.
///
/// Every refusal of the API is one of these, thrown by the store and the handlers and turned
/// into a response by ``ChatCaveAPI``. A 401 has no body, as the contract requires.
struct APIError: Error, Sendable, Equatable {
    /// The HTTP status: 400, 401, 403, 404, 405, 406, 429, 500 or 503.
    let status: Int
    /// The human-readable text sent as `{"error": message}`.
    let message: String
    /// The methods a path allows, for a 405 (sent as `Allow`).
    var allowedMethods: [String] = []
    /// For a 429 or 503: the seconds to wait before trying again (sent as `Retry-After`).
    var retryAfter: Int?

    /// 400: the request cannot be read (malformed body, bad encoding).
    static func badRequest(_ message: String) -> APIError { APIError(status: 400, message: message) }
    /// 401: no valid credentials (empty body, `WWW-Authenticate` challenge).
    static let unauthorized = APIError(status: 401, message: "")
    /// 401 from sign-in: the name and password do not match.
    static let invalidCombination = APIError(status: 401, message: "Invalid username/password combination")
    /// 403: authenticated, but not allowed to act for someone else.
    static func forbidden(_ message: String) -> APIError { APIError(status: 403, message: message) }
    /// 404: the room, user or route does not exist.
    static func notFound(_ message: String) -> APIError { APIError(status: 404, message: message) }
    /// 405: the path exists but not with this method.
    static func methodNotAllowed(_ method: String, allowed: [String]) -> APIError {
        APIError(status: 405, message: "\(method) is not allowed here", allowedMethods: allowed)
    }
    /// 406: the request is understood but refused (empty field, duplicate name, not a member).
    static func rejected(_ message: String) -> APIError { APIError(status: 406, message: message) }
    /// 429: too many failed password attempts for this name from this address (or from this
    /// address, or for this name from an address where it never signed in).
    static func tooManyAttempts(retryAfter seconds: Int) -> APIError {
        APIError(status: 429, message: "Too many failed sign-in attempts; try again in \(seconds) s", retryAfter: seconds)
    }
    /// 429: too many sign-ups from this address.
    static func tooManySignUps(retryAfter seconds: Int) -> APIError {
        APIError(status: 429, message: "Too many sign-ups from this address; try again in \(seconds) s", retryAfter: seconds)
    }
    /// A wait in whole seconds for `Retry-After`: rounded up, at least 1.
    static func retryAfterSeconds(_ wait: Duration) -> Int {
        let (seconds, attoseconds) = wait.components
        return Int(max(1, seconds + (attoseconds > 0 ? 1 : 0)))
    }
    /// 500: the change could not be written to the store, so it was not made.
    static let notSaved = APIError(status: 500, message: "The change could not be saved, so it was not made")
    /// 500: the store could not be read.
    static let storeFailed = APIError(status: 500, message: "The data could not be read; try again")
    /// 503: every password-hashing slot and queue place (or every request worker) is taken.
    static func busy(retryAfter seconds: Int) -> APIError {
        APIError(status: 503, message: "The server is busy; try again in \(seconds) s", retryAfter: seconds)
    }

    /// The response for this refusal.
    var response: APIResponse {
        switch status {
        case 401 where message.isEmpty:
            return .unauthorized()
        case 401:
            return .unauthorized(message: message)
        case 405:
            var response = APIResponse.error(status, message)
            response.headers.append((name: "Allow", value: allowedMethods.joined(separator: ", ")))
            return response
        default:
            var response = APIResponse.error(status, message)
            if let retryAfter { response.headers.append((name: "Retry-After", value: String(retryAfter))) }
            return response
        }
    }

    static func == (lhs: APIError, rhs: APIError) -> Bool {
        lhs.status == rhs.status && lhs.message == rhs.message
    }
}

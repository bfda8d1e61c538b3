import Courier
import Foundation

/// Turning Courier's failures and the server's statuses into ``ChatCaveError``.
extension ChatCaveError {
    /// The domain error for a failed request.
    init(_ error: HTTPConnectionError) {
        if error == .cancelled {
            self = .cancelled
        } else if error == .unacceptableStatus, let response = error.response {
            self = ChatCaveError(response: response)
        } else if error == .authenticationFailed {
            self = .notAuthorized
        } else if error == .decodingFailed {
            self = .invalidResponse(error.description)
        } else if error == .tooManyRedirects || error == .redirectCycle || error == .redirectRefused || error == .badResponse {
            self = .invalidResponse(error.description)
        } else {
            self = .transport(error)
        }
    }

    /// The domain error for a response the API calls a failure.
    init(response: HTTPResponse) {
        switch response.status.code {
        case 401: self = .notAuthorized
        case 403: self = .forbidden
        case 404: self = .notFound
        case 400..<500: self = .rejected(Self.reason(in: response) ?? "The server refused the request")
        case 500..<600: self = .server
        default: self = .invalidResponse("unexpected answer \(response.status) from \(response.url.path)")
        }
    }

    /// The text of an `{"error": "…"}` body, if there is one.
    static func reason(in response: HTTPResponse) -> String? {
        struct ErrorBody: Decodable { var error: String }
        return (try? JSONDecoder().decode(ErrorBody.self, from: response.body))?.error
    }
}

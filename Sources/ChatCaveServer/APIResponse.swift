import Foundation

/// A response of the ChatCave API before it goes on the wire: status, header fields and body.
struct APIResponse: Sendable {
    /// The realm of every `WWW-Authenticate` challenge, exactly as the original server sent it.
    static let realm = "ChatCave Server"
    /// The challenge sent with every 401.
    static let challenge = "Basic realm=\"\(realm)\""

    /// The status code.
    var status: Int
    /// Header fields, in order; `Content-Length` and `Date` are added by the server core.
    var headers: [(name: String, value: String)]
    /// The body bytes.
    var body: [UInt8]

    /// A JSON response.
    /// - Parameters:
    ///   - status: the status; 200 by default.
    ///   - value: the value to encode.
    ///   - headers: extra fields (e.g. `Location`); none by default.
    /// - Returns: the response, or a 500 when the value cannot be encoded (a bug, never input).
    static func json(_ status: Int = 200, _ value: some Encodable, headers: [(name: String, value: String)] = []) -> APIResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else {
            return APIResponse(status: 500, headers: jsonType, body: Array(#"{"error":"Internal error"}"#.utf8))
        }
        return APIResponse(status: status, headers: jsonType + headers, body: [UInt8](data))
    }

    /// An error response: `{"error": message}`.
    static func error(_ status: Int, _ message: String) -> APIResponse {
        json(status, ["error": message])
    }

    /// A 401 with the `Basic realm="ChatCave Server"` challenge: no body, or `{"error": message}`.
    static func unauthorized(message: String? = nil) -> APIResponse {
        let challenge = [(name: "WWW-Authenticate", value: challenge)]
        guard let message else { return APIResponse(status: 401, headers: challenge, body: []) }
        return json(401, ["error": message], headers: challenge)
    }

    /// A 302 to `location`, with no body.
    static func redirect(to location: String) -> APIResponse {
        APIResponse(status: 302, headers: [(name: "Location", value: location)], body: [])
    }

    private static let jsonType = [(name: "Content-Type", value: "application/json; charset=utf-8")]
}

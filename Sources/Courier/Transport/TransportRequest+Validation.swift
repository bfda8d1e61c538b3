import CourierHTTP1
import Foundation

extension TransportRequest {
    /// Checks that the request can be written as HTTP/1.1 exactly as given: the method and every
    /// field name are RFC 9110 tokens, and no field value holds CR, LF or NUL.
    ///
    /// Both transports check this themselves, because requests built outside ``HTTPConnection``'s
    /// plan (an ``Authenticator``'s ``Authenticator/apply(_:to:)``, ``AuthenticationContext/send(_:)``)
    /// reach them unchecked. Nothing is rewritten: a value such as `"a\r\nX: y"` would otherwise
    /// add a field of its own (request splitting).
    /// - Throws: ``HTTPConnectionError/invalidRequest``, naming the method or the field.
    func validate() throws(HTTPConnectionError) {
        guard method.isValidToken else {
            throw .invalidRequest.with(detail: "'\(method.rawValue)' is not a valid method token")
        }
        if let bad = headers.first(where: { !Self.isValidField($0) }) {
            throw .invalidRequest.with(detail: "the header field '\(bad.name)' contains characters HTTP forbids")
        }
    }

    /// Whether a field's name is a token and its value holds no CR, LF or NUL.
    static func isValidField(_ field: HTTPHeaders.Field) -> Bool {
        HTTPField.isValidName(field.name)
            && !field.value.utf8.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }
    }
}

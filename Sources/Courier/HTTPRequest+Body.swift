import Foundation

extension HTTPRequest {
    /// A request body with its content type.
    public struct Body: Sendable {
        /// The encoded bytes; empty for ``none`` and for the bodies that are not held in memory
        /// (``stream(_:length:contentType:)``, ``file(_:contentType:)``, ``multipart(_:)``, whose
        /// bytes are in ``upload``).
        public let data: Data
        /// The `Content-Type` sent with the body; `nil` sends none.
        public let contentType: String?
        /// The body when it is not held in memory: a stream, a file or a multipart form, sent in
        /// bounded chunks; `nil` for in-memory bodies (``data``).
        public let upload: UploadBody?
        /// Why the body could not be made (a value ``json(_:encoder:)`` could not encode), or `nil`.
        /// A request with such a body is never sent: it fails with this error through the request's
        /// error path (`onError`, `completion`, the delegate, or the error an `async` call throws).
        /// Check it to find out before starting the request.
        public let encodingError: HTTPConnectionError?

        init(data: Data, contentType: String?, encodingError: HTTPConnectionError? = nil) {
            self.data = data
            self.contentType = contentType
            self.upload = nil
            self.encodingError = encodingError
        }

        init(upload: UploadBody, contentType: String?) {
            self.data = Data()
            self.contentType = contentType
            self.upload = upload
            self.encodingError = nil
        }

        /// No body.
        public static let none = Body(data: Data(), contentType: nil)

        /// Raw bytes with a content type.
        /// - Parameters:
        ///   - data: the bytes, sent as they are.
        ///   - contentType: the `Content-Type`; `application/octet-stream` by default.
        public static func data(_ data: Data, contentType: String = "application/octet-stream") -> Body {
            Body(data: data, contentType: contentType)
        }

        /// UTF-8 text.
        /// - Parameters:
        ///   - text: the text.
        ///   - contentType: the `Content-Type`; `text/plain; charset=utf-8` by default.
        public static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> Body {
            Body(data: Data(text.utf8), contentType: contentType)
        }

        /// JSON encoded from an `Encodable` value, sent as `application/json`.
        ///
        /// The value is encoded at once. When it cannot be (a `Double.nan`, a throwing `encode(to:)`),
        /// the body holds ``HTTPConnectionError/invalidBody`` in ``encodingError``, and a request
        /// carrying it fails with that error through its error path without being sent: no `try` is
        /// needed where the body is made.
        /// - Parameters:
        ///   - value: the value to encode.
        ///   - encoder: the encoder; a plain `JSONEncoder` by default.
        public static func json<Value: Encodable>(_ value: Value, encoder: JSONEncoder = JSONEncoder()) -> Body {
            do {
                return Body(data: try encoder.encode(value), contentType: "application/json")
            } catch {
                return Body(data: Data(), contentType: "application/json", encodingError: HTTPConnectionError.invalidBody.with(
                    detail: "the value could not be encoded as JSON", underlying: error))
            }
        }

        /// An `application/x-www-form-urlencoded` body from ordered pairs.
        ///
        /// Bracketed keys express nesting the way Rails and Express read it:
        /// `.form(["user[name]": "alice", "user[password]": "pw"])`. Keys and values are
        /// percent-encoded (space as `+`), so brackets travel as `%5B` and `%5D`, which every
        /// form parser decodes before reading the nesting.
        public static func form(_ pairs: KeyValuePairs<String, String>) -> Body {
            form(pairs.map { ($0.key, $0.value) })
        }

        /// An `application/x-www-form-urlencoded` body from ordered `(key, value)` pairs.
        public static func form(_ pairs: [(String, String)]) -> Body {
            Body(data: Data(URLEncoding.formEncoded(pairs).utf8),
                 contentType: "application/x-www-form-urlencoded")
        }

        /// Whether there is no body.
        public var isEmpty: Bool { data.isEmpty && contentType == nil && upload == nil }

        /// Whether the body can be sent again (by a retry, a 307 or 308 redirect, or after a
        /// `401`): in-memory bodies, files and multipart forms of those can; a stream cannot.
        public var isReplayable: Bool { upload?.isReplayable ?? true }
    }
}

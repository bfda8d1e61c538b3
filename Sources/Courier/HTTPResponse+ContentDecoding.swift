import Foundation

extension HTTPResponse {
    /// What a transport removed from a response whose body it decompressed.
    ///
    /// Once a transport has decoded a `Content-Encoding` (gzip, deflate), the server's
    /// `Content-Encoding` and `Content-Length` describe bytes the caller never sees. Both
    /// transports then take them out of ``HTTPResponse/headers`` (a collected body gets a
    /// `Content-Length` of its decoded size; a streamed one none), and keep the server's values here.
    public struct ContentDecoding: Sendable, Equatable {
        /// The server's `Content-Encoding` value, e.g. `gzip`.
        public var contentEncoding: String
        /// The server's `Content-Length`: the encoded size, if it sent one.
        public var encodedLength: Int64?

        /// Creates a description of a decoding.
        public init(contentEncoding: String, encodedLength: Int64?) {
            self.contentEncoding = contentEncoding
            self.encodedLength = encodedLength
        }

        /// Takes the fields that describe the encoded body out of `headers`, and returns them.
        /// - Parameter headers: the response's header fields, left with neither field.
        /// - Returns: the removed values; `nil`, with `headers` unchanged, when there is no
        ///   `Content-Encoding`.
        static func removeEncodedFields(from headers: inout HTTPHeaders) -> ContentDecoding? {
            guard let coding = headers["Content-Encoding"] else { return nil }
            let length = headers["Content-Length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
            headers.remove("Content-Encoding")
            headers.remove("Content-Length")
            return ContentDecoding(contentEncoding: coding, encodedLength: length)
        }
    }
}

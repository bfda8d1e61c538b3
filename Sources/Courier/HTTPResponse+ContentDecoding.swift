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

    }
}

extension HTTPResponse.Head {
    /// Makes the head describe the body the caller gets once a transport decodes its
    /// `Content-Encoding`: `Content-Encoding` and `Content-Length` leave ``headers``, and the
    /// server's values go to ``contentDecoding``. A head without `Content-Encoding` is unchanged.
    ///
    /// The one place where every transport applies this rule, for collected and streamed bodies
    /// alike; a collected body then gets its decoded `Content-Length` from
    /// ``HTTPResponse/init(collectedHead:body:)``, and a streamed one, whose decoded length is
    /// not known ahead, has none.
    mutating func describeDecodedBody() {
        guard let coding = headers["Content-Encoding"] else { return }
        let length = headers["Content-Length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        headers.remove("Content-Encoding")
        headers.remove("Content-Length")
        contentDecoding = HTTPResponse.ContentDecoding(contentEncoding: coding, encodedLength: length)
    }
}

extension HTTPResponse {
    /// A response made of a head and its complete body. When the transport decoded the body
    /// (``Head/describeDecodedBody()`` recorded ``Head/contentDecoding``), `Content-Length` gives
    /// the size of `body`, the decoded size; otherwise the head's fields are kept as they are.
    init(collectedHead head: Head, body: Data) {
        self.init(head: head, body: body)
        if head.contentDecoding != nil { headers.set(String(body.count), for: "Content-Length") }
    }
}

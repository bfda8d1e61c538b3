import Foundation

/// A complete HTTP response: status, headers, body and the URL it came from.
public struct HTTPResponse: Sendable {
    /// The status line's code, reason and kind.
    public var status: Status
    /// The header fields, in the order received.
    public var headers: HTTPHeaders
    /// The body, decompressed when the transport decoded a `Content-Encoding`.
    public var body: Data
    /// The URL of the request that produced this response (after any redirects).
    public var url: URL
    /// The trailer fields that followed the body: set by ``NativeTransport`` for an HTTP/2
    /// response that sent them (a collected body only); empty otherwise, and for HTTP/1.1,
    /// whose chunked trailers are checked against the limits and dropped.
    public var trailers: HTTPHeaders = [:]
    /// What the request cost; set on responses delivered by ``HTTPConnection``.
    public var metrics: RequestMetrics? {
        get { storedMetrics?.value }
        set { storedMetrics = newValue.map(Boxed.init) }
    }
    /// The metrics, boxed (as ``contentDecoding``): the response is copied through every stage
    /// of the pipeline and held in every frame awaiting it, so what most responses lack, or
    /// what is large, costs one pointer there.
    private var storedMetrics: Boxed<RequestMetrics>?
    /// Where the response came from: the network (the default), the cache, or the cache after
    /// the server confirmed it.
    public var source: Source = .network
    /// The server's `Content-Encoding` and `Content-Length`, when the transport decompressed the
    /// body and took them out of ``headers``; `nil` when the body arrived as the server sent it
    /// (and for a response from the cache, which stores the decoded body).
    public var contentDecoding: ContentDecoding? {
        get { storedContentDecoding?.value }
        set { storedContentDecoding = newValue.map(Boxed.init) }
    }
    private var storedContentDecoding: Boxed<ContentDecoding>?
    /// The body still arriving, for a response of ``HTTPConnection/stream(_:)`` (then ``body``
    /// is empty); `nil` for a collected response.
    var bodyStream: HTTPBodyStream?
    /// The decoder of the connection that delivered the response, for ``decode(_:decoder:)``.
    var decoder: JSONDecoder?

    /// Where a response came from.
    public enum Source: Sendable, Equatable {
        /// The server sent it.
        case network
        /// The cache answered without contacting the server.
        case cache
        /// The cache answered after the server confirmed the stored response with a 304.
        case revalidatedCache
    }

    /// Creates a response.
    public init(status: Status, headers: HTTPHeaders = [:], body: Data = Data(), url: URL) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// A response made of a head and its body.
    init(head: Head, body: Data) {
        self.init(status: head.status, headers: head.headers, body: body, url: head.url)
        contentDecoding = head.contentDecoding
    }

    /// The response head alone: status, headers, URL and content decoding, as reported before the body arrives.
    public var head: Head {
        var head = Head(status: status, headers: headers, url: url)
        head.contentDecoding = contentDecoding
        return head
    }

    /// The body as text, decoded with the `charset` of `Content-Type` (UTF-8 when absent),
    /// or `nil` when the bytes are not valid in that encoding.
    public var text: String? {
        String(data: body, encoding: Self.textEncoding(contentType: headers["Content-Type"]))
    }

    /// Decodes the body as JSON.
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - decoder: the decoder; `nil` (the default) uses the decoder of the connection that
    ///     delivered the response (``HTTPConnection/Configuration/decoder``), or a plain
    ///     `JSONDecoder` for a response made elsewhere.
    /// - Returns: the decoded value.
    /// - Throws: ``HTTPConnectionError/decodingFailed`` with the response and the decoder's error attached.
    public func decode<Value: Decodable>(_ type: Value.Type, decoder: JSONDecoder? = nil) throws(HTTPConnectionError) -> Value {
        let decoder = decoder ?? self.decoder ?? JSONDecoder()
        do {
            return try decoder.decode(type, from: body)
        } catch {
            throw HTTPConnectionError.decodingFailed.with(
                detail: "the body of \(status.code) from \(Redaction.url(url)) is not a valid \(Value.self)",
                underlying: error, response: self)
        }
    }

    /// The response head: what is known before the body arrives.
    public struct Head: Sendable {
        /// The status.
        public var status: Status
        /// The header fields.
        public var headers: HTTPHeaders
        /// The URL of the request.
        public var url: URL
        /// What the transport removed from ``headers`` because it decompresses the body; see
        /// ``HTTPResponse/contentDecoding``.
        public var contentDecoding: ContentDecoding? {
            get { storedContentDecoding?.value }
            set { storedContentDecoding = newValue.map(Boxed.init) }
        }
        private var storedContentDecoding: Boxed<ContentDecoding>?

        /// Creates a head.
        public init(status: Status, headers: HTTPHeaders, url: URL) {
            self.status = status
            self.headers = headers
            self.url = url
        }

        /// The declared body length from `Content-Length`, if any.
        public var expectedContentLength: Int64? {
            headers["Content-Length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        }
    }

    static func textEncoding(contentType: String?) -> String.Encoding {
        guard let contentType,
              let range = contentType.range(of: "charset=", options: .caseInsensitive) else { return .utf8 }
        let charset = contentType[range.upperBound...]
            .prefix { $0 != ";" }
            .trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            .lowercased()
        switch charset {
        case "iso-8859-1", "latin1": return .isoLatin1
        case "us-ascii", "ascii": return .ascii
        case "utf-16": return .utf16
        default: return .utf8
        }
    }
}

/// Immutable storage for a field of ``HTTPResponse`` kept out of line.
private final class Boxed<Value: Sendable>: Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

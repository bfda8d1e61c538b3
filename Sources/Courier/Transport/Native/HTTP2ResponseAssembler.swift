import CourierHTTP1
import CourierHTTP2
import Foundation

/// One HTTP/2 response as its stream delivers it: the head (field count limit, declared length
/// against the body limit, content decoding set up, and then no `content-encoding` or
/// `content-length` in the head, as on HTTP/1.1: see ``HTTPResponse/Head/describeDecodedBody()``), body octets (through ``HTTP1ResponseBody``,
/// so content decoding and the size limits are the same as for HTTP/1.1), trailers, and the
/// check at the end that the body matches a declared `content-length` (RFC 9113 §8.1.1).
///
/// A value with no I/O: ``HTTP2ClientConnection`` feeds it, the tests drive it directly.
struct HTTP2ResponseAssembler {
    /// What the assembler needs to know of the request.
    struct Request {
        var url: URL
        var method: String
        /// The largest body collected in memory (a streamed body has none).
        var maxBodySize: Int
        /// Whether the body is handed out as it arrives (``NativeTransport/stream(_:observer:)``).
        var streamsBody: Bool
        /// Whether an observer wants a copy of the body as it arrives.
        var observesBody: Bool
    }

    /// The transport's limits that apply.
    struct Limits {
        var maxFieldCount: Int
        var decompression: Bool
        var maxDecompressedBytes: Int
        var maxDecompressionRatio: Int

        init(maxFieldCount: Int, decompression: Bool, maxDecompressedBytes: Int, maxDecompressionRatio: Int) {
            self.maxFieldCount = maxFieldCount
            self.decompression = decompression
            self.maxDecompressedBytes = maxDecompressedBytes
            self.maxDecompressionRatio = maxDecompressionRatio
        }

        init(_ settings: NativeSettings) {
            self.init(maxFieldCount: settings.limits.maxFieldCount, decompression: settings.decompression,
                      maxDecompressedBytes: settings.maxDecompressedBytes, maxDecompressionRatio: settings.maxDecompressionRatio)
        }
    }

    let request: Request
    let limits: Limits
    /// The final head, once it arrived.
    private(set) var head: HTTPResponse.Head?
    private var body = HTTP1ResponseBody()
    /// A streamed, content-coded body's decoding, for the exchange, which decodes as its reader
    /// takes the bytes (``takeStreamedDecoding()``); ``receiveData(_:)`` hands out the encoded
    /// bytes meanwhile.
    private var streamedDecoding: StreamedBodyDecoding?
    private var trailers: HTTPHeaders = [:]
    /// The `content-length` the body must match, when declared and a body is expected.
    private var declaredLength: Int?

    init(request: Request, limits: Limits) {
        self.request = request
        self.limits = limits
    }

    /// Body octets received so far, before content decoding.
    var wireBytes: Int { body.wireBytes }

    /// The final head arrived.
    /// - Returns: the head to hand out.
    /// - Throws: ``HTTPConnectionError/headTooLarge`` past the field count limit,
    ///   ``HTTPConnectionError/bodyTooLarge`` for a declared length past the limit,
    ///   ``HTTPConnectionError/badResponse`` for a malformed `content-length`.
    mutating func receiveHead(status: Int, fields: [HPACKHeaderField]) throws(HTTPConnectionError) -> HTTPResponse.Head {
        if fields.count > limits.maxFieldCount {
            throw .headTooLarge.with(detail: "the HTTP/2 response head has more than \(limits.maxFieldCount) fields")
        }
        var headers: [HTTPHeaders.Field] = []
        headers.reserveCapacity(fields.count)
        for field in fields { headers.append(HTTPHeaders.Field(name: field.name, value: field.value)) }
        var delivered = HTTPResponse.Head(status: HTTPResponse.Status(code: status), headers: HTTPHeaders(headers), url: request.url)
        let expectsBody = BodyFraming.responseCanHaveBody(status: status, requestMethod: request.method)
        let limit = request.streamsBody ? Int.max : request.maxBodySize
        if expectsBody, let text = delivered.headers["content-length"] {
            guard let length = Int(text), length >= 0 else {
                throw .badResponse.with(detail: "the HTTP/2 response's content-length is not a number")
            }
            if length > limit { throw NativeErrors.bodyTooLarge(limit: limit, declared: length) }
            declaredLength = length
        }
        var contentDecoder: ContentDecoder?
        if limits.decompression, expectsBody, let coding = delivered.headers["content-encoding"] {
            contentDecoder = ContentDecoder(contentEncoding: coding,
                                            maxOutputBytes: request.streamsBody ? .max : limits.maxDecompressedBytes,
                                            maxRatio: limits.maxDecompressionRatio)
            // A decoded body is not what content-encoding and content-length describe: they go, kept aside.
            delivered.describeDecodedBody()
        }
        // A streamed body is decoded as its reader takes it, so that a paused reader holds a
        // bounded number of decoded bytes whatever the ratio: the exchange gets the decoder.
        streamedDecoding = request.streamsBody ? contentDecoder.map(StreamedBodyDecoding.init) : nil
        body = HTTP1ResponseBody(limit: limit, declaredLength: declaredLength.map { Int64($0) },
                                 contentDecoder: request.streamsBody ? nil : contentDecoder,
                                 reservesDeclaredLength: !request.streamsBody)
        head = delivered
        return delivered
    }

    /// Hands the streamed body's content decoding to the exchange (once: later calls give `nil`).
    mutating func takeStreamedDecoding() -> StreamedBodyDecoding? {
        defer { streamedDecoding = nil }
        return streamedDecoding
    }

    /// Body octets arrived.
    /// - Returns: the bytes to hand out now: all of them for a streamed body (still encoded when
    ///   the exchange decodes them, see ``takeStreamedDecoding()``), a decoded copy for an
    ///   observer; `nil` when there is nothing to hand out.
    /// - Throws: ``HTTPConnectionError/bodyTooLarge``, ``HTTPConnectionError/decompressionFailed``.
    mutating func receiveData(_ bytes: [UInt8]) throws(HTTPConnectionError) -> Data? {
        do {
            try bytes.withUnsafeBytes { try body.append($0) }
        } catch let error as HTTPConnectionError {
            throw error
        } catch let error as HTTP1Error {
            throw NativeErrors.http(error)
        } catch {
            throw .badResponse.with(detail: "\(error)", underlying: error)
        }
        if let declaredLength, body.wireBytes > declaredLength {
            throw .badResponse.with(detail: "the HTTP/2 response's body is longer than its content-length of \(declaredLength)")
        }
        if request.streamsBody { return body.takeAll() }
        if request.observesBody { return body.takeUnobserved() }
        return nil
    }

    /// The trailer fields arrived (they end the stream).
    mutating func receiveTrailers(_ fields: [HPACKHeaderField]) {
        trailers = HTTPHeaders(fields.map { HTTPHeaders.Field(name: $0.name, value: $0.value) })
    }

    /// The stream ended: the complete response.
    /// - Throws: ``HTTPConnectionError/badResponse`` without a head, or for a body shorter than
    ///   its `content-length`; ``HTTPConnectionError/decompressionFailed`` for a truncated
    ///   compressed body.
    mutating func finish() throws(HTTPConnectionError) -> HTTPResponse {
        guard let head else { throw .badResponse.with(detail: "the HTTP/2 stream ended without a response head") }
        if let declaredLength, body.wireBytes != declaredLength {
            throw .badResponse.with(detail: "the HTTP/2 response's body of \(body.wireBytes) bytes is shorter than its content-length of \(declaredLength)")
        }
        do throws(HTTP1Error) {
            try body.finish()
        } catch {
            throw NativeErrors.http(error)
        }
        var response = HTTPResponse(collectedHead: head, body: body.takeData())
        response.trailers = trailers
        return response
    }
}

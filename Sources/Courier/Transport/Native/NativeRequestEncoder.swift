import CourierHTTP1
import Foundation

/// Writes a request head (and a small body) in HTTP/1.1 wire form, in one buffer, so that it
/// goes out in one system call. A body that is not in memory (``TransportRequest/upload``) is
/// announced with its `Content-Length`, or `Transfer-Encoding: chunked` when its length is
/// unknown, and written later by ``NativeUpload``.
///
/// The transport frames bodies itself: a `Content-Length` or `Transfer-Encoding` given by the
/// caller is replaced by the body's real length. A request whose method or field names are not
/// tokens, or whose values hold CR, LF or NUL, is refused (``TransportRequest/validate()``), so a
/// bad value can never inject a field, even from a request that bypassed the pipeline.
enum NativeRequestEncoder {
    /// The `User-Agent` sent unless a request sets its own.
    static let userAgent = "Courier/\(NativeTransport.version)"
    /// Bodies up to this size are copied behind the head; larger ones are written from their own storage.
    static let inlineBodyLimit = 64 * 1024

    /// Encodes `request`.
    /// - Parameters:
    ///   - request: the request.
    ///   - target: its parsed URL.
    ///   - acceptEncoding: whether to add `Accept-Encoding: gzip, deflate` when absent.
    ///   - holdsBody: whether the body waits for `100 Continue` (``TransportRequest/expectsContinue``): it is
    ///     then never copied behind the head.
    /// - Returns: the head, followed by the body when it is small (`bodyInlined`).
    /// - Throws: ``HTTPConnectionError/invalidRequest`` for a method, name or value HTTP forbids.
    static func encode(_ request: TransportRequest, target: NativeRequestTarget,
                       acceptEncoding: Bool, holdsBody: Bool = false) throws(HTTPConnectionError) -> (wire: [UInt8], bodyInlined: Bool) {
        try request.validate()
        let body = request.body
        let inline = body.count <= inlineBodyLimit && !holdsBody
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128 + target.path.utf8.count + request.headers.count * 40 + (inline ? body.count : 0))
        append(request.method.rawValue, to: &bytes)
        bytes.append(0x20)
        append(target.path, to: &bytes)
        appendLiteral(" HTTP/1.1\r\nHost: ", to: &bytes)
        var hasUserAgent = false
        var hasAcceptEncoding = false
        if let host = request.headers["Host"] {
            append(host, to: &bytes)
        } else {
            append(target.hostField, to: &bytes)
        }
        bytes.append(0x0D)
        bytes.append(0x0A)
        for field in request.headers {
            switch classify(field.name) {
            case .host, .framing: continue
            case .proxyAuthorization where target.proxyAuthorization != nil: continue
            case .userAgent: hasUserAgent = true
            case .acceptEncoding: hasAcceptEncoding = true
            case .proxyAuthorization, .other: break
            }
            append(field.name, to: &bytes)
            bytes.append(0x3A)
            bytes.append(0x20)
            append(field.value, to: &bytes)
            bytes.append(0x0D)
            bytes.append(0x0A)
        }
        if !hasUserAgent {
            appendLiteral("User-Agent: ", to: &bytes)
            append(userAgent, to: &bytes)
            bytes.append(0x0D)
            bytes.append(0x0A)
        }
        if let proxyAuthorization = target.proxyAuthorization {
            appendLiteral("Proxy-Authorization: ", to: &bytes)
            append(proxyAuthorization, to: &bytes)
            bytes.append(0x0D)
            bytes.append(0x0A)
        }
        if acceptEncoding && !hasAcceptEncoding {
            appendLiteral("Accept-Encoding: gzip, deflate\r\n", to: &bytes)
        }
        if let upload = request.upload {
            if let length = upload.length {
                appendLiteral("Content-Length: ", to: &bytes)
                append(String(length), to: &bytes)
                bytes.append(0x0D)
                bytes.append(0x0A)
            } else {
                appendLiteral("Transfer-Encoding: chunked\r\n", to: &bytes)
            }
        } else if !body.isEmpty || sendsEmptyLength(request.method) {
            appendLiteral("Content-Length: ", to: &bytes)
            append(String(body.count), to: &bytes)
            bytes.append(0x0D)
            bytes.append(0x0A)
        }
        bytes.append(0x0D)
        bytes.append(0x0A)
        if inline && !body.isEmpty {
            bytes.append(contentsOf: body)
        }
        return (bytes, inline)
    }

    /// Whether a method announces an empty body with `Content-Length: 0` (RFC 9110 §8.6).
    static func sendsEmptyLength(_ method: HTTPRequest.Method) -> Bool {
        switch method.rawValue {
        case "POST", "PUT", "PATCH": true
        default: false
        }
    }

    /// The fields the encoders write themselves, and the rest.
    enum FieldKind { case host, framing, userAgent, acceptEncoding, proxyAuthorization, other }

    /// Recognises the fields the encoders write themselves, without allocating.
    static func classify(_ name: String) -> FieldKind {
        switch name.utf8.count {
        case 4 where HTTPHeaders.sameName(name, "Host"): .host
        case 10 where HTTPHeaders.sameName(name, "User-Agent"): .userAgent
        case 14 where HTTPHeaders.sameName(name, "Content-Length"): .framing
        case 15 where HTTPHeaders.sameName(name, "Accept-Encoding"): .acceptEncoding
        case 17 where HTTPHeaders.sameName(name, "Transfer-Encoding"): .framing
        case 19 where HTTPHeaders.sameName(name, "Proxy-Authorization"): .proxyAuthorization
        default: .other
        }
    }

    /// Appends text (validated already, or a URL's path and host, which cannot hold CR, LF or NUL).
    private static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: text.utf8)
    }

    private static func appendLiteral(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}

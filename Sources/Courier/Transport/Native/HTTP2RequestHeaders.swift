import CourierHTTP2
import Foundation

/// A request's field block for HTTP/2 (RFC 9113 §8.3.1): the pseudo-header fields, then the
/// caller's fields in lowercase, without the connection-specific ones HTTP/2 forbids.
///
/// The same defaults as ``NativeRequestEncoder`` writes for HTTP/1.1: `user-agent` and, while
/// decompression is on, `accept-encoding` unless the request sets them, `content-length` for a
/// body of known length (the caller's own framing fields are replaced). `Host` becomes
/// `:authority`.
enum HTTP2RequestHeaders {
    /// The fields for `request`.
    /// - Parameters:
    ///   - request: the request (validated by ``NativeRequestEncoder`` already).
    ///   - target: its parsed URL (origin form: HTTP/2 is never spoken to a forwarding proxy).
    ///   - secure: whether the connection is `https`.
    ///   - acceptEncoding: whether to add `accept-encoding: gzip, deflate` when absent.
    /// - Returns: the field list, pseudo-header fields first.
    static func fields(for request: TransportRequest, target: NativeRequestTarget, secure: Bool,
                       acceptEncoding: Bool) -> [HPACKHeaderField] {
        var fields: [HPACKHeaderField] = []
        fields.reserveCapacity(request.headers.count + 8)
        fields.append(HPACKHeaderField(name: ":method", value: request.method.rawValue))
        fields.append(HPACKHeaderField(name: ":scheme", value: secure ? "https" : "http"))
        fields.append(HPACKHeaderField(name: ":authority", value: request.headers["Host"] ?? target.hostField))
        fields.append(HPACKHeaderField(name: ":path", value: target.path))
        var hasUserAgent = false
        var hasAcceptEncoding = false
        for field in request.headers {
            switch NativeRequestEncoder.classify(field.name) {
            case .host, .framing: continue
            case .userAgent: hasUserAgent = true
            case .acceptEncoding: hasAcceptEncoding = true
            case .proxyAuthorization, .other: break
            }
            let name = field.name.lowercased()
            if isConnectionSpecific(name, value: field.value) { continue }
            fields.append(HPACKHeaderField(name: name, value: field.value))
        }
        if !hasUserAgent { fields.append(HPACKHeaderField(name: "user-agent", value: NativeRequestEncoder.userAgent)) }
        if acceptEncoding && !hasAcceptEncoding {
            fields.append(HPACKHeaderField(name: "accept-encoding", value: "gzip, deflate"))
        }
        if let upload = request.upload {
            if let length = upload.length { fields.append(HPACKHeaderField(name: "content-length", value: String(length))) }
        } else if !request.body.isEmpty || NativeRequestEncoder.sendsEmptyLength(request.method) {
            fields.append(HPACKHeaderField(name: "content-length", value: String(request.body.count)))
        }
        return fields
    }

    /// Whether HTTP/2 forbids the field (RFC 9113 §8.2.2): `te` is allowed only as `trailers`.
    static func isConnectionSpecific(_ lowercasedName: String, value: String) -> Bool {
        switch lowercasedName {
        case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
            return true
        case "te":
            return value.lowercased() != "trailers"
        default:
            return false
        }
    }
}

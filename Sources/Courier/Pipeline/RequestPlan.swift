import Foundation

/// A request resolved against its connection: the absolute URL, the merged headers and the
/// effective settings, each taken from the request, else the connection, else the global default.
struct RequestPlan: Sendable {
    let transportRequest: TransportRequest
    let cachePolicy: CachePolicy
    let retryPolicy: RetryPolicy
    let redirectPolicy: RedirectPolicy
    let deadline: Duration?
    /// The request's upload progress closure.
    var uploadProgress: (@Sendable (Int64, Int64?) -> Void)?

    init(_ request: borrowing HTTPRequest, connection: HTTPConnection, settings: HTTPConnection.Settings) throws(HTTPConnectionError) {
        let url = try Self.url(for: request, baseURL: connection.baseURL)
        // Default headers often carry a credential: they go only to the base URL's origin, and
        // count as credentials there (dropped on a cross-origin redirect, redacted in logs).
        let sendsDefaults = connection.baseURL.map { URLOrigin.same($0, url) } ?? true
        let defaults = sendsDefaults ? settings.headers : [:]
        self.transportRequest = try Self.transportRequest(
            for: request, url: url, defaultHeaders: defaults,
            timeout: settings.timeout ?? HTTPConnection.defaultTimeout,
            maxResponseBodySize: settings.maxResponseBodySize)
        self.cachePolicy = request.cachePolicy ?? settings.cachePolicy ?? HTTPConnection.defaultCachePolicy
        self.retryPolicy = request.retryPolicy ?? settings.retryPolicy ?? HTTPConnection.defaultRetryPolicy
        self.redirectPolicy = request.redirectPolicy ?? settings.redirectPolicy
        self.deadline = request.deadline ?? settings.deadline
        self.uploadProgress = request.onUploadProgress
    }

    /// The request as a transport sends it: its body's encoding error thrown, the method and every
    /// header field checked, the default headers under the request's own, the body's content type
    /// added, and the request's timeout and body limit, else the given ones.
    /// - Parameters:
    ///   - request: the request.
    ///   - url: its absolute URL (``url(for:baseURL:)``).
    ///   - defaultHeaders: fields the request's own fields of the same name override; they count as
    ///     default headers (``TransportRequest/defaultHeaderNames``).
    ///   - timeout: the per-attempt timeout when the request sets none.
    ///   - maxResponseBodySize: the body limit when the request sets none.
    static func transportRequest(for request: HTTPRequest, url: URL, defaultHeaders: HTTPHeaders,
                                 timeout: Duration, maxResponseBodySize: Int) throws(HTTPConnectionError) -> TransportRequest {
        if let encodingError = request.body.encodingError { throw encodingError }
        guard request.method.isValidToken else {
            throw .invalidRequest.with(detail: "'\(request.method.rawValue)' is not a valid method token")
        }
        var headers = defaultHeaders
        headers.merge(request.headers)
        if let contentType = request.body.contentType, !headers.contains("Content-Type") {
            headers.set(contentType, for: "Content-Type")
        }
        if let bad = headers.first(where: { !TransportRequest.isValidField($0) }) {
            throw .invalidRequest.with(detail: "the header field '\(bad.name)' contains characters HTTP forbids")
        }
        var transportRequest = TransportRequest(
            method: request.method,
            url: url,
            headers: headers,
            body: request.body.data,
            timeout: request.timeout ?? timeout,
            maxResponseBodySize: request.maxResponseBodySize ?? maxResponseBodySize)
        transportRequest.upload = request.body.upload
        transportRequest.defaultHeaderNames = Set(defaultHeaders.map { $0.name.lowercased() })
        return transportRequest
    }

    /// A plan for a request made by Courier itself (a token request): no retries, and redirects
    /// followed within the origin only, so that a body holding a password never goes elsewhere.
    init(bypassing request: TransportRequest) {
        self.transportRequest = request
        self.cachePolicy = .reloadIgnoringCache
        self.retryPolicy = .never
        self.redirectPolicy = .sameOriginOnly
        self.deadline = nil
    }

    /// A copy with another redirect policy.
    init(copying plan: RequestPlan, redirectPolicy: RedirectPolicy) {
        self.transportRequest = plan.transportRequest
        self.cachePolicy = plan.cachePolicy
        self.retryPolicy = plan.retryPolicy
        self.redirectPolicy = redirectPolicy
        self.deadline = plan.deadline
        self.uploadProgress = plan.uploadProgress
    }

    /// Resolves a target against a base URL and appends the query.
    ///
    /// An absolute target (one that starts with `scheme://`) is used as it is; anything else, such
    /// as `/r?u=http://x`, is relative. A relative one is appended to the
    /// base URL's path with exactly one `/` between them, so `https://h/api` + `/rooms` gives
    /// `https://h/api/rooms`. A query already in the target is kept; query items follow it.
    static func url(for request: HTTPRequest, baseURL: URL?) throws(HTTPConnectionError) -> URL {
        let target = request.target
        var text: String
        if isAbsolute(target) {
            text = target
        } else if let baseURL {
            var base = baseURL.absoluteString
            if let fragment = base.firstIndex(of: "#") { base = String(base[..<fragment]) }
            if let query = base.firstIndex(of: "?") { base = String(base[..<query]) }
            while base.hasSuffix("/") { base.removeLast() }
            let relative = target.drop { $0 == "/" }
            text = relative.isEmpty ? base + "/" : base + "/" + relative
        } else {
            throw .invalidURL.with(detail: "'\(target)' is relative and the connection has no base URL")
        }
        if !request.query.isEmpty {
            let separator = text.contains("?") ? (text.hasSuffix("?") || text.hasSuffix("&") ? "" : "&") : "?"
            text += separator + URLEncoding.query(request.query)
        }
        guard let url = URL(string: text), isHTTPWithHost(&text) else {
            let shown = URL(string: text).map { "'\(Redaction.url($0))'" } ?? "the target"
            throw .invalidURL.with(detail: "\(shown) is not an absolute http or https URL")
        }
        return url
    }

    /// Whether `text` is an absolute `http` or `https` URL with a host and a usable port: the
    /// transport's own split (``URLSplit``), one pass over the bytes, nothing decoded. A target
    /// and a redirect's `Location` (``RedirectStage``) must both pass it.
    static func isHTTPWithHost(_ text: inout String) -> Bool {
        text.makeContiguousUTF8()
        return text.utf8.withContiguousStorageIfAvailable(URLSplit.isUsable) ?? false
    }

    /// Whether the target starts with a scheme and `://` (RFC 3986: a letter, then letters,
    /// digits, `+`, `-` or `.`).
    static func isAbsolute(_ target: String) -> Bool {
        var target = target
        target.makeContiguousUTF8()
        return target.utf8.withContiguousStorageIfAvailable { bytes in
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, isLetter(bytes[0]),
                  bytes.count >= colon + 3, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else {
                return false
            }
            return bytes[..<colon].allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || "+-.".utf8.contains($0) }
        } ?? false
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte | 0x20)
    }
}

import Foundation

/// Sends one HTTP request over the wire and returns its response.
///
/// A transport knows nothing of retries, redirects, authentication or caching: the request
/// pipeline above it owns those, so that they behave the same on every transport. A transport
/// must not follow redirects, store cookies or cache.
///
/// Implementations must be safe to call from many tasks at once and must honour Swift task
/// cancellation promptly, ending with ``HTTPConnectionError/cancelled``.
public protocol Transport: Sendable {
    /// Sends one request and collects its response.
    /// - Parameters:
    ///   - request: the fully resolved request.
    ///   - observer: receives the head and body bytes as they arrive.
    /// - Returns: the response, whatever its status.
    /// - Throws: an ``HTTPConnectionError`` describing why no complete response arrived.
    func send(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPResponse

    /// Sends one request and returns as soon as the response head arrives; the body follows
    /// through the returned stream, with backpressure (see ``HTTPBodyStream``).
    /// - Parameters:
    ///   - request: the fully resolved request. Its `maxResponseBodySize` does not apply.
    ///   - observer: receives the head, and the body bytes as they arrive if it asks for them.
    /// - Returns: the head and the body's stream.
    /// - Throws: an ``HTTPConnectionError`` describing why no response head arrived;
    ///   ``HTTPConnectionError/unsupportedByTransport`` from a transport that cannot stream.
    func stream(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPStreamingResponse

    /// The executor on which requests to `origin` cost least to run, if the transport has one.
    ///
    /// ``HTTPConnection`` runs the pipeline (its stages, then ``send(_:observer:)``) of a request
    /// on a task of its own on this executor, unless its cache keeps files on disk. Such
    /// requests are those of the closure and delegate styles, `stream` callers', and any on a
    /// transport that cannot run a request in its `async` caller's task; an `async` caller's
    /// request to ``NativeTransport`` runs in the caller's own task instead.
    /// ``NativeTransport`` answers with the event loop that owns the origin's connection pool
    /// while no other request is in flight, so that a request is written, read and resumed on
    /// one thread, with no thread wake-up between the network and the pipeline. The default
    /// answer is `nil`: Swift's global concurrent executor.
    /// - Parameter origin: a URL on the origin, or `nil` when unknown.
    /// - Returns: the executor, or `nil` for the global one.
    func preferredTaskExecutor(for origin: URL?) -> (any TaskExecutor)?

    /// The executor that does the network I/O of requests to `origin`, if the transport has one,
    /// whatever is in flight: what ``HTTPConnection/executor`` gives callers that send one
    /// request after another. ``NativeTransport`` answers with the event loop that owns (or
    /// will own) the origin's connection pool. The default answer is `nil`.
    /// - Parameter origin: a URL on the origin, or `nil` when unknown.
    /// - Returns: the executor, or `nil`.
    func ioExecutor(for origin: URL?) -> (any TaskExecutor)?
}

extension Transport {
    /// Fails with ``HTTPConnectionError/unsupportedByTransport``: this transport cannot stream.
    /// - Parameters:
    ///   - request: the request, not sent.
    ///   - observer: unused.
    /// - Throws: always.
    public func stream(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPStreamingResponse {
        throw .unsupportedByTransport.with(detail: "\(type(of: self)) cannot stream response bodies")
    }

    /// `nil`: requests run on Swift's global concurrent executor.
    /// - Parameter origin: unused.
    /// - Returns: `nil`.
    public func preferredTaskExecutor(for origin: URL?) -> (any TaskExecutor)? { nil }

    /// `nil`: the transport has no executor of its own.
    /// - Parameter origin: unused.
    /// - Returns: `nil`.
    public func ioExecutor(for origin: URL?) -> (any TaskExecutor)? { nil }
}

/// One request as a transport sends it: the URL, headers and settings are all resolved.
public struct TransportRequest: Sendable {
    /// The method.
    public var method: HTTPRequest.Method
    /// The absolute URL.
    public var url: URL
    /// Every header field to send, including `Content-Type` for the body.
    public var headers: HTTPHeaders
    /// The body bytes; empty for none, and for a body that is not in memory (``upload``).
    public var body: Data
    /// The body when it is not in memory (a stream, a file, a multipart form), sent in bounded
    /// chunks; `nil` when ``body`` holds it. A transport that cannot send it fails with
    /// ``HTTPConnectionError/unsupportedByTransport``.
    public var upload: UploadBody?
    /// The longest silence allowed while connecting or waiting for bytes.
    public var timeout: Duration
    /// The largest response body accepted, in bytes.
    public var maxResponseBodySize: Int
    /// Lowercased names of the fields an ``Authenticator`` applied: credentials, whatever their names.
    public var credentialHeaderNames: Set<String> = []
    /// Lowercased names of the fields that came from the connection's default headers, which may
    /// hold a credential and so are treated as one (``isCredential(_:)``).
    public var defaultHeaderNames: Set<String> = []
    /// The `Cookie` field value a ``CookieJar`` added, so that a later hop replaces it rather
    /// than taking it for the caller's own; `nil` when the jar added none.
    var cookieJarField: String?

    /// Creates a transport request.
    public init(method: HTTPRequest.Method, url: URL, headers: HTTPHeaders = [:], body: Data = Data(),
                timeout: Duration = .seconds(60), maxResponseBodySize: Int = 64 << 20) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBodySize = maxResponseBodySize
    }

    /// Whether the field `name` is treated as a credential in this request: a well-known
    /// credential name (``HTTPHeaders/isSensitive(_:)``), a field an authenticator applied, or a
    /// default header. Such fields are dropped on a cross-origin redirect, redacted in logs, and
    /// partition the cache, so a response is never served to a request with other values.
    public func isCredential(_ name: String) -> Bool {
        let lower = name.lowercased()
        return HTTPHeaders.isSensitive(name) || credentialHeaderNames.contains(lower) || defaultHeaderNames.contains(lower)
    }

    /// Whether the request certainly carries a credential: a field with a well-known credential
    /// name or one an authenticator applied. A cache stores the response to such a request only
    /// when `Cache-Control` allows it explicitly. (Default headers such as `Accept` do not count
    /// here; they only partition the cache.)
    public var carriesCredentials: Bool {
        headers.contains { isCertainCredential($0.name) }
    }

    /// Whether the field `name` is certainly a credential: a well-known credential name or a field
    /// an authenticator applied (default headers only may be one).
    func isCertainCredential(_ name: String) -> Bool {
        HTTPHeaders.isSensitive(name) || credentialHeaderNames.contains(name.lowercased())
    }
}

/// Hears a transport's progress on one request.
public protocol TransportObserver: Sendable {
    /// Whether body bytes should be reported; when `false` a transport may skip copying them.
    var observesBody: Bool { get }
    /// A response head arrived.
    func transportDidReceiveHead(_ head: HTTPResponse.Head)
    /// Body bytes arrived.
    /// - Parameters:
    ///   - data: the bytes that just arrived (after content decoding).
    ///   - bytesSoFar: the body bytes received so far.
    ///   - expectedTotal: the declared length, if known.
    func transportDidReceiveBody(_ data: Data, bytesSoFar: Int64, expectedTotal: Int64?)
    /// The attempt ended (successfully or not) and these are its timings and byte counts.
    func transportDidCollect(_ metrics: TransportMetrics)
    /// Request body bytes went out (for bodies not in memory, ``TransportRequest/upload``),
    /// reported at most every 64 KiB or 50 ms, and once at the end.
    /// - Parameters:
    ///   - bytesSent: the body bytes written so far (framing not counted).
    ///   - expectedTotal: the body's length, if known.
    func transportDidSendBody(bytesSent: Int64, expectedTotal: Int64?)
}

extension TransportObserver {
    /// Ignores the progress.
    public func transportDidSendBody(bytesSent: Int64, expectedTotal: Int64?) {}

    /// Ignores the metrics.
    public func transportDidCollect(_ metrics: TransportMetrics) {}
}

/// An observer that ignores everything.
public struct IgnoringTransportObserver: TransportObserver {
    /// Creates the observer.
    public init() {}
    /// `false`.
    public var observesBody: Bool { false }
    /// Does nothing.
    public func transportDidReceiveHead(_ head: HTTPResponse.Head) {}
    /// Does nothing.
    public func transportDidReceiveBody(_ data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {}
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

import Foundation

extension HTTPConnection {
    /// The settings of a connection, given when it is created.
    public struct Configuration: Sendable {
        /// The per-attempt timeout; `nil` (the default) uses ``HTTPConnection/defaultTimeout``.
        public var timeout: Duration?
        /// The cache policy; `nil` (the default) uses ``HTTPConnection/defaultCachePolicy``.
        public var cachePolicy: CachePolicy?
        /// The retry policy; `nil` (the default) uses ``HTTPConnection/defaultRetryPolicy``.
        public var retryPolicy: RetryPolicy?
        /// Which responses are successes; 2xx by default.
        public var validation: ResponseValidation
        /// Header fields sent with every request to the base URL's origin (to every request when
        /// there is no base URL); none by default. They are treated as credentials: dropped on a
        /// redirect to another origin and redacted in events.
        public var headers: HTTPHeaders
        /// The largest response body accepted, in bytes, unless a request says otherwise; 64 MiB by default.
        public var maxResponseBodySize: Int
        /// The queue for delegate calls and closures; `nil` (the default) makes a private serial queue.
        public var callbackQueue: DispatchQueue?
        /// The transport; `nil` (the default) uses ``HTTPConnection/defaultTransport``.
        public var transport: (any Transport)?
        /// How redirects are followed; ``RedirectPolicy/follow`` (up to 10) by default.
        public var redirectPolicy: RedirectPolicy
        /// The whole-request deadline of this connection's requests; `nil` (none) by default.
        public var deadline: Duration?
        /// The clock for backoff delays and `Retry-After`; ``SystemRequestClock`` by default.
        public var clock: any RequestClock
        /// Hears every request and response, with credentials redacted; `nil` by default.
        public var eventMonitor: EventMonitor?
        /// The HTTP cache; `nil` for none. By default a new private ``HTTPCache`` (in memory,
        /// 16 MiB) for each configuration, so connections made with default configurations never
        /// share responses. Pass one cache to several connections only when they act for the same
        /// user, or pass ``HTTPCache/shared`` (shared-cache rules); either way, responses are
        /// partitioned by the requests' credentials.
        public var cache: HTTPCache?
        /// The cookie jar that stores the responses' cookies and sends them back (RFC 6265);
        /// `nil` by default: no cookies are kept. One jar may be shared by several connections.
        public var cookieJar: CookieJar? = nil
        /// Records every exchange on the wire as an HTTP Archive, credentials redacted; `nil` by default.
        public var harRecorder: HARRecorder? = nil
        /// Whether identical GET and HEAD requests that overlap share one exchange; `false` by default.
        ///
        /// While a request is in flight, a request with the same method, URL, header fields
        /// (credentials included), body limit, timeout, retry policy and redirect policy waits for
        /// its response instead of sending its own. Each caller still gets its own terminal
        /// callback; one that is cancelled, or meets its deadline, leaves alone, and when the
        /// request that went out is cancelled or meets its deadline, the waiting ones go out again
        /// themselves. Requests with a body, streamed responses, and requests whose retry or
        /// redirect policy decides with a closure are never coalesced. A request that waits on
        /// another sees no progress events and counts no attempt in its metrics, and shares the
        /// exchange's clock: a silence that began before it joined counts toward its timeout.
        public var coalescesRequests = false
        /// The decoder ``HTTPResponse/decode(_:decoder:)`` uses for this connection's responses
        /// when it is given none; a plain `JSONDecoder()` by default. Set its strategies (dates,
        /// keys) once here instead of at every call. Do not change it once the connection exists.
        public var decoder: JSONDecoder = JSONDecoder()
        /// Where an `async` caller's request runs: in the caller's task whenever it can; tests pin
        /// a task of its own.
        var awaitedRequestPlacement = AwaitedRequestPlacement.callersTask

        /// Creates a configuration with every setting at its default.
        public init(
            timeout: Duration? = nil,
            cachePolicy: CachePolicy? = nil,
            retryPolicy: RetryPolicy? = nil,
            validation: ResponseValidation = .successStatusCodes,
            headers: HTTPHeaders = [:],
            maxResponseBodySize: Int = 64 << 20,
            callbackQueue: DispatchQueue? = nil,
            transport: (any Transport)? = nil,
            redirectPolicy: RedirectPolicy = .follow,
            deadline: Duration? = nil,
            clock: any RequestClock = SystemRequestClock(),
            eventMonitor: EventMonitor? = nil,
            cache: HTTPCache? = HTTPCache()
        ) {
            self.timeout = timeout
            self.cachePolicy = cachePolicy
            self.retryPolicy = retryPolicy
            self.validation = validation
            self.headers = headers
            self.maxResponseBodySize = maxResponseBodySize
            self.callbackQueue = callbackQueue
            self.transport = transport
            self.redirectPolicy = redirectPolicy
            self.deadline = deadline
            self.clock = clock
            self.eventMonitor = eventMonitor
            self.cache = cache
        }
    }
}

extension TestServer {
    /// Limits, timeouts and connection-level faults of a ``TestServer``.
    public struct Configuration: Sendable {
        /// Close every accepted connection immediately, before reading the request
        /// (reliability case A2). Default: `false`.
        public var closeBeforeReading: Bool
        /// How long a request head may take before the connection is closed
        /// (slowloris protection). Default: 10 seconds.
        public var headerTimeout: Duration
        /// How long an idle keep-alive connection is kept. Default: 60 seconds.
        public var idleTimeout: Duration
        /// How long a whole request body may take to arrive; a slower one gets `408` and the
        /// connection closes. Default: 30 seconds.
        public var bodyTimeout: Duration
        /// The largest request body accepted; larger ones get `413`. Default: 8 MiB.
        public var maxBodyBytes: Int
        /// The largest request head accepted; larger ones get `431`. Default: 64 KiB.
        public var maxHeadBytes: Int
        /// The most request header fields accepted; more get `431`. Default: 100.
        public var maxHeaderFields: Int
        /// How many event loop threads serve connections. Default: 1.
        public var eventLoopCount: Int
        /// Misbehaving-proxy mode: every request (a proxy's `CONNECT` or absolute-form request
        /// included) is answered with this fault instead of being routed. Default: `nil` (off).
        public var proxyFault: ProxyFault? = nil
        /// Listen on a new Unix domain socket at this path instead of on `127.0.0.1`: ``port``
        /// is then 0 and ``baseURL`` is `http://courier.test` (route that host to the path).
        /// The socket file is removed at shutdown. Default: `nil` (TCP).
        public var unixSocketPath: String? = nil
        /// The send buffer (`SO_SNDBUF`) of every accepted socket: small, so that a client that
        /// stops reading soon holds the server back. Default: `nil` (the kernel's).
        public var sendBufferSize: Int? = nil

        /// Creates a configuration; every parameter has the default described on its property.
        ///
        /// - Parameters:
        ///   - closeBeforeReading: Default `false`.
        ///   - headerTimeout: Default 10 seconds.
        ///   - idleTimeout: Default 60 seconds.
        ///   - bodyTimeout: Default 30 seconds.
        ///   - maxBodyBytes: Default 8 MiB.
        ///   - maxHeadBytes: Default 64 KiB.
        ///   - maxHeaderFields: Default 100.
        ///   - eventLoopCount: Default 1.
        public init(
            closeBeforeReading: Bool = false,
            headerTimeout: Duration = .seconds(10),
            idleTimeout: Duration = .seconds(60),
            bodyTimeout: Duration = .seconds(30),
            maxBodyBytes: Int = 8 << 20,
            maxHeadBytes: Int = 65_536,
            maxHeaderFields: Int = 100,
            eventLoopCount: Int = 1
        ) {
            self.closeBeforeReading = closeBeforeReading
            self.headerTimeout = headerTimeout
            self.idleTimeout = idleTimeout
            self.bodyTimeout = bodyTimeout
            self.maxBodyBytes = maxBodyBytes
            self.maxHeadBytes = maxHeadBytes
            self.maxHeaderFields = maxHeaderFields
            self.eventLoopCount = eventLoopCount
        }
    }
}

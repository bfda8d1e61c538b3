extension NativeTransport {
    /// The settings of a ``NativeTransport``, fixed when it is created.
    public struct Configuration: Sendable {
        /// The most connections open at once to one (scheme, host, port). Requests beyond it wait
        /// in a first-in, first-out queue. Default: 8. Values below 1 count as 1.
        public var maxConnectionsPerHost: Int
        /// How long a pooled keep-alive connection may sit unused before it is closed.
        /// Default: 60 seconds.
        public var idleTimeout: Duration
        /// The longest resolving, connecting (the whole race between a host's addresses, see
        /// ``connectionAttemptDelay``) and the TLS handshake may take; past it the request fails
        /// with ``HTTPConnectionError/timedOut``. Default: 10 seconds. A request's own timeout
        /// also bounds the time it waits for a connection.
        public var connectTimeout: Duration
        /// How servers are verified over `https`. Default: ``TLSOptions/init(trustRoots:pins:minimumVersion:verifiesCertificateChain:verifiesHostname:resumesSessions:)``
        /// with its defaults (system trust store, TLS 1.2 or newer, chain and host name checks).
        public var tls: TLSOptions
        /// Whether `gzip` and `deflate` response bodies are decoded, and `Accept-Encoding: gzip,
        /// deflate` is sent (unless a request sets its own). Default: `true`.
        public var decompression: Bool
        /// The most decoded bytes one compressed body may expand to. Default: 64 MiB.
        public var maxDecompressedBytes: Int
        /// The largest ratio of decoded to encoded bytes, checked once a body has expanded past
        /// 64 KiB, which stops compression bombs early; 0 disables the check. Default: 100.
        public var maxDecompressionRatio: Int
        /// The largest response head (status line and fields) in bytes. Default: 65,536.
        public var maxHeadBytes: Int
        /// The most header fields in a response head, and in a chunked body's trailers. Default: 100.
        public var maxHeaderFields: Int
        /// How many event-loop threads drive the connections. Default: 1.
        ///
        /// With several, an origin's HTTP/1.1 connections spread over all of them, each loop with
        /// its share of ``maxConnectionsPerHost`` and its own first-in, first-out queue for the
        /// requests beyond it. A request goes to the loop its caller runs on while that loop's
        /// share has a connection to spare, else to the loop with the fewest of the origin's
        /// requests in flight (the origin's first loop on a tie, so that requests sent one at a
        /// time share one connection). An origin that may speak HTTP/2 stays on one loop, held to
        /// that loop's share, until a connection has shown that it speaks HTTP/1.1 (a first burst
        /// of requests to a new `https` origin runs on that share); an HTTP/2 origin stays there,
        /// bounded by ``maxHTTP2ConnectionsPerHost``. A streamed response counts on its loop
        /// until its body ends.
        ///
        /// Measured on a 2-core machine shared with the server (2026-11-28, against nginx): with 2
        /// loops, 16 requests in flight to one origin made 0–4 % more requests a second over
        /// plain HTTP and 2–10 % more over HTTPS, 256 in flight −3 to +12 %; one request at a
        /// time was the same. The default stays 1 because with several loops a request that
        /// waits for a connection waits for one of its own loop's share only: the origin's
        /// queue is no longer one fair queue.
        public var loopCount: Int
        /// Addresses used instead of DNS for chosen host and port pairs (see ``AddressOverride``).
        /// Default: none.
        public var addressOverrides: [AddressOverride] = []
        /// Happy Eyeballs (RFC 8305): while a connect attempt is pending, the next address (the
        /// families interleaved) is tried after this delay; an attempt that fails starts the next
        /// at once, the first to connect wins and the others are closed. ``connectTimeout`` bounds
        /// the whole race. Default: 250 ms; values below 10 ms count as 10 ms.
        public var connectionAttemptDelay: Duration = .milliseconds(250)
        /// Which proxy each request goes through (``ProxyConfiguration``). Default: the process
        /// environment's `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy`, by curl's rules,
        /// read when the configuration is created (``ProxyConfiguration/environment(_:)``), as
        /// curl, reqwest and Go's `net/http` do, except that loopback hosts go direct
        /// (``ProxyConfiguration/bypassesLoopback``); set ``ProxyConfiguration/none`` to ignore
        /// them. Connections through a proxy are pooled apart from direct ones.
        public var proxy: ProxyConfiguration = .environment()
        /// Hosts whose requests go over a Unix domain socket instead of TCP (see
        /// ``UnixSocketRoute``); the first route that matches a request's host and port wins, and
        /// the proxy settings do not apply to it. Default: none.
        public var unixSockets: [UnixSocketRoute] = []
        /// Supplies fresh credentials when an HTTP proxy answers `407` (see
        /// ``ProxyAuthenticator``): the requests for that proxy wait for one refresh and are sent
        /// again. Requests sent with ``NativeTransport/stream(_:observer:)`` do not wait: their
        /// `407` ends them. Default: `nil` (a `407` ends the request).
        public var proxyAuthenticator: (any ProxyAuthenticator)? = nil
        /// Which HTTP version to speak (``HTTPVersionPolicy``). Default: ``HTTPVersionPolicy/automatic``
        /// (HTTP/2 over `https` when the server picks it with ALPN, else HTTP/1.1).
        public var httpVersion: HTTPVersionPolicy = .automatic
        /// The most HTTP/2 connections open at once to one origin. One HTTP/2 connection carries
        /// as many requests at once as the server allows (its `SETTINGS_MAX_CONCURRENT_STREAMS`);
        /// the rest wait in the pool's first-in, first-out queue, and a second connection is opened
        /// for them only when this is above 1. Default: 1. Values below 1 count as 1.
        public var maxHTTP2ConnectionsPerHost: Int = 1

        /// Creates a configuration; every parameter has the default documented on its property.
        /// - Parameters:
        ///   - maxConnectionsPerHost: connections per (scheme, host, port). Default: 8.
        ///   - idleTimeout: how long an unused pooled connection stays open. Default: 60 s.
        ///   - connectTimeout: the longest a connect and TLS handshake may take. Default: 10 s.
        ///   - tls: how servers are verified. Default: `TLSOptions()`.
        ///   - decompression: decode gzip and deflate bodies. Default: `true`.
        ///   - maxDecompressedBytes: the most decoded bytes per body. Default: 64 MiB.
        ///   - maxDecompressionRatio: the largest decoded-to-encoded ratio. Default: 100.
        ///   - maxHeadBytes: the largest response head. Default: 65,536 bytes.
        ///   - maxHeaderFields: the most fields in a response head. Default: 100.
        ///   - loopCount: the number of event-loop threads. Default: 1.
        public init(maxConnectionsPerHost: Int = 8,
                    idleTimeout: Duration = .seconds(60),
                    connectTimeout: Duration = .seconds(10),
                    tls: TLSOptions = TLSOptions(),
                    decompression: Bool = true,
                    maxDecompressedBytes: Int = 64 << 20,
                    maxDecompressionRatio: Int = 100,
                    maxHeadBytes: Int = 65_536,
                    maxHeaderFields: Int = 100,
                    loopCount: Int = 1) {
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.idleTimeout = idleTimeout
            self.connectTimeout = connectTimeout
            self.tls = tls
            self.decompression = decompression
            self.maxDecompressedBytes = maxDecompressedBytes
            self.maxDecompressionRatio = maxDecompressionRatio
            self.maxHeadBytes = maxHeadBytes
            self.maxHeaderFields = maxHeaderFields
            self.loopCount = loopCount
        }
    }
}

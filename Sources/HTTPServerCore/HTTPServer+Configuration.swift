import CourierHTTP1
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension HTTPServer {
    /// Limits, timeouts and threading of an ``HTTPServer``.
    public struct Configuration: Sendable {
        /// The largest request body accepted; larger bodies get `413 Content Too Large`
        /// and the connection is closed. Default: 8 MiB.
        public var maxBodyBytes: Int
        /// How long a request head may take to arrive, from its first byte (or from
        /// accepting the connection) to its final empty line. Slower connections are
        /// closed (with `408` when part of a head had arrived). Default: 10 seconds.
        public var headerTimeout: Duration
        /// How long a keep-alive connection may sit idle between requests, and the
        /// longest pause while a request body arrives. Default: 60 seconds.
        public var idleTimeout: Duration
        /// How long a whole request body may take to arrive, from the end of its head. A
        /// body still incomplete then (or after a pause of ``idleTimeout``) gets
        /// `408 Request Timeout` and the connection closes. Default: 30 seconds.
        public var bodyTimeout: Duration
        /// The most connections open at once; a connection accepted over the cap is closed
        /// at once, before anything is read (see ``HTTPServer/connectionsRefused``).
        /// Default: ``defaultMaxConnections``, the smaller of 10,000 and 80 % of the process's
        /// open-file limit, so that the cap binds before `accept` fails with `EMFILE`.
        public var maxConnections: Int
        /// After an error response (400, 413, 431...) the server shuts down its sending
        /// side and keeps reading and discarding for at most this long before closing, so
        /// the client sees the response instead of a reset. Default: 2 seconds.
        public var lingerTimeout: Duration
        /// Head size and field count limits for request parsing. Default: `HTTP1Limits()`
        /// (64 KiB heads, 100 fields); a head over the limit gets `431`.
        public var limits: HTTP1Limits
        /// How many event loop threads serve connections (at least 1). Default: 1.
        public var eventLoopCount: Int
        /// The listen backlog. Default: 4096 (the kernel caps it at `somaxconn`).
        public var backlog: Int32
        /// How many bytes of pipelined requests are buffered while a request is being
        /// handled before the server stops reading from that connection. Default: 1 MiB.
        public var maxPipelinedBytes: Int
        /// A fault for tests: close every accepted connection at once, before reading
        /// anything. Default: `false`.
        public var closeConnectionsOnAccept: Bool
        /// The send buffer (`SO_SNDBUF`) of every accepted socket, for a test that needs to see
        /// its server held back by a client that does not read; the kernel doubles it. Default:
        /// `nil` (the kernel's, which grows to megabytes).
        public var sendBufferSize: Int? = nil
        /// Formats the body of the errors the server core answers by itself (400 for a malformed
        /// head, 413, 431, 501): from the status and a message, the content type and the bytes.
        /// Default: ``plainTextErrors``.
        public var errorBody: @Sendable (_ status: Int, _ message: String) -> (contentType: String, body: [UInt8])

        /// The default of ``maxConnections`` for this process: ``maxConnections(forOpenFileLimit:)``
        /// of the soft `RLIMIT_NOFILE` (read with `getrlimit`; 10,000 when it is unlimited,
        /// `RLIM_INFINITY`, or cannot be read).
        public static var defaultMaxConnections: Int {
            var limit = rlimit()
            guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return connectionCeiling }
            return maxConnections(forOpenFileLimit: limit.rlim_cur == rlim_t.max ? nil : UInt64(limit.rlim_cur))
        }

        /// The highest default of ``maxConnections``: 10,000.
        public static let connectionCeiling = 10_000

        /// The connection cap for a soft open-file limit: 80 % of it (the rest is left for the
        /// listener, files and outgoing sockets), at least 1 and at most ``connectionCeiling``;
        /// ``connectionCeiling`` when there is no limit (`nil`).
        /// - Parameter openFileLimit: the soft `RLIMIT_NOFILE`, or `nil` for unlimited.
        /// - Returns: the cap.
        public static func maxConnections(forOpenFileLimit openFileLimit: UInt64?) -> Int {
            guard let openFileLimit else { return connectionCeiling }
            let fourFifths = Int(min(openFileLimit, 1 << 32) * 4 / 5)
            return max(1, min(connectionCeiling, fourFifths))
        }

        /// Error bodies as one line of UTF-8 text.
        public static let plainTextErrors: @Sendable (Int, String) -> (contentType: String, body: [UInt8]) = { _, message in
            ("text/plain; charset=utf-8", Array((message + "\n").utf8))
        }

        /// Creates a configuration; every parameter has the default described on its property.
        ///
        /// - Parameters:
        ///   - maxBodyBytes: Default 8 MiB.
        ///   - headerTimeout: Default 10 seconds.
        ///   - idleTimeout: Default 60 seconds.
        ///   - bodyTimeout: Default 30 seconds.
        ///   - maxConnections: Default ``defaultMaxConnections``.
        ///   - lingerTimeout: Default 2 seconds.
        ///   - limits: Default `HTTP1Limits()`.
        ///   - eventLoopCount: Default 1.
        ///   - backlog: Default 4096.
        ///   - maxPipelinedBytes: Default 1 MiB.
        ///   - closeConnectionsOnAccept: Default `false`.
        ///   - errorBody: Default ``plainTextErrors``.
        public init(
            maxBodyBytes: Int = 8 << 20,
            headerTimeout: Duration = .seconds(10),
            idleTimeout: Duration = .seconds(60),
            bodyTimeout: Duration = .seconds(30),
            maxConnections: Int = defaultMaxConnections,
            lingerTimeout: Duration = .seconds(2),
            limits: HTTP1Limits = HTTP1Limits(),
            eventLoopCount: Int = 1,
            backlog: Int32 = 4096,
            maxPipelinedBytes: Int = 1 << 20,
            closeConnectionsOnAccept: Bool = false,
            errorBody: @escaping @Sendable (Int, String) -> (contentType: String, body: [UInt8]) = plainTextErrors
        ) {
            self.maxBodyBytes = maxBodyBytes
            self.headerTimeout = headerTimeout
            self.idleTimeout = idleTimeout
            self.bodyTimeout = bodyTimeout
            self.maxConnections = maxConnections
            self.lingerTimeout = lingerTimeout
            self.limits = limits
            self.eventLoopCount = eventLoopCount
            self.backlog = backlog
            self.maxPipelinedBytes = maxPipelinedBytes
            self.closeConnectionsOnAccept = closeConnectionsOnAccept
            self.errorBody = errorBody
        }
    }
}

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
        /// Header fields sent with every request; none by default.
        public var headers: HTTPHeaders
        /// The largest response body accepted, in bytes, unless a request says otherwise; 64 MiB by default.
        public var maxResponseBodySize: Int
        /// The queue for delegate calls and closures; `nil` (the default) makes a private serial queue.
        public var callbackQueue: DispatchQueue?
        /// The transport; `nil` (the default) uses ``HTTPConnection/defaultTransport``.
        public var transport: (any Transport)?

        /// Creates a configuration with every setting at its default.
        public init(
            timeout: Duration? = nil,
            cachePolicy: CachePolicy? = nil,
            retryPolicy: RetryPolicy? = nil,
            validation: ResponseValidation = .successStatusCodes,
            headers: HTTPHeaders = [:],
            maxResponseBodySize: Int = 64 << 20,
            callbackQueue: DispatchQueue? = nil,
            transport: (any Transport)? = nil
        ) {
            self.timeout = timeout
            self.cachePolicy = cachePolicy
            self.retryPolicy = retryPolicy
            self.validation = validation
            self.headers = headers
            self.maxResponseBodySize = maxResponseBodySize
            self.callbackQueue = callbackQueue
            self.transport = transport
        }
    }
}

import CourierHTTP1
import CourierWire

/// The configuration in the form the loop-side code uses: nanoseconds and parser limits.
struct NativeSettings: Sendable {
    let maxConnectionsPerHost: Int
    /// Nanoseconds.
    let idleTimeout: UInt64
    /// Nanoseconds.
    let connectTimeout: UInt64
    let decompression: Bool
    let maxDecompressedBytes: Int
    let maxDecompressionRatio: Int
    let limits: HTTP1Limits
    /// Resolves hosts, answering the configured address overrides without DNS.
    let resolver: Resolver
    /// The Happy Eyeballs connection attempt delay.
    let connectionAttemptDelay: Duration
    /// Which proxy each request goes through.
    let proxies: ProxyConfiguration
    /// Hosts reached over Unix domain sockets.
    let unixSockets: [NativeTransport.UnixSocketRoute]
    /// Which HTTP version to speak.
    let httpVersion: NativeTransport.HTTPVersionPolicy
    /// The most HTTP/2 connections per origin.
    let maxHTTP2Connections: Int
    /// Live pools and connections of the transport these settings belong to.
    let census = NativeCensus()
    /// The TLS contexts of `https://` proxies.
    let proxyTLS = ProxyTLSContexts()

    init(_ configuration: NativeTransport.Configuration) {
        maxConnectionsPerHost = max(configuration.maxConnectionsPerHost, 1)
        idleTimeout = configuration.idleTimeout.nativeNanoseconds
        connectTimeout = configuration.connectTimeout.nativeNanoseconds
        decompression = configuration.decompression
        maxDecompressedBytes = max(configuration.maxDecompressedBytes, 0)
        maxDecompressionRatio = configuration.maxDecompressionRatio
        limits = HTTP1Limits(maxHeadBytes: max(configuration.maxHeadBytes, 256),
                             maxFieldCount: max(configuration.maxHeaderFields, 1))
        resolver = Resolver(overrides: configuration.addressOverrides.map {
            Resolver.Override(host: $0.host, port: $0.port, addresses: $0.socketAddresses)
        })
        connectionAttemptDelay = configuration.connectionAttemptDelay
        proxies = configuration.proxy
        unixSockets = configuration.unixSockets
        httpVersion = configuration.httpVersion
        maxHTTP2Connections = max(configuration.maxHTTP2ConnectionsPerHost, 1)
    }
}

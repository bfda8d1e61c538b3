/// The timings and byte counts of one transport attempt, as a transport reports them through
/// ``TransportObserver/transportDidCollect(_:)``.
///
/// The timings mean what the same fields of ``RequestMetrics`` mean. A transport leaves `nil`
/// what it cannot measure, and the connection phases (``dnsLookup``, ``connect``,
/// ``tlsHandshake``) `nil` on a reused connection.
public struct TransportMetrics: Sendable {
    /// From the transport taking the request to a connection taking it (opening it included).
    public var queued: Duration?
    /// Name resolution of the new connection the attempt ran on.
    public var dnsLookup: Duration?
    /// TCP connect of the new connection the attempt ran on.
    public var connect: Duration?
    /// TLS handshake of the new connection the attempt ran on.
    public var tlsHandshake: Duration?
    /// From a connection taking the request to its last byte written.
    public var requestSent: Duration?
    /// From the request's last byte written to the first response byte.
    public var firstByte: Duration?
    /// Bytes written.
    public var bytesSent: Int64 = 0
    /// Bytes read.
    public var bytesReceived: Int64 = 0
    /// Whether the attempt ran on a connection that had carried a response before.
    public var reusedConnection = false
    /// The protocol the attempt spoke, `"HTTP/1.1"` or `"HTTP/2"`; `nil` when the transport
    /// does not say (``URLSessionTransport``) or no connection took the attempt.
    public var httpVersion: String?

    /// Creates empty transport metrics.
    public init() {}
}

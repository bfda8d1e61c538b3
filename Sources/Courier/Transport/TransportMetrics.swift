/// The timings and byte counts of one transport attempt, as a transport reports them through
/// ``TransportObserver/transportDidCollect(_:)``.
///
/// ``RequestMetrics`` holds the last attempt's as ``RequestMetrics/lastAttempt`` (the phase
/// fields of ``RequestMetrics`` read them), and sums the byte counts over the attempts. A transport
/// leaves `nil` what it cannot measure, and the connection phases (``dnsLookup``, ``connect``,
/// ``tlsHandshake``) `nil` on a reused connection.
public struct TransportMetrics: Sendable {
    /// From the transport taking the request to a connection taking it: the wait in the pool's
    /// queue, including the opening of the new connection it waited for, if any.
    public var queued: Duration?
    /// Resolving the host name of the new connection the attempt ran on.
    public var dnsLookup: Duration?
    /// The TCP connect of the new connection the attempt ran on, from the first attempt to the
    /// one that succeeded (every address tried included).
    public var connect: Duration?
    /// The TLS handshake of the new connection the attempt ran on.
    public var tlsHandshake: Duration?
    /// From a connection taking the request to its last byte written; `nil` when it was never
    /// written completely (the server answered or closed first).
    public var requestSent: Duration?
    /// From the request's last byte written to the first byte of the response (an interim `1xx`
    /// included); zero when the response began before the request was written completely.
    public var firstByte: Duration?
    /// Request bytes written in this attempt, head and body; over HTTP/2 the head is its
    /// HEADERS frames, HPACK-compressed.
    public var bytesSent: Int64 = 0
    /// Response bytes read in this attempt, head and body as they came off the wire; over
    /// HTTP/2 the head is counted as its fields decoded, in HTTP/1.1 form.
    public var bytesReceived: Int64 = 0
    /// Whether the attempt ran on a pooled connection that had carried a response before.
    public var reusedConnection = false
    /// The protocol the attempt spoke, `"HTTP/1.1"` or `"HTTP/2"`; `nil` when the transport
    /// does not say (``URLSessionTransport``) or no connection took the attempt.
    public var httpVersion: String?

    /// Creates empty transport metrics.
    public init() {}
}

import Foundation

/// What one request cost: its timings, bytes, attempts and redirects.
///
/// Collected by Courier itself, so metrics arrive on Linux too (URLSession never delivers task
/// metrics there). Delivered to the delegate's ``HTTPConnectionDelegate/connection(_:request:didCollect:)``
/// and attached to the response as ``HTTPResponse/metrics``.
///
/// The phase durations describe the last transport attempt and follow one another:
/// ``queued`` (which contains ``dnsLookup``, ``connect`` and ``tlsHandshake`` when the request
/// waited for a new connection), then ``requestSent``, then ``firstByte``; together they never
/// exceed ``complete``. A phase that did not happen is `nil`:
///
/// - On a **reused connection** (``reusedConnection`` is `true`) ``dnsLookup``, ``connect`` and
///   ``tlsHandshake`` are `nil`, as in URLSession's `URLSessionTaskTransactionMetrics`: they are
///   reported once, for the first request of a connection.
/// - ``dnsLookup`` is `nil` for a numeric host (`127.0.0.1`, `[::1]`), ``tlsHandshake`` for `http`.
/// - Everything but ``complete``, the counts and ``cache`` is `nil` for a response served from
///   the cache without the network.
/// - ``URLSessionTransport`` measures only ``firstByte`` (from the start of its task): on Linux
///   FoundationNetworking reports no timings, so ``queued``, ``dnsLookup``, ``connect``,
///   ``tlsHandshake`` and ``requestSent`` stay `nil` and ``reusedConnection`` stays `false`.
public struct RequestMetrics: Sendable, CustomStringConvertible {
    /// When the request started.
    public var startDate = Date()
    /// The last transport attempt's phases and connection, as its transport reported them. Its
    /// byte counts are that attempt's; ``bytesSent`` and ``bytesReceived`` count every attempt.
    public var lastAttempt = TransportMetrics()

    /// ``TransportMetrics/queued`` of the last attempt: the wait in the pool's queue, including
    /// the opening of the new connection it waited for, if any.
    public var queued: Duration? {
        get { lastAttempt.queued }
        set { lastAttempt.queued = newValue }
    }
    /// ``TransportMetrics/dnsLookup`` of the last attempt.
    public var dnsLookup: Duration? {
        get { lastAttempt.dnsLookup }
        set { lastAttempt.dnsLookup = newValue }
    }
    /// ``TransportMetrics/connect`` of the last attempt.
    public var connect: Duration? {
        get { lastAttempt.connect }
        set { lastAttempt.connect = newValue }
    }
    /// ``TransportMetrics/tlsHandshake`` of the last attempt.
    public var tlsHandshake: Duration? {
        get { lastAttempt.tlsHandshake }
        set { lastAttempt.tlsHandshake = newValue }
    }
    /// ``TransportMetrics/requestSent`` of the last attempt.
    public var requestSent: Duration? {
        get { lastAttempt.requestSent }
        set { lastAttempt.requestSent = newValue }
    }
    /// ``TransportMetrics/firstByte`` of the last attempt.
    public var firstByte: Duration? {
        get { lastAttempt.firstByte }
        set { lastAttempt.firstByte = newValue }
    }
    /// Time from the start of the request to its end, all attempts, waits and redirects included.
    public var complete: Duration = .zero
    /// Request bytes written, head and body, over all attempts.
    public var bytesSent: Int64 = 0
    /// Response bytes read, head and body as they came off the wire, over all attempts.
    public var bytesReceived: Int64 = 0
    /// How many times the transport was asked to send (1 without retries or redirects).
    public var attempts = 0
    /// How many redirects were followed.
    public var redirects = 0
    /// ``TransportMetrics/reusedConnection`` of the last attempt: whether it ran on a pooled
    /// connection that had carried a response before.
    public var reusedConnection: Bool {
        get { lastAttempt.reusedConnection }
        set { lastAttempt.reusedConnection = newValue }
    }
    /// ``TransportMetrics/httpVersion`` of the last attempt: `"HTTP/1.1"` or `"HTTP/2"`, as
    /// ``NativeTransport`` reports it; `nil` with ``URLSessionTransport``.
    public var httpVersion: String? {
        get { lastAttempt.httpVersion }
        set { lastAttempt.httpVersion = newValue }
    }
    /// What the cache did for this request; `nil` when no cache was consulted.
    public var cache: CacheOutcome?

    /// Creates empty metrics.
    public init() {}

    /// A one-line summary, e.g. `"2 attempts, 0 redirects, 1520 B in, 210 B out, 12.3 ms"`.
    public var description: String {
        let millis = complete.timeInterval * 1000
        return "\(attempts) attempt\(attempts == 1 ? "" : "s"), \(redirects) redirect\(redirects == 1 ? "" : "s"), "
            + "\(bytesReceived) B in, \(bytesSent) B out, \(String(format: "%.1f", millis)) ms"
            + (reusedConnection ? ", reused connection" : "")
            + (cache.map { ", cache \($0)" } ?? "")
    }
}

/// What the cache did for one request.
public enum CacheOutcome: Sendable, Equatable {
    /// Answered from the cache.
    case hit
    /// Not answered from the cache: the network was used.
    case miss
    /// Answered from the cache after a 304 from the server.
    case revalidated
}

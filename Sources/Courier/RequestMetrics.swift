import Foundation

/// What one request cost: its timings, bytes, attempts and redirects.
///
/// Collected by Courier itself, so metrics arrive on Linux too (URLSession never delivers task
/// metrics there). Durations of the connection phases describe the last attempt; a phase that did
/// not happen (no DNS for an IP literal, no TLS for http, a reused connection) is `nil`.
/// Delivered to the delegate's ``HTTPConnectionDelegate/connection(_:request:didCollect:)`` and
/// attached to the response as ``HTTPResponse/metrics``.
public struct RequestMetrics: Sendable, CustomStringConvertible {
    /// When the request started.
    public var startDate = Date()
    /// Time spent waiting for a connection from the pool.
    public var queued: Duration?
    /// Time spent resolving the host name.
    public var dnsLookup: Duration?
    /// Time spent on the TCP connect.
    public var connect: Duration?
    /// Time spent on the TLS handshake.
    public var tlsHandshake: Duration?
    /// Time spent writing the request.
    public var requestSent: Duration?
    /// Time from the request written to the first response byte.
    public var firstByte: Duration?
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
    /// Whether the last attempt reused a pooled connection.
    public var reusedConnection = false
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

/// The timings and byte counts of one transport attempt, as a transport reports them.
public struct TransportMetrics: Sendable {
    /// Time waiting for a connection from the pool.
    public var queued: Duration?
    /// Name resolution time.
    public var dnsLookup: Duration?
    /// TCP connect time.
    public var connect: Duration?
    /// TLS handshake time.
    public var tlsHandshake: Duration?
    /// Time to write the request.
    public var requestSent: Duration?
    /// Time from the request written to the first response byte.
    public var firstByte: Duration?
    /// Bytes written.
    public var bytesSent: Int64 = 0
    /// Bytes read.
    public var bytesReceived: Int64 = 0
    /// Whether a pooled connection was reused.
    public var reusedConnection = false

    /// Creates empty transport metrics.
    public init() {}
}

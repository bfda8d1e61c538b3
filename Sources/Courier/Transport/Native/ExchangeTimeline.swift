import Foundation

/// The moments of one exchange of the native transport, on the monotonic clock (`EventLoop.now()`,
/// nanoseconds), and the ``TransportMetrics`` they add up to.
///
/// A value type that the exchange and its connection fill in as things happen, so the arithmetic
/// is tested without sockets. The phases follow one another:
///
///     created ─ queued ─ assigned ─ requestSent ─ requestWritten ─ firstByte ─ responseStarted
///                │
///                └ (a connection opened for the request: dnsLookup, connect, tlsHandshake)
///
/// `queued` runs from the transport taking the request to a connection taking it, so it includes
/// the opening of a new connection the request waited for. The connection phases are reported
/// only for the first exchange of a connection; on a reused connection they are `nil`, as
/// URLSession reports them, and ``TransportMetrics/reusedConnection`` is `true`.
struct ExchangeTimeline {
    /// When the transport took the request (its `send` was called).
    let created: UInt64
    /// When a connection took it: the last one, after a stale pooled connection.
    private(set) var assigned: UInt64?
    /// How that connection was opened; `nil` on a reused connection.
    private(set) var connection: ConnectionTimeline?
    /// Whether that connection had carried a response before.
    private(set) var reused = false
    /// When the last byte of the request was written on it.
    private(set) var requestWritten: UInt64?
    /// When the first byte of a response (an interim one included) arrived.
    private(set) var responseStarted: UInt64?

    /// Starts the timeline of a request the transport takes at `created`.
    init(created: UInt64) {
        self.created = created
    }

    /// A connection took the exchange at `time`. A later assignment (a re-send on a fresh
    /// connection after a stale one) replaces everything measured on the earlier connection.
    ///
    /// - Parameters:
    ///   - time: When it was taken; for a request a caller wrote itself on a parked connection,
    ///     when the request was created.
    ///   - connection: How the connection was opened.
    ///   - reused: Whether the connection carried an exchange before this one, which took its
    ///     opening timings: on HTTP/1.1 one it completed, on HTTP/2 any stream started before
    ///     (a second stream of a new connection counts as reused, though no response ended yet).
    mutating func assign(at time: UInt64, connection: ConnectionTimeline, reused: Bool) {
        assigned = time
        self.connection = reused ? nil : connection
        self.reused = reused
        requestWritten = nil
        responseStarted = nil
    }

    /// The request's last byte was written at `time`; later calls keep the first.
    mutating func recordRequestWritten(at time: UInt64) {
        if requestWritten == nil, assigned != nil { requestWritten = time }
    }

    /// Forgets the response's start: what came was an interim answer before the request's body.
    mutating func forgetResponseStart() {
        responseStarted = nil
    }

    /// The response's first byte arrived at `time`; later calls keep the first.
    mutating func recordResponseStarted(at time: UInt64) {
        if responseStarted == nil, assigned != nil { responseStarted = time }
    }

    /// Fills the timings and `reusedConnection` of `metrics`.
    ///
    /// A phase that did not happen, or did not end, is `nil`. `firstByte` counts from the
    /// request's last byte, or from the start of sending when the server answered before the
    /// request was written completely (an early `413`); it is zero when the answer began while
    /// the request was still being written.
    func fill(_ metrics: inout TransportMetrics) {
        metrics.reusedConnection = reused
        guard let assigned else { return }
        metrics.queued = Self.span(created, assigned)
        metrics.dnsLookup = connection.flatMap { Self.span($0.resolveStart, $0.resolveEnd) }
        metrics.connect = connection.flatMap { Self.span($0.connectStart, $0.connectEnd) }
        metrics.tlsHandshake = connection.flatMap { Self.span($0.handshakeStart, $0.handshakeEnd) }
        metrics.requestSent = Self.span(assigned, requestWritten)
        metrics.firstByte = Self.span(requestWritten ?? assigned, responseStarted)
    }

    /// The time from `start` to `end`, zero when `end` came first; `nil` unless both are known.
    private static func span(_ start: UInt64?, _ end: UInt64?) -> Duration? {
        guard let start, let end else { return nil }
        return .nanoseconds(Int64(clamping: end &- min(start, end)))
    }
}

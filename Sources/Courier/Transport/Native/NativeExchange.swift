import CourierWire
import Foundation

/// One request on its way through the native transport: what to send, who listens, the
/// continuation of the waiting `send` call, and the response as it builds up.
///
/// Loop-confined: created by `send` and handed to the pool's loop inside a ``LoopBound``; from
/// then on only that loop's thread touches it. ``finish(_:)`` resumes the continuation exactly
/// once, whatever races between completion, cancellation, timeouts and the peer closing.
final class NativeExchange {
    typealias Outcome = Result<HTTPResponse, HTTPConnectionError>
    typealias Continuation = UnsafeContinuation<Outcome, Never>

    /// Where the exchange is in its life.
    enum Phase: Equatable {
        /// Created; the loop has not seen it yet.
        case created
        /// Cancelled before the loop saw it; `start` ends it at once.
        case cancelledEarly
        /// In its pool's wait queue for a connection.
        case waiting
        /// Waiting for a fresh connection opened for it alone (a stale-connection retry).
        case dedicated
        /// On a connection: being sent or answered.
        case active
        /// Ended; the continuation was resumed.
        case finished
    }

    let request: TransportRequest
    /// The head, followed by the body when it is small.
    let wire: [UInt8]
    /// Whether ``wire`` already holds the body.
    let bodyInlined: Bool
    let observer: any TransportObserver
    let observesBody: Bool
    /// The per-attempt timeout in nanoseconds: the longest silence allowed.
    let timeout: UInt64
    /// Whether the request may be re-sent on a fresh connection after a stale one.
    let isIdempotent: Bool
    /// Whether the caller asked the server to close the connection afterwards.
    let asksClose: Bool

    private(set) var phase = Phase.created
    private var continuation: Continuation?
    /// Its own handle, for timer closures; cleared when it finishes.
    private var selfBound: LoopBound<NativeExchange>?
    /// The pool it belongs to once started.
    var pool: HostPool?
    /// The connection it runs on while active (set through ``run(on:since:)``).
    var connection: HTTP1ClientConnection?
    /// How many times it was re-sent after a stale pooled connection (at most once).
    var staleRetries = 0

    private var waitTimer: EventLoop.Timer?
    private var waitingSince: UInt64 = 0

    /// The response head, once received.
    var head: HTTPResponse.Head?
    /// When each phase happened, for metrics; created with the exchange.
    var timeline = ExchangeTimeline(created: EventLoop.now())
    /// The (decoded) body so far.
    var body = Data()
    /// Body bytes received on the wire so far (before content decoding).
    var wireBodyBytes = 0

    /// Creates an exchange; called on the requesting task's thread.
    init(request: TransportRequest, wire: [UInt8], bodyInlined: Bool, observer: any TransportObserver) {
        self.request = request
        self.wire = wire
        self.bodyInlined = bodyInlined
        self.observer = observer
        self.observesBody = observer.observesBody
        self.timeout = request.timeout.nativeNanoseconds
        self.isIdempotent = request.method.isIdempotent
        self.asksClose = request.headers.values(for: "Connection").contains { $0.lowercased().contains("close") }
    }

    /// Takes the continuation on the loop. Returns `false` when the exchange already ended
    /// (cancelled before it got here), in which case the continuation has been resumed.
    func begin(_ continuation: Continuation, bound: LoopBound<NativeExchange>) -> Bool {
        self.continuation = continuation
        if phase == .cancelledEarly {
            finish(.failure(.cancelled))
            return false
        }
        selfBound = bound
        return true
    }

    /// Whether the exchange still waits for its outcome.
    var isLive: Bool { continuation != nil && phase != .finished }

    /// Moves to a new phase (not `finished`: use ``finish(_:)``).
    func enter(_ next: Phase) {
        if (phase == .waiting || phase == .dedicated) && next != phase { stopWaitTimer() }
        phase = next
    }

    /// Puts the exchange on `connection`, which took it at `time` (moving it there after a stale
    /// connection, too).
    func run(on connection: HTTP1ClientConnection, since time: UInt64) {
        self.connection = connection
        timeline.assign(at: time, connection: connection.timeline, reused: connection.completedExchanges > 0)
    }

    /// Ends the exchange with `outcome`, once; later calls do nothing.
    func finish(_ outcome: Outcome) {
        guard let continuation else {
            if phase == .created { phase = .cancelledEarly }
            return
        }
        self.continuation = nil
        if phase == .waiting { pool?.waiterLeft() }
        phase = .finished
        stopWaitTimer()
        connection = nil
        pool = nil
        selfBound = nil
        observer.transportDidCollect(metrics())
        continuation.resume(returning: outcome)
    }

    /// What this attempt cost, as far as the exchange saw it.
    private func metrics() -> TransportMetrics {
        var metrics = TransportMetrics()
        metrics.bytesSent = Int64(wire.count + (bodyInlined ? 0 : request.body.count))
        if let head {
            let headBytes = head.headers.reduce(17 + head.status.reason.utf8.count) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
            metrics.bytesReceived = Int64(headBytes + wireBodyBytes)
        }
        timeline.fill(&metrics)
        return metrics
    }

    /// Cancels the request: from the task's cancellation handler, on the loop.
    func cancel() {
        switch phase {
        case .created:
            phase = .cancelledEarly
        case .cancelledEarly, .finished:
            return
        case .waiting, .dedicated:
            finish(.failure(.cancelled))
        case .active:
            if let connection {
                connection.abort(self, with: .cancelled)
            } else {
                finish(.failure(.cancelled))
            }
        }
    }

    // MARK: - Waiting for a connection

    /// Starts the silence timer for the time spent waiting for a connection.
    ///
    /// Waiting counts as silence only while the pool itself makes no progress: a queue behind
    /// busy connections that keep answering is not a stall.
    func startWaitTimer(loop: EventLoop) {
        waitingSince = EventLoop.now()
        scheduleWaitCheck(loop: loop, after: timeout)
    }

    private func scheduleWaitCheck(loop: EventLoop, after nanoseconds: UInt64) {
        guard let selfBound else { return }
        waitTimer?.cancel()
        waitTimer = loop.scheduleTimer(after: .nanoseconds(Int64(clamping: nanoseconds))) {
            selfBound.value.waitTimerFired()
        }
    }

    private func stopWaitTimer() {
        waitTimer?.cancel()
        waitTimer = nil
    }

    private func waitTimerFired() {
        waitTimer = nil
        guard phase == .waiting || phase == .dedicated, let pool else { return }
        let last = max(waitingSince, pool.lastProgress)
        let now = EventLoop.now()
        let silence = now &- min(last, now)
        if silence >= timeout {
            finish(.failure(.timedOut.with(detail: "no connection to \(pool.key) became available in \(request.timeout)")))
        } else {
            scheduleWaitCheck(loop: pool.loop, after: timeout - silence)
        }
    }
}

extension Duration {
    /// Whole nanoseconds, clamped to 0 ... 2^62 so that adding it to a monotonic time never overflows.
    var nativeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let cap: UInt64 = 1 << 62
        if seconds >= Int64(cap / 1_000_000_000) { return cap }
        let fraction = attoseconds > 0 ? UInt64(attoseconds / 1_000_000_000) : 0
        return min(UInt64(seconds) * 1_000_000_000 + fraction, cap)
    }
}

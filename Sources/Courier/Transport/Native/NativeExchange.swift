import CourierHTTP1
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

    /// Where the exchange is in its life, as far as it knows. Where a started exchange is (queued,
    /// on a connection, sending, reading) is its pool's and connection's state machines' to know.
    enum Phase: Equatable {
        /// Created; the loop has not seen it yet.
        case created
        /// Cancelled before the loop saw it; `start` ends it at once.
        case cancelledEarly
        /// Taken over by its pool on the loop.
        case started
        /// A streamed response's head was handed out; its body flows to ``NativeExchange/stream``.
        case streamingBody
        /// Ended; the continuation was resumed.
        case finished
    }

    let request: TransportRequest
    /// Where it goes, taken apart from its URL once (an HTTP/2 stream's pseudo-fields come from it).
    let target: NativeRequestTarget
    /// The head, followed by the body when it is small.
    let wire: [UInt8]
    /// Whether ``wire`` already holds the body.
    let bodyInlined: Bool
    let observer: any TransportObserver
    let observesBody: Bool
    /// Where a streamed response's body goes; `nil` when the body is collected.
    let stream: BodyStreamBuffer?
    /// For a streamed response: its count in its pool's gauge, ended when the exchange ends
    /// (the `stream` call returns at the head, and ends it only when it fails).
    let streamTicket: PoolGauge.Ticket?
    /// The per-attempt timeout in nanoseconds: the longest silence allowed.
    let timeout: UInt64
    /// Whether the request may be re-sent on a fresh connection after a stale one.
    let isIdempotent: Bool
    /// Whether the caller asked the server to close the connection afterwards.
    let asksClose: Bool
    /// Whether the request carries `Expect: 100-continue` and a body: over HTTP/1.1 the body
    /// waits for the server's `100 Continue` (``HTTP1ConnectionStateMachine``).
    let expectsContinue: Bool
    /// Whether such a body was released to be written (else it was never sent, and the metrics
    /// do not count it).
    private(set) var sentHeldBody = false

    private(set) var phase = Phase.created
    private var continuation: Continuation?
    /// Its own handle, for timer closures; cleared when it finishes.
    private var selfBound: LoopBound<NativeExchange>?
    /// The body when it is not in memory, as the current connection writes it; made afresh each
    /// time a connection takes the exchange.
    private(set) var upload: NativeUpload?
    /// The pool it belongs to once started.
    var pool: HostPool?
    /// Its id in the pool's state machine once started.
    var poolID: PoolStateMachine.RequestID?
    /// How many times it was re-sent after a stale pooled connection (at most once).
    var staleRetries = 0

    /// The pool's check of its wait for a connection, while it waits.
    private var waitTimer: EventLoop.Timer?

    /// The response head, once received.
    var head: HTTPResponse.Head?
    /// When each phase happened, for metrics; created with the exchange.
    var timeline = ExchangeTimeline(created: EventLoop.now())
    /// Body bytes received on the wire so far (before content decoding).
    var wireBodyBytes = 0
    /// The connection carrying it, while one does (for a streamed body's demand).
    weak var connection: HTTP1ClientConnection?
    /// The HTTP/2 connection carrying it, while one does, and its stream there.
    weak var http2Connection: HTTP2ClientConnection?
    var streamID: UInt32 = 0
    /// How many times it was placed again after a server refused it unprocessed (HTTP/2).
    var requeues = 0
    /// A streamed, content-coded body's decoding, done as its reader takes the bytes (see
    /// `NativeExchange+StreamedBody`); `nil` for any other body, and once the body ended.
    var streamedDecoding: StreamedBodyDecoding?
    /// The wire position and expected total last reported with a streamed body's bytes, for
    /// the observer of the bytes decoded later.
    var streamedProgress: (bytesSoFar: Int64, expectedTotal: Int64?) = (0, nil)
    /// The transport finished a streamed, content-coded body while encoded bytes still waited
    /// for its reader: the stream ends once they are decoded and taken.
    var endsWhenDecoded = false
    /// Whether the connection that took it last speaks HTTP/2 (for the metrics).
    private var ranOnHTTP2 = false
    /// The size of its HEADERS (and CONTINUATION) frames on that connection: its head as sent.
    private var http2HeadBytes = 0

    /// Creates an exchange; called on the requesting task's thread.
    init(request: TransportRequest, target: NativeRequestTarget, wire: [UInt8], bodyInlined: Bool, expectsContinue: Bool,
         observer: any TransportObserver, stream: BodyStreamBuffer? = nil, streamTicket: PoolGauge.Ticket? = nil) {
        self.request = request
        self.target = target
        self.wire = wire
        self.bodyInlined = bodyInlined
        self.observer = observer
        self.observesBody = observer.observesBody
        self.stream = stream
        self.streamTicket = streamTicket
        self.timeout = request.timeout.nativeNanoseconds
        // A stream cannot be sent twice, so a stale connection re-sends it only when none of it went out.
        self.isIdempotent = request.method.isIdempotent && (request.upload?.isReplayable ?? true)
        self.asksClose = request.headers.values(for: "Connection").contains { HTTPFieldList.value($0, contains: "close") }
        self.expectsContinue = expectsContinue
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
        phase = .started
        return true
    }

    /// Whether the exchange still waits for its outcome.
    var isLive: Bool { continuation != nil && phase != .finished }

    /// Records that `connection` took the exchange at `time` (after a stale connection, too).
    func run(on connection: HTTP1ClientConnection, since time: UInt64) {
        self.connection = connection
        ranOnHTTP2 = false
        sentHeldBody = false
        timeline.assign(at: time, connection: connection.timeline, reused: connection.machine.isReused)
        if let body = request.upload {
            upload?.stop()
            upload = NativeUpload(body)
        }
    }

    /// Records that the HTTP/2 `connection` took the exchange at `time`, on stream `streamID`;
    /// `reused` when the connection carried a stream before.
    func run(onHTTP2 connection: HTTP2ClientConnection, streamID: UInt32, headBytes: Int, since time: UInt64, reused: Bool) {
        self.connection = nil
        http2HeadBytes = headBytes
        http2Connection = connection
        ranOnHTTP2 = true
        self.streamID = streamID
        timeline.assign(at: time, connection: connection.timeline, reused: reused)
        if let body = request.upload {
            upload?.stop()
            upload = NativeUpload(body, framesChunks: false)
        }
    }

    /// The final head arrived. A streamed response is handed out now (the waiting `stream` call
    /// returns), and its body follows through ``stream``, decoded by `decoding` when it is
    /// content-coded.
    func headArrived(_ head: HTTPResponse.Head, decoding: StreamedBodyDecoding? = nil) {
        self.head = head
        streamedDecoding = decoding
        observer.transportDidReceiveHead(head)
        guard stream != nil, phase == .started, let continuation else { return }
        self.continuation = nil
        phase = .streamingBody
        continuation.resume(returning: .success(HTTPResponse(head: head, body: Data())))
    }

    /// The consumer of the streamed body wants more: the encoded bytes waiting are decoded for
    /// it first; once none wait, its connection reads again (or the body ends, if the
    /// connection finished it meanwhile).
    func consumerWantsMore() {
        // The demand hopped onto the loop; reads since may have filled the buffer again.
        guard stream?.producerMayGoOn ?? true else { return }
        guard decodeWaitingBytes() else { return }
        if phase == .streamingBody, let http2Connection {
            http2Connection.resumeReading(self)
            return
        }
        guard phase == .streamingBody, let connection, connection.exchange === self else { return }
        connection.resumeReading()
    }

    /// The request as its connection's state machine sees it: values only.
    var connectionRequest: HTTP1ConnectionStateMachine.Request {
        HTTP1ConnectionStateMachine.Request(
            method: request.method.rawValue, url: request.url, isIdempotent: isIdempotent, asksClose: asksClose,
            isRetry: staleRetries > 0, timeout: request.timeout, maxBodySize: request.maxResponseBodySize,
            observesBody: observesBody, streamsBody: stream != nil, expectsContinue: expectsContinue)
    }

    /// Ends the exchange with `outcome`, once; later calls do nothing.
    func finish(_ outcome: consuming Outcome) {
        if phase == .streamingBody {
            phase = .finished
            release()
            if case .failure(let error) = outcome {
                streamedDecoding = nil
                stream?.finish(error)
            } else {
                endStreamedBody()
            }
            return
        }
        guard let continuation else {
            if phase == .created { phase = .cancelledEarly }
            return
        }
        self.continuation = nil
        phase = .finished
        release()
        if case .failure(let error) = outcome { stream?.finish(error) }
        continuation.resume(returning: outcome)
    }

    /// Lets go of the pool, the timers and itself, and reports the metrics: the exchange ended.
    private func release() {
        streamTicket?.end()
        stopWaitCheck()
        upload?.stop()
        pool = nil
        connection = nil
        http2Connection = nil
        selfBound = nil
        observer.transportDidCollect(metrics())
    }

    /// The body held for `100 Continue` goes now: the answer's first byte is the one after it
    /// (a `100` is not the response starting).
    func bodyReleased() {
        sentHeldBody = true
        timeline.forgetResponseStart()
    }

    /// What this attempt cost, as far as the exchange saw it.
    private func metrics() -> TransportMetrics {
        var metrics = TransportMetrics()
        // The head as it went out: the HTTP/1.1 wire form (with a small body behind it), or
        // the HTTP/2 HEADERS frames (HPACK-compressed; the body follows in DATA frames).
        let withheld = !ranOnHTTP2 && expectsContinue && !sentHeldBody
        let inMemory = ranOnHTTP2 ? http2HeadBytes + request.body.count
            : wire.count + (bodyInlined || withheld ? 0 : request.body.count)
        metrics.bytesSent = Int64(inMemory) + (upload?.bytesSent ?? 0)
        if let head {
            let headBytes = head.headers.reduce(17 + head.status.reason.utf8.count) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
            metrics.bytesReceived = Int64(headBytes + wireBodyBytes)
        }
        timeline.fill(&metrics)
        if timeline.assigned != nil { metrics.httpVersion = ranOnHTTP2 ? "HTTP/2" : "HTTP/1.1" }
        return metrics
    }

    /// Cancels the request: from the task's cancellation handler, on the loop.
    func cancel() {
        switch phase {
        case .created:
            phase = .cancelledEarly
        case .cancelledEarly:
            return
        case .finished:
            // A body that waited for its reader to be decoded: the reader left.
            streamedDecoding = nil
        case .started, .streamingBody:
            if let pool {
                pool.cancel(self)
            } else {
                finish(.failure(.cancelled))
            }
        }
    }

    // MARK: - Waiting for a connection

    /// Runs `check` at `deadline` (the pool's check of the wait for a connection), replacing the
    /// check armed before.
    func scheduleWaitCheck(at deadline: UInt64, loop: EventLoop, _ check: @escaping @Sendable () -> Void) {
        waitTimer?.cancel()
        let delay = Int64(clamping: deadline &- min(EventLoop.now(), deadline))
        waitTimer = loop.scheduleTimer(after: .nanoseconds(delay), check)
    }

    /// Stops the wait check: the exchange got a connection or ended.
    func stopWaitCheck() {
        waitTimer?.cancel()
        waitTimer = nil
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

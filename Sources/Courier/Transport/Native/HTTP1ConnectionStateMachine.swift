import CourierHTTP1
import CourierWire

/// One HTTP/1.1 client connection as a pure state machine: every method takes one event and
/// returns what the driver must do (``Action``).
///
/// It does no I/O, owns no timer and holds no reference to the connection, pool or exchange:
/// the request comes in as values (``Request``), time comes in with the events (monotonic
/// nanoseconds), and received bytes come in as plaintext buffers. ``HTTP1ClientConnection`` is
/// its driver on the event loop; the tests drive it with byte strings and a virtual clock.
///
/// The rules:
/// - **Life.** initial → connecting → (tunnelling) → (handshaking) → idle ⇄ busy → closed. Once
///   closed it stays closed. Tunnelling (a `CONNECT` or SOCKS5 exchange with a proxy) and the
///   TLS handshake share the connect timeout's deadline.
/// - **One request at a time**, whose life is one ``RequestPhase``: sending → awaiting the head →
///   receiving the body; done is the connection idle again (reusable) or closed. A response may
///   begin while the request is still being written (an early `413`): it is read, and the
///   connection is not reused.
/// - **`Expect: 100-continue`.** A request that carries it writes its head, then holds its body
///   until the server answers `100 Continue`, or for ``continueWait`` (at most the request's
///   timeout) without an answer, as curl does; then the body goes. A final response that comes
///   first ends the request without the body (an early `401` or `413` costs no upload), and the
///   connection is not reused.
/// - **Silence, not duration, times a request out.** The final head must arrive within the
///   timeout of the last written byte, however it trickles and whatever interim responses come
///   first; in the body only payload bytes count as progress (not chunk framing). While the
///   consumer of a streamed body holds enough, reading pauses and so does the timeout.
/// - **Reuse** needs a `keep-alive` response, a body not delimited by the close, the request
///   written completely, no `Connection: close` from the caller, no bytes after the response, and
///   a single framing (chunked with `Content-Length` is not trusted twice).
/// - **Stale connections.** A peer that closes a reused connection before any response byte
///   makes the request go out once more on a fresh connection, once, when it is idempotent,
///   none of it was sent, or only the head of one whose body waited for `100 Continue`; otherwise the request fails with ``HTTPConnectionError/staleConnection``.
///   On a fresh connection the same close is ``HTTPConnectionError/connectionLost``.
struct HTTP1ConnectionStateMachine {
    /// Where the connection is in its life.
    enum State: Equatable {
        /// Created; ``start(at:)`` not called yet.
        case initial
        /// Resolving and connecting, until the deadline.
        case connecting(deadline: UInt64)
        /// Connected to a proxy; the tunnel to the origin is being opened until the deadline.
        case tunnelling(deadline: UInt64)
        /// Connected; the TLS handshake runs until the deadline.
        case handshaking(deadline: UInt64)
        /// Ready, without a request.
        case idle
        /// Carrying a request, in the given phase.
        case busy(RequestPhase)
        /// Closed for good.
        case closed
    }

    /// Where the current request is.
    enum RequestPhase: Equatable {
        /// Its bytes are being written; no final response head yet.
        case sending
        /// Written (or writing failed); waiting for the final response head.
        case awaitingHead
        /// The final head arrived; the body is being read (writing may still go on: an early
        /// response).
        case receivingBody
    }

    /// How far the request's bytes got.
    enum WriteState: Equatable {
        /// Bytes remain to be written.
        case writing
        /// Only the head is being written: the request expects `100 Continue` before its body.
        case head
        /// The head was written and the body waits for `100 Continue`, or until the deadline.
        case holdingBody(until: UInt64)
        /// A final response came while the body was held: it is never sent.
        case withheld
        /// Every byte was written.
        case written
        /// The peer stopped taking bytes before the end.
        case failed
    }

    /// The most interim (1xx) responses accepted before the final one; more fail the request.
    static let maxInterimResponses = 10
    /// How long a request with `Expect: 100-continue` holds its body for the server's
    /// `100 Continue` before it sends it anyway (curl's default), in nanoseconds.
    static let continueWait: UInt64 = 1_000_000_000

    /// The connection's fixed settings.
    let configuration: Configuration
    /// Where the connection is; set only by the machine's own methods (here, +Reading, +Closing).
    var state = State.initial
    /// Responses completed on this connection; above 0 the connection counts as reused.
    private(set) var completedRequests = 0

    // The current request. Kept after it ends, until the next one starts, so the driver can
    // read what it cost (``bytesSent``, ``body``).

    /// The current (or last) request.
    private(set) var request: Request?
    /// How far its bytes got.
    private(set) var write = WriteState.written
    /// Its bytes written so far (for a plain connection, the offset into its wire form).
    private(set) var bytesSent = 0
    /// Whether any of its body may have been written: `false` while a body waits for
    /// `100 Continue` (only the head goes), so a server cannot have acted on the request yet.
    private(set) var bodyMayHaveGone = true
    /// The last time it made progress: a byte written, the final head, body payload.
    var lastProgress: UInt64 = 0
    /// Whether any byte of a response (an interim one included) arrived for it.
    var receivedResponseBytes = false
    /// Interim (1xx) responses received for it.
    var interimResponses = 0

    // The response being read (see +Reading, which sets these and the three above).

    /// Parses response heads (interim and final); it resets itself after each.
    var parser: ResponseHeadParser
    /// Removes the body's framing (length, chunked, until close).
    var decoder = BodyDecoder(framing: .none)
    /// The final head, once received.
    var head: HTTPResponse.Head?
    /// The body so far.
    var body = HTTP1ResponseBody()
    /// A streamed, content-coded body's decoding, made with its head for the exchange, which
    /// decodes as its reader takes the bytes (``takeStreamedDecoding()``); the body hands out
    /// the encoded bytes meanwhile.
    var streamedDecoding: StreamedBodyDecoding?
    /// Body bytes on the wire so far, chunk framing included (counted toward the framed limit).
    var framedBodyBytes = 0
    /// Whether the response allows reuse (its own `Connection` and framing).
    var keepAlive = true
    /// Whether the body runs until the peer closes.
    var closeDelimited = false
    /// Whether reading stopped because the consumer of a streamed body holds enough.
    var readPaused = false

    /// Creates a machine for a connection that is not connected yet.
    init(configuration: Configuration) {
        self.configuration = configuration
        self.parser = ResponseHeadParser(limits: configuration.limits)
    }

    /// Whether the connection is ready, with or without a request.
    var isEstablished: Bool {
        switch state {
        case .idle, .busy: return true
        case .initial, .connecting, .tunnelling, .handshaking, .closed: return false
        }
    }

    /// Whether the connection is ready and carries no request.
    var isIdle: Bool { state == .idle }
    /// Whether the connection carries a request.
    var isBusy: Bool { if case .busy = state { true } else { false } }
    /// Whether the connection has completed a response before.
    var isReused: Bool { completedRequests > 0 }
    /// Whether request bytes may still be written.
    var isWriting: Bool { isBusy && (write == .writing || write == .head) }
    /// Whether only the head may be written now (the body waits for `100 Continue`).
    var writesHeadOnly: Bool { isBusy && write == .head }
    /// Whether the body is held for `100 Continue`.
    var holdsBody: Bool { if case .holdingBody = write { isBusy } else { false } }

    // MARK: - Establishing

    /// The driver starts resolving and connecting at `now`.
    mutating func start(at now: UInt64) -> Action {
        guard state == .initial else { return .none }
        let deadline = now &+ configuration.connectTimeout
        state = .connecting(deadline: deadline)
        return .startConnecting(timerAt: deadline)
    }

    /// The TCP connect succeeded (to the origin, or to the proxy).
    mutating func connected(at now: UInt64) -> Action {
        guard case .connecting(let deadline) = state else { return .none }
        if configuration.tunnels {
            state = .tunnelling(deadline: deadline)
            return .startTunnel
        }
        return afterTunnel(deadline: deadline)
    }

    /// The proxy opened the tunnel to the origin.
    mutating func tunnelEstablished(at now: UInt64) -> Action {
        guard case .tunnelling(let deadline) = state else { return .none }
        return afterTunnel(deadline: deadline)
    }

    /// The TLS handshake, or readiness, once the origin is reachable.
    private mutating func afterTunnel(deadline: UInt64) -> Action {
        if configuration.usesTLS {
            state = .handshaking(deadline: deadline)
            return .startHandshake
        }
        state = .idle
        return .reportReady
    }

    /// The TLS handshake completed.
    mutating func handshakeCompleted(at now: UInt64) -> Action {
        guard case .handshaking = state else { return .none }
        state = .idle
        return .reportReady
    }

    /// Resolving, connecting or the handshake failed with `error`.
    mutating func establishmentFailed(_ error: HTTPConnectionError) -> Action {
        guard state != .closed else { return .none }
        state = .closed
        return .close(establishmentError: error)
    }

    // MARK: - Requests

    /// The pool gives the idle connection a request to send.
    mutating func requestStarted(_ request: Request, at now: UInt64) -> Action {
        guard state == .idle else {
            return failRequest(.transportFailed.with(detail: "the connection to \(configuration.origin) is not idle"))
        }
        begin(request, at: now)
        return .send(timerAt: now &+ request.timeoutNanoseconds)
    }

    /// Resets the request state for `request`.
    private mutating func begin(_ request: Request, at now: UInt64) {
        self.request = request
        state = .busy(.sending)
        write = request.expectsContinue ? .head : .writing
        bytesSent = 0
        bodyMayHaveGone = !request.expectsContinue
        lastProgress = now
        receivedResponseBytes = false
        interimResponses = 0
        head = nil
        body = HTTP1ResponseBody()
        streamedDecoding = nil
        framedBodyBytes = 0
        readPaused = false
    }

    /// The task of the current request was cancelled (or the pool aborts it with `error`).
    /// A cancel that comes after the request ended does nothing.
    mutating func cancel(with error: HTTPConnectionError) -> Action {
        guard isBusy else { return .none }
        return failRequest(error)
    }

    // MARK: - Writing

    /// `count` request bytes were written at `now`.
    mutating func bytesWritten(_ count: Int, at now: UInt64) {
        guard isWriting else { return }
        bytesSent &+= count
        lastProgress = now
    }

    /// Everything pending was written: the whole request, or the head of one that expects
    /// `100 Continue` (whose body is then held).
    mutating func allWritten(at now: UInt64) -> Action {
        guard case .busy(let phase) = state, write == .writing || write == .head else { return .watchReadable }
        if write == .head, phase == .receivingBody {
            // A final answer came while the head was still going out: the body never goes.
            write = .withheld
            return .watchReadable
        }
        if write == .head, let request {
            let until = now &+ min(Self.continueWait, request.timeoutNanoseconds)
            write = .holdingBody(until: until)
            return .awaitContinue(timerAt: until)
        }
        write = .written
        if phase == .sending { state = .busy(.awaitingHead) }
        return .requestWritten
    }

    /// The peer stopped taking bytes (`EPIPE`, a reset, an orderly close). Whatever it answered
    /// before is still read; without an answer the request failed.
    mutating func writeFailed(_ error: SocketError?) -> Action {
        guard case .busy(let phase) = state else { return close() }
        write = .failed
        if phase == .sending { state = .busy(.awaitingHead) }
        return receivedResponseBytes ? .watchReadable : .readAfterWriteFailure(error)
    }

    /// The held body goes now: the server answered `100 Continue`, or the wait ended at `now`.
    mutating func releaseBody(at now: UInt64) -> Action {
        guard holdsBody, let request else { return .none }
        write = .writing
        bodyMayHaveGone = true
        lastProgress = now
        return .sendBody(timerAt: now &+ request.timeoutNanoseconds)
    }

    /// A final response head came while the body was held: the body never goes, and the
    /// connection is not reused (the server may still wait for it).
    mutating func withholdBody() {
        if holdsBody { write = .withheld }
    }

    /// The driver read what the socket had after a failed write: a request still without any
    /// response byte failed (a stale connection's rules apply).
    mutating func writeFailureDrained(_ error: SocketError?) -> Action {
        guard isBusy, write == .failed, !receivedResponseBytes else { return .none }
        return closedBeforeResponse(error)
    }

    // MARK: - Timers

    /// The timer fired at `now`: a connect, handshake or request past its deadline fails;
    /// otherwise the timer is armed again for the deadline (progress may have moved it).
    mutating func timerFired(at now: UInt64) -> Action {
        switch state {
        case .connecting(let deadline):
            return now < deadline ? .armTimer(deadline) : .timeOutConnector
        case .tunnelling(let deadline):
            if now < deadline { return .armTimer(deadline) }
            let limit = Duration.nanoseconds(Int64(clamping: configuration.connectTimeout))
            return establishmentFailed(.timedOut.with(detail: "the proxy did not open the tunnel to \(configuration.origin) within \(limit)"))
        case .handshaking(let deadline):
            if now < deadline { return .armTimer(deadline) }
            let limit = Duration.nanoseconds(Int64(clamping: configuration.connectTimeout))
            return establishmentFailed(.timedOut.with(detail: "the TLS handshake with \(configuration.origin) timed out after \(limit)"))
        case .busy(let phase):
            if case .holdingBody(let until) = write {
                return now >= until ? releaseBody(at: now) : .armTimer(until)
            }
            // A paused stream waits for its consumer, not for the server: resuming re-arms.
            guard let request, !readPaused else { return .none }
            let deadline = lastProgress &+ request.timeoutNanoseconds
            guard now >= deadline else { return .armTimer(deadline) }
            let silence = phase == .receivingBody
                ? "no body bytes came from \(configuration.origin) for \(request.timeout)"
                : "no complete response head came from \(configuration.origin) within \(request.timeout) of sending"
            return failRequest(.timedOut.with(detail: silence))
        case .initial, .idle, .closed:
            return .none
        }
    }

    /// Records that a response ended; the connection becomes idle when it may be reused.
    mutating func ended(reusable: Bool) {
        completedRequests += 1
        readPaused = false
        state = reusable ? .idle : .closed
    }
}

import CourierHTTP1
import CourierWire

/// One accepted connection of an ``HTTPServer``: reads requests one at a time,
/// hands each to the handler, writes responses, and enforces timeouts and limits.
///
/// Confined to its event loop; the handler's ``HTTPServerResponder`` reaches it
/// through a ``LoopBound``.
final class HTTPServerConnection {
    enum Phase {
        /// Waiting for (or parsing) a request head.
        case readingHead
        /// Reading the body of `head`.
        case readingBody
        /// The handler owns the current request.
        case handling
        /// The last response is being sent; the connection closes (or half-closes) afterwards.
        case closing
        /// The sending side is shut down; reads are discarded until the peer closes.
        case draining
        case closed
    }

    /// What to do once every queued byte has been written.
    enum AfterFlush {
        case nothing
        case close
        /// Shut down writing, then discard reads until EOF or the deadline.
        case shutdownWrite(linger: Duration)
    }

    let socket: Socket
    let number: Int
    let remote: SocketAddress?
    let context: LoopContext
    var loop: EventLoop { context.loop }
    var configuration: HTTPServer.Configuration { context.server.configuration }

    var phase = Phase.readingHead
    var parser: RequestHeadParser
    /// Whether part of a head has been received (for the header timeout and 408).
    var headStarted = false
    var requestNumber = 0
    var head: HTTPRequestHead?
    var decoder: BodyDecoder?
    var body: [UInt8] = []
    /// Whether the handler already sent raw bytes for the current request.
    var responseStarted = false
    /// Received bytes not processed yet (pipelined requests while one is handled).
    var inbound: [UInt8] = []
    var isProcessing = false
    var readingPaused = false
    var peerClosed = false

    /// Bytes queued for sending; `outbound[outboundOffset...]` is still unsent.
    var outbound: [UInt8] = []
    var outboundOffset = 0
    var afterFlush = AfterFlush.nothing
    /// Work waiting for the queue to be written out (``whenFlushed(requestNumber:_:)``).
    var flushWaiters: [@Sendable () -> Void] = []
    var registeredInterest: EventLoop.Interest = .readable

    /// When the connection times out, on the monotonic clock; `nil` while a handler runs.
    var deadline: UInt64?
    /// When the body being read must be complete (``HTTPServer/Configuration/bodyTimeout``).
    var bodyDeadline: UInt64 = 0
    var timer: EventLoop.Timer?

    init(socket: Socket, number: Int, remote: SocketAddress?, context: LoopContext) {
        self.socket = socket
        self.number = number
        self.remote = remote
        self.context = context
        self.parser = RequestHeadParser(limits: context.server.configuration.limits)
    }

    /// Called once the connection is registered: starts the header timeout.
    func start() {
        setDeadline(after: configuration.headerTimeout)
    }

    /// Readiness from the event loop.
    func handle(_ readiness: EventLoop.Readiness) {
        if readiness.contains(.error) || readiness.contains(.hangup) {
            // A reset, or both directions closed: nothing can be sent any more, and
            // hang-ups are reported on every turn, so stop watching at once.
            close()
            return
        }
        if readiness.contains(.writable) { flush() }
        if phase == .closed { return }
        if readiness.contains(.readable) { readAvailable() }
    }

    private func readAvailable() {
        let buffer = context.readBuffer
        // A few reads per wake-up: fair to other connections, cheap for large bodies.
        for _ in 0..<4 {
            guard phase != .closed, !readingPaused, !peerClosed else { return }
            let result: Socket.IOResult
            do {
                result = try socket.read(into: buffer)
            } catch {
                close()
                return
            }
            switch result {
            case .bytes(let count):
                received(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                if count < buffer.count { return }
            case .wouldBlock:
                return
            case .closed:
                peerFinished()
                return
            }
        }
    }

    /// The peer closed its sending side.
    private func peerFinished() {
        peerClosed = true
        switch phase {
        case .closing:
            // Keep sending the final response; just stop watching for reads.
            updateInterest()
        default:
            // Nobody is waiting for an answer any more: abandon the request, if any.
            close()
        }
    }

    /// Registers the timeout: the connection closes `delay` from now unless the deadline moves.
    func setDeadline(after delay: Duration) {
        setDeadline(at: EventLoop.now() &+ nanoseconds(delay))
    }

    /// A body starts: it must be complete within the body timeout.
    func startBodyDeadline() {
        bodyDeadline = EventLoop.now() &+ nanoseconds(configuration.bodyTimeout)
        extendBodyDeadline()
    }

    /// Body bytes arrived: the next may take up to the idle timeout, but never past the body deadline.
    func extendBodyDeadline() {
        setDeadline(at: min(EventLoop.now() &+ nanoseconds(configuration.idleTimeout), bodyDeadline))
    }

    private func setDeadline(at when: UInt64) {
        deadline = when
        if let timer, timer.isPending, timer.deadline <= when { return }
        timer?.cancel()
        scheduleTimer(at: when)
    }

    func clearDeadline() {
        deadline = nil
    }

    private func scheduleTimer(at when: UInt64) {
        let now = EventLoop.now()
        let delay = Duration.nanoseconds(Int64(clamping: when > now ? when - now : 0))
        let bound = LoopBound(self, on: loop)
        timer = loop.scheduleTimer(after: delay) { bound.value.timerFired() }
    }

    private func timerFired() {
        timer = nil
        guard phase != .closed, let deadline else { return }
        if EventLoop.now() < deadline {
            scheduleTimer(at: deadline)
            return
        }
        timedOut()
    }

    private func timedOut() {
        switch phase {
        case .readingHead where headStarted:
            sendError(status: 408, message: "request head not received in time")
        case .readingBody:
            sendError(status: 408, message: "request body not received in time")
        default:
            close()
        }
    }

    private func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        if seconds > 1 << 32 { return 1 << 62 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Closes at once: deregisters, gives up its place among the open connections, closes the
    /// socket, drops buffers. Idempotent. The place goes first, so that a peer that sees the close
    /// also sees the server's count without it.
    func close() {
        guard phase != .closed else { return }
        phase = .closed
        timer?.cancel()
        timer = nil
        deadline = nil
        loop.deregister(fd: socket.descriptor)
        context.remove(self)
        socket.close()
        inbound = []
        outbound = []
        outboundOffset = 0
        flushWaiters = []
        body = []
        decoder = nil
        head = nil
    }
}

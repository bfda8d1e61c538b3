import CourierHTTP1
import CourierTLS
import CourierWire
import Foundation

/// One HTTP/1.1 connection of the native transport: a non-blocking socket (optionally with a
/// TLS session) driven by its pool's event loop, carrying one exchange at a time.
///
/// Loop-confined: created, used and closed on its pool's loop thread only; timers and resolver
/// callbacks reach it through its own ``LoopBound``. Its life:
/// resolving → connecting → (handshaking) → ready (idle or busy with one exchange) → closed.
/// Once closed it is never used again; the pool opens a new one.
final class HTTP1ClientConnection {
    /// Where the connection is in its life.
    enum State: Equatable {
        case initial, connecting, handshaking, ready, closed
    }

    /// Which part of the response the connection is reading.
    enum ResponsePhase {
        case head, body
    }

    let key: NativePoolKey
    let loop: EventLoop
    let settings: NativeSettings
    let tlsContext: TLSContext?

    /// The pool that owns the connection; cleared when it closes.
    var pool: HostPool?
    /// Its id in the pool's state machine.
    var poolID = PoolStateMachine.ConnectionID(value: 0)
    /// The loop's shared buffers.
    var context: NativeLoopContext?
    /// Its own handle, for timer and resolver closures; cleared when it closes.
    var selfBound: LoopBound<HTTP1ClientConnection>?
    /// Where callers may send on this connection directly while it is idle (plain HTTP only).
    var slot: NativeDirectSlot?

    var state = State.initial
    /// When it resolved, connected and shook hands, for the metrics of its first exchange.
    var timeline = ConnectionTimeline()
    var socket: Socket?
    var tls: TLSClientSession?
    private var interest = EventLoop.Interest.none
    /// Finds and connects the socket while the state is `connecting`.
    var connector: NativeConnector?
    var connectDeadline: UInt64 = 0

    /// The exchange in progress, if any.
    var exchange: NativeExchange?
    /// Responses completed on this connection; above 0 the connection counts as reused.
    var completedExchanges = 0
    /// The last time the exchange made progress: request bytes written, the final response head
    /// or body payload received (see `readAvailable()`).
    var lastProgress: UInt64 = 0
    var watchdog: EventLoop.Timer?
    var watchdogDeadline: UInt64 = 0

    // Response state of the current exchange.
    var parser: ResponseHeadParser
    var decoder = BodyDecoder(framing: .none)
    var contentDecoder: ContentDecoder?
    var responsePhase = ResponsePhase.head
    var receivedResponseBytes = false
    /// Interim (1xx) responses received for the current exchange.
    var interimResponses = 0
    /// Body bytes on the wire so far, chunk framing included (counted toward the body limit).
    var framedBodyBytes = 0
    var keepAlive = true
    var closeDelimited = false
    var declaredLength: Int64?

    // Request writing state of the current exchange.
    var writeOffset = 0
    var bodyOffset = 0
    var bytesSent = 0
    var writeComplete = true
    var writeClosed = false
    /// Ciphertext waiting to be written (TLS only).
    var cipherOut: [UInt8] = []
    var cipherOffset = 0

    /// Creates a connection that is not connected yet; call ``establish()``.
    init(key: NativePoolKey, loop: EventLoop, settings: NativeSettings, tlsContext: TLSContext?) {
        self.key = key
        self.loop = loop
        self.settings = settings
        self.tlsContext = tlsContext
        self.parser = ResponseHeadParser(limits: settings.limits)
        settings.census.connection(1)
    }

    deinit {
        settings.census.connection(-1)
    }

    /// Whether the connection can carry a new exchange.
    var isIdleAndOpen: Bool { state == .ready && exchange == nil }

    // MARK: - Establishing

    /// Resolves the host and races its addresses (``NativeConnector``), then connects TLS or
    /// becomes ready. The connect timeout bounds it all.
    func establish() {
        state = .connecting
        connectDeadline = EventLoop.now() &+ settings.connectTimeout
        armWatchdog(deadline: connectDeadline)
        let connector = NativeConnector(key: key, loop: loop, settings: settings)
        self.connector = connector
        connector.start { [self] result in
            self.connectorFinished(result)
        }
    }

    /// The connect race ended: takes the winning socket, or fails.
    private func connectorFinished(_ result: Result<Socket, HTTPConnectionError>) {
        if let race = connector?.timeline {
            timeline.resolveStart = race.resolveStart
            timeline.resolveEnd = race.resolveEnd
            timeline.connectStart = race.connectStart
        }
        connector = nil
        guard state == .connecting else {
            if case .success(let socket) = result { socket.close() }
            return
        }
        let socket: Socket
        switch result {
        case .success(let connected):
            socket = connected
        case .failure(let error):
            failEstablishment(error)
            return
        }
        do {
            try loop.register(fd: socket.descriptor, interest: .readable) { [self] readiness in
                self.handle(readiness)
            }
        } catch {
            socket.close()
            failEstablishment(NativeErrors.io(error))
            return
        }
        self.socket = socket
        interest = .readable
        try? socket.setNoDelay()
        let now = EventLoop.now()
        timeline.connectEnd = now
        if let tlsContext {
            timeline.handshakeStart = now
            startTLS(tlsContext)
        } else {
            becomeReady()
        }
    }

    /// The connection is usable: hand it to the pool.
    func becomeReady() {
        state = .ready
        if tls == nil, pool?.lane != nil, let socket { slot = NativeDirectSlot(descriptor: socket.descriptor) }
        setInterest(.readable)
        lastProgress = EventLoop.now()
        if tls != nil { timeline.handshakeEnd = lastProgress }
        pool?.connectionReady(self)
    }

    // MARK: - Readiness

    /// Dispatches a readiness event from the loop.
    private func handle(_ readiness: EventLoop.Readiness) {
        switch state {
        case .handshaking:
            if readiness.contains(.writable) { flush() }
            if state == .handshaking, !readiness.isDisjoint(with: [.readable, .hangup, .error]) { readHandshake() }
        case .ready:
            if exchange == nil, slot != nil, let pool {
                // Idle in the loop's eyes: a caller may have sent a request on it directly. If a
                // caller is sending right now, wait (without readiness) until it says it is done.
                if !pool.adoptWithoutWaiting(self) {
                    setInterest(.none)
                    return
                }
            }
            if readiness.contains(.writable) { flush() }
            if state == .ready, !readiness.isDisjoint(with: [.readable, .hangup, .error]) { readAvailable() }
        case .initial, .connecting, .closed:
            break
        }
    }

    /// A caller that was sending on this idle connection is done: handle what the loop saw.
    func resumeAfterWaitingForCaller() {
        guard state == .ready else { return }
        if exchange == nil { setInterest(.readable) }
        handle([.readable])
    }

    /// Changes the epoll interest when it differs.
    func setInterest(_ wanted: EventLoop.Interest) {
        guard wanted != interest, let socket else { return }
        do {
            try loop.modify(fd: socket.descriptor, interest: wanted)
            interest = wanted
        } catch {
            fail(NativeErrors.io(error))
        }
    }

    // MARK: - Closing

    /// Fails an establishment (resolve, connect, handshake) with `error`.
    func failEstablishment(_ error: HTTPConnectionError) {
        guard state != .closed else { return }
        let pool = tearDown()
        pool?.connectionClosed(self, establishmentError: error)
    }

    /// Closes the connection. A TLS session first sends close_notify when `graceful`.
    func close(graceful: Bool = false) {
        guard state != .closed else { return }
        if graceful, state == .ready, let tls, let socket {
            tls.close()
            if let bytes = tls.takeCiphertext() {
                _ = bytes.withUnsafeBytes { buffer in Result { () throws(SocketError) in try socket.write(buffer) } }
            }
        }
        let wasReady = state == .ready
        let pool = tearDown()
        pool?.connectionClosed(self, establishmentError: wasReady ? nil : .cannotConnect.with(detail: "closed while connecting to \(key)"))
    }

    /// Releases everything the connection holds; returns the pool to notify.
    private func tearDown() -> HostPool? {
        if let slot {
            // Never close a descriptor a caller may still write to.
            if let orphan = slot.reclaim() {
                let exchange = orphan.exchange.value
                if exchange.begin(orphan.continuation, bound: orphan.exchange) {
                    exchange.finish(.failure(.connectionLost.with(detail: "the connection to \(key) closed")))
                }
            }
            pool?.lane?.unpark(slot)
        }
        state = .closed
        connector?.cancel()
        connector = nil
        releaseSocket()
        watchdog?.cancel()
        watchdog = nil
        watchdogDeadline = 0
        tls = nil
        contentDecoder = nil
        cipherOut = []
        selfBound = nil
        let pool = self.pool
        self.pool = nil
        return pool
    }

    private func releaseSocket() {
        guard let socket else { return }
        loop.deregister(fd: socket.descriptor)
        socket.close()
        self.socket = nil
        interest = .none
    }
}

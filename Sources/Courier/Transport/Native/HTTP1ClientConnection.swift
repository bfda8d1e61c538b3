import CourierHTTP1
import CourierTLS
import CourierWire
import Foundation

/// One HTTP/1.1 connection of the native transport: the driver of an
/// ``HTTP1ConnectionStateMachine`` on its pool's event loop.
///
/// The machine decides; the connection does the I/O and carries out the machine's actions: it
/// owns the non-blocking socket (optionally with a TLS session), its epoll interest, the
/// watchdog timer and the connector, and it hands the exchange in progress its head, body bytes
/// and outcome. Every event reaches the machine first and its action is performed afterwards.
///
/// Loop-confined: created, used and closed on its pool's loop thread only; timers and resolver
/// callbacks reach it through its own ``LoopBound``. Once closed it is never used again; the
/// pool opens a new one.
final class HTTP1ClientConnection {
    /// The origin it connects to.
    let key: NativePoolKey
    /// The loop that owns it.
    let loop: EventLoop
    /// The transport's settings.
    let settings: NativeSettings
    /// The TLS configuration, for `https`; `nil` for plain HTTP.
    let tlsContext: TLSContext?

    /// The pool that owns the connection; cleared when it closes.
    var pool: HostPool?
    /// Its id in the pool's state machine.
    var poolID = PoolStateMachine.ConnectionID(value: 0)
    /// The loop's shared buffers.
    var context: NativeLoopContext?
    /// Its own handle, for timer and resolver closures; cleared when it closes.
    var selfBound: LoopBound<HTTP1ClientConnection>?

    /// The protocol logic: establishment, the request's phases, the response, reuse, timeouts.
    var machine: HTTP1ConnectionStateMachine
    /// When it resolved, connected and shook hands, for the metrics of its first exchange.
    var timeline = ConnectionTimeline()
    /// The connected socket, once the connector handed it over; `nil` after closing.
    var socket: Socket?
    /// The TLS session whose plaintext is HTTP: to the origin for `https`, or to an `https://`
    /// proxy that forwards plain `http` requests.
    var tls: TLSClientSession?
    /// The TLS session to an `https://` proxy that carries a tunnel (the origin's TLS session,
    /// ``tls``, runs inside it); `nil` otherwise.
    var proxyTLS: TLSClientSession?
    /// The epoll interest registered for the socket.
    var interest = EventLoop.Interest.none
    /// Finds and connects the socket while the machine is connecting.
    var connector: NativeConnector?
    /// Whether the socket, timer and connector were released (the connection closed).
    private var tornDown = false

    /// The exchange in progress, if any.
    var exchange: NativeExchange?
    /// The one timer: connect and handshake deadlines, request silence, idle ticks.
    var watchdog: EventLoop.Timer?
    /// When the watchdog fires; 0 when it is not armed.
    var watchdogDeadline: UInt64 = 0

    /// The proxy handshake while the machine is tunnelling, and the bytes it still has to write.
    var tunnel: ProxyTunnel?

    /// Ciphertext waiting to be written (TLS only).
    var cipherOut: [UInt8] = []
    /// How much of ``cipherOut`` was written.
    var cipherOffset = 0
    /// Whether what waits in ``cipherOut`` is only the handshake's last flight (the client's
    /// Finished, which goes out with the first request), with nothing encrypted after it.
    var onlyHandshakePending = false

    /// Creates a connection that is not connected yet; call ``establish()``.
    init(key: NativePoolKey, loop: EventLoop, settings: NativeSettings, tlsContext: TLSContext?) {
        self.key = key
        self.loop = loop
        self.settings = settings
        self.tlsContext = tlsContext
        self.machine = HTTP1ConnectionStateMachine(
            configuration: .init(origin: "\(key)", usesTLS: tlsContext != nil || (key.tlsToProxy && key.forwardsThroughProxy),
                                 tunnels: key.tunnels, settings: settings))
        settings.census.connection(1)
    }

    deinit {
        settings.census.connection(-1)
    }

    // MARK: - Establishing

    /// Resolves the host and races its addresses (``NativeConnector``), then connects TLS or
    /// becomes ready. The connect timeout bounds it all.
    func establish() {
        perform(machine.start(at: EventLoop.now()))
    }

    /// Starts the connect race.
    func startConnector() {
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
        guard case .connecting = machine.state else {
            if case .success(let socket) = result { socket.close() }
            return
        }
        let socket: Socket
        switch result {
        case .success(let connected):
            socket = connected
        case .failure(let error):
            perform(machine.establishmentFailed(error))
            return
        }
        do {
            try loop.register(fd: socket.descriptor, interest: .readable) { [self] readiness in
                self.handle(readiness)
            }
        } catch {
            socket.close()
            perform(machine.establishmentFailed(NativeErrors.io(error)))
            return
        }
        self.socket = socket
        interest = .readable
        try? socket.setNoDelay()
        let now = EventLoop.now()
        timeline.connectEnd = now
        if tlsContext != nil || key.tlsToProxy { timeline.handshakeStart = now }
        perform(machine.connected(at: now))
    }

    /// The connection is usable: hand it to the pool.
    func becomeReady() {
        setInterest(.readable)
        if tls != nil { timeline.handshakeEnd = EventLoop.now() }
        switch negotiatedProtocol {
        case .http1:
            pool?.connectionReady(self)
        case .http2:
            handOverToHTTP2()
        case .refused(let error):
            perform(machine.establishmentFailed(error))
        }
    }

    // MARK: - Readiness

    /// Dispatches a readiness event from the loop.
    private func handle(_ readiness: EventLoop.Readiness) {
        switch machine.state {
        case .tunnelling:
            if readiness.contains(.writable) { flushTunnel() }
            if case .tunnelling = machine.state, !readiness.isDisjoint(with: [.readable, .hangup, .error]) { readTunnel() }
        case .handshaking:
            if readiness.contains(.writable) { flush() }
            if case .handshaking = machine.state, !readiness.isDisjoint(with: [.readable, .hangup, .error]) { readHandshake() }
        case .idle, .busy:
            if readiness.contains(.writable) { flush() }
            if machine.isEstablished, !readiness.isDisjoint(with: [.readable, .hangup, .error]) { readAvailable() }
        case .initial, .connecting, .closed:
            break
        }
    }

    /// Changes the epoll interest when it differs.
    func setInterest(_ wanted: EventLoop.Interest) {
        guard wanted != interest, let socket else { return }
        do {
            try loop.modify(fd: socket.descriptor, interest: wanted)
            interest = wanted
        } catch {
            perform(machine.close(failing: NativeErrors.io(error)))
        }
    }

    // MARK: - Closing

    /// Closes the connection. A TLS session first sends close_notify when `graceful`. A request
    /// on it fails (the connection to the origin closed).
    func close(graceful: Bool = false) {
        let established = machine.isEstablished
        perform(machine.close(), graceful: graceful && established)
    }

    /// Closes the connection for the pool's shutdown or idle expiry: a request on it fails with
    /// the transport's shutdown error; a TLS session sends close_notify.
    func shutDown() {
        let established = machine.isEstablished
        perform(machine.close(failing: NativeErrors.shutDown), graceful: established)
    }

    /// Releases everything the connection holds and tells the pool; `establishmentError` is set
    /// when it never became ready.
    func closeConnection(graceful: Bool, establishmentError: HTTPConnectionError?) {
        guard !tornDown else { return }
        // close_notify must follow every record encrypted before it. It goes out (one
        // best-effort write) after what is still pending only when that is the handshake's
        // Finished; behind a request's records still waiting for the socket, the connection
        // closes without it rather than complete a request that is being failed.
        let pending = cipherOffset < cipherOut.count
        if graceful, let tls, let socket, !pending || onlyHandshakePending {
            tls.close()
            let bytes = Array(cipherOut[cipherOffset...]) + (wrappedForProxy(tls.takeCiphertext()) ?? [])
            _ = bytes.withUnsafeBytes { buffer in Result { () throws(SocketError) in try socket.write(buffer) } }
        }
        let pool = tearDown()
        pool?.connectionClosed(self, establishmentError: establishmentError)
    }

    /// Releases everything the connection holds; returns the pool to notify.
    func tearDown() -> HostPool? {
        tornDown = true
        connector?.cancel()
        connector = nil
        releaseSocket()
        watchdog?.cancel()
        watchdog = nil
        watchdogDeadline = 0
        tls = nil
        proxyTLS = nil
        tunnel = nil
        cipherOut = []
        selfBound = nil
        let pool = self.pool
        self.pool = nil
        return pool
    }

    /// Deregisters the socket from the loop and closes it.
    private func releaseSocket() {
        guard let socket else { return }
        loop.deregister(fd: socket.descriptor)
        socket.close()
        self.socket = nil
        interest = .none
    }
}

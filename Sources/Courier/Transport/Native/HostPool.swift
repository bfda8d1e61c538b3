import CourierTLS
import CourierWire

/// The driver of one (scheme, host, port)'s ``PoolStateMachine`` on its event loop.
///
/// The machine decides; the pool carries its decisions out: it keeps the exchanges waiting for
/// a connection and the connection objects by id, opens and closes connections, finishes
/// exchanges, and runs the timers the machine asks for. Every event reaches the machine first
/// and its action is performed afterwards, so a connection or exchange that calls back into the
/// pool while an action runs meets a machine in a consistent state.
///
/// Loop-confined: every method runs on the pool's loop thread.
final class HostPool {
    typealias RequestID = PoolStateMachine.RequestID
    typealias ConnectionID = PoolStateMachine.ConnectionID

    let key: NativePoolKey
    let loop: EventLoop
    let settings: NativeSettings
    let tlsContext: TLSContext?
    /// What the transport reads of this pool from other threads.
    let gauge: PoolGauge
    private let contextBound: LoopBound<NativeLoopContext>

    /// The loop's context, attached on first use.
    private(set) var context: NativeLoopContext?
    private var selfBound: LoopBound<HostPool>?
    var machine: PoolStateMachine
    /// Exchanges the pool holds until a connection takes them: waiting, or placed by the
    /// machine a moment before the connection starts them.
    var exchanges: [RequestID: NativeExchange] = [:]
    /// Every open or opening connection, until it turns out to speak HTTP/2.
    var connections: [ConnectionID: HTTP1ClientConnection] = [:]
    /// Every HTTP/2 connection (taken over from an ``HTTP1ClientConnection`` that established it).
    var http2Connections: [ConnectionID: HTTP2ClientConnection] = [:]
    private var nextRequest = 0
    private var sweepTimer: EventLoop.Timer?

    /// Creates an empty pool; callable from any thread (the pool is then handed to its loop).
    /// - Parameters:
    ///   - maxConnections: the pool's share of the origin's connection limit (``OriginSpread``).
    ///   - knowsHTTP1: whether the origin is known to speak HTTP/1.1 (another of its pools found
    ///     out), so that the pool need not open one connection at a time to find out.
    init(key: NativePoolKey, loop: EventLoop, settings: NativeSettings, tlsContext: TLSContext?,
         context: LoopBound<NativeLoopContext>, maxConnections: Int, knowsHTTP1: Bool, gauge: PoolGauge) {
        self.key = key
        self.loop = loop
        self.settings = settings
        self.tlsContext = tlsContext
        self.contextBound = context
        self.gauge = gauge
        self.machine = PoolStateMachine(origin: "\(key)", maxConnections: maxConnections,
                                        idleTimeout: settings.idleTimeout, mayUseHTTP2: !knowsHTTP1 && Self.mayUseHTTP2(key, settings),
                                        maxMultiplexedConnections: settings.maxHTTP2Connections)
        settings.census.pool(1)
    }

    deinit {
        settings.census.pool(-1)
    }

    /// Whether a connection to `key` may turn out to speak HTTP/2: over `https` unless HTTP/1.1
    /// is required (ALPN decides), and over plain `http` only with prior knowledge and no proxy.
    static func mayUseHTTP2(_ key: NativePoolKey, _ settings: NativeSettings) -> Bool {
        key.secure ? settings.httpVersion != .http1Only
            : settings.httpVersion == .http2PriorKnowledge && !key.forwardsThroughProxy
    }

    /// The number of open or opening connections.
    var connectionCount: Int { machine.connectionCount }
    /// The number of idle connections.
    var idleCount: Int { machine.idleCount }
    /// The number of exchanges waiting for a connection.
    var waitingCount: Int { machine.waitingCount }

    // MARK: - Events from exchanges

    /// Takes a new exchange from `send`, on the loop.
    func start(_ bound: LoopBound<NativeExchange>, continuation: NativeExchange.Continuation, selfBound: LoopBound<HostPool>) {
        let exchange = bound.value
        guard exchange.begin(continuation, bound: bound) else { return }
        attach(selfBound)
        let id = register(exchange)
        place(id, timeout: exchange.timeout)
    }

    /// The exchange's task was cancelled.
    func cancel(_ exchange: NativeExchange) {
        guard let id = exchange.poolID else { return }
        perform(machine.requestCancelled(id))
    }

    /// A connection found its exchange's pooled connection stale: the exchange goes out once
    /// more on a connection opened for it alone.
    func retryOnFreshConnection(_ exchange: NativeExchange) {
        guard let id = exchange.poolID else { return }
        exchanges[id] = exchange
        perform(machine.retryOnFreshConnection(id, timeout: exchange.timeout, at: EventLoop.now()))
    }

    // MARK: - Events from connections

    /// Bytes arrived on one of the pool's connections.
    func progress(at now: UInt64) {
        machine.progress(at: now)
    }

    /// A connection finished connecting (and its TLS handshake).
    func connectionReady(_ connection: HTTP1ClientConnection) {
        perform(machine.connectionReady(connection.poolID, at: EventLoop.now()))
        if machine.originProtocol == .http1 { gauge.markHTTP1() }
    }

    /// A connection finished its exchange and may carry another.
    func release(_ connection: HTTP1ClientConnection) {
        perform(machine.connectionReleased(connection.poolID, at: EventLoop.now()))
    }

    /// A connection closed. `establishmentError` is set when it never became ready.
    func connectionClosed(_ connection: HTTP1ClientConnection, establishmentError: HTTPConnectionError?) {
        let id = connection.poolID
        guard connections[id] === connection else { return }
        connections[id] = nil
        perform(machine.connectionClosed(id, error: establishmentError))
    }

    // MARK: - Performing the machine's actions

    /// Asks the machine to place a request.
    func place(_ id: RequestID, timeout: UInt64) {
        perform(machine.requestArrived(id, timeout: timeout, at: EventLoop.now()))
    }

    /// Carries out what the machine decided.
    func perform(_ action: PoolStateMachine.Action) {
        switch action.request {
        case .none:
            break
        case .execute(let id, let connectionID):
            execute(id, on: connectionID)
        case .wait(let id, let deadline):
            if let selfBound {
                exchanges[id]?.scheduleWaitCheck(at: deadline, loop: loop) { selfBound.value.waitCheck(id) }
            }
        case .fail(let id, let error):
            exchanges.removeValue(forKey: id)?.finish(.failure(error))
        case .failAll(let ids, let error):
            for id in ids { exchanges.removeValue(forKey: id)?.finish(.failure(error)) }
        case .abort(let id, let connectionID, let error):
            if let connection = connections[connectionID] {
                connection.abort(requestID: id, with: error)
            } else {
                http2Connections[connectionID]?.abort(requestID: id, with: error)
            }
        case .executeAll(let ids, let connectionID):
            executeAll(ids, on: connectionID)
        }
        switch action.connection {
        case .none:
            break
        case .open(let id):
            open(id)
        case .openAll(let ids):
            for id in ids { open(id) }
        case .rest(_, let sweepAt):
            // An idle connection needs nothing until it is used, closed or swept.
            if let sweepAt { armSweep(at: sweepAt) }
        case .close(let ids, let sweepAt):
            if let sweepAt { armSweep(at: sweepAt) }
            for id in ids { closeExpired(id) }
        }
    }

    /// Starts the request on the connection the machine chose.
    private func execute(_ id: RequestID, on connectionID: ConnectionID) {
        guard let exchange = exchanges.removeValue(forKey: id) else {
            // Only the machine ends a placed request, so this cannot happen; the connection must
            // not stay busy with nothing if it does.
            perform(machine.connectionReleased(connectionID, at: EventLoop.now()))
            return
        }
        guard let connection = connections[connectionID] else {
            if let multiplexed = http2Connections[connectionID] {
                exchange.stopWaitCheck()
                multiplexed.execute([exchange])
                return
            }
            // The machine and the pool always agree on open connections; this cannot happen.
            exchange.finish(.failure(.transportFailed.with(detail: "the pool lost connection \(connectionID)")))
            return
        }
        exchange.stopWaitCheck()
        connection.execute(exchange)
    }

    private func waitCheck(_ id: RequestID) {
        perform(machine.waitCheck(id, at: EventLoop.now()))
    }

    private func open(_ id: ConnectionID) {
        let bound = LoopBound(HTTP1ClientConnection(key: key, loop: loop, settings: settings, tlsContext: tlsContext), on: loop)
        let connection = bound.value
        connection.selfBound = bound
        connection.pool = self
        connection.poolID = id
        connection.context = context
        connections[id] = connection
        connection.establish()
    }

    /// Closes a connection the machine no longer counts (idle expiry, or shutdown); a request on
    /// it fails with the shutdown error.
    private func closeExpired(_ id: ConnectionID) {
        if let connection = connections[id] {
            connection.shutDown()
        } else {
            http2Connections[id]?.shutDown()
        }
    }

    // MARK: - Idle connections

    private func armSweep(at deadline: UInt64) {
        guard let selfBound else { return }
        sweepTimer?.cancel()
        let delay = Int64(clamping: deadline &- min(EventLoop.now(), deadline))
        sweepTimer = loop.scheduleTimer(after: .nanoseconds(delay)) {
            selfBound.value.sweep()
        }
    }

    private func sweep() {
        sweepTimer = nil
        perform(machine.sweep(at: EventLoop.now()))
    }

    // MARK: - Joining the loop and shutting down

    /// Joins the loop's context on first use.
    func attach(_ selfBound: LoopBound<HostPool>) {
        guard context == nil else { return }
        let context = contextBound.value
        if context.isShutDown {
            _ = machine.shutDown()
        } else {
            context.pools.append(self)
        }
        self.context = context
        self.selfBound = selfBound
    }

    /// Records an exchange the pool now holds; returns its id.
    func register(_ exchange: NativeExchange) -> RequestID {
        nextRequest += 1
        let id = RequestID(value: nextRequest)
        exchange.pool = self
        exchange.poolID = id
        exchanges[id] = exchange
        return id
    }

    /// Fails every exchange and closes every connection; the pool refuses work afterwards.
    func closeAll() {
        sweepTimer?.cancel()
        sweepTimer = nil
        perform(machine.shutDown())
        selfBound = nil
    }
}

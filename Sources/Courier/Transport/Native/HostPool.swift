import CourierTLS
import CourierWire

/// The connections to one (scheme, host, port), and the requests waiting for them.
///
/// Loop-confined: every method runs on the pool's loop thread. Requests are served in arrival
/// order: an idle connection is taken at once (the most recently used first); otherwise the
/// request joins a first-in, first-out queue, and a new connection is opened while fewer than
/// ``NativeSettings/maxConnectionsPerHost`` exist. A connection that finishes a response serves
/// the head of the queue before it is allowed to rest in the idle list, where it is closed after
/// ``NativeSettings/idleTimeout``.
final class HostPool {
    let key: NativePoolKey
    let loop: EventLoop
    let settings: NativeSettings
    let tlsContext: TLSContext?
    /// Where idle plain-HTTP connections are parked for callers to send on directly.
    let lane: NativeDirectLane?
    private let contextBound: LoopBound<NativeLoopContext>

    /// The loop's context, attached on first use.
    private(set) var context: NativeLoopContext?
    private var selfBound: LoopBound<HostPool>?
    /// Every open or opening connection, by identity.
    private var connections: [ObjectIdentifier: HTTP1ClientConnection] = [:]
    /// Ready connections without an exchange, least recently used first.
    private var idle: [HTTP1ClientConnection] = []
    /// Connections being opened for the wait queue.
    private var connecting = 0
    private var waiters = NativeWaiterQueue()
    private var sweepTimer: EventLoop.Timer?
    private var sweepDeadline: UInt64 = 0
    private var isClosed = false
    /// The last time any connection of the pool received bytes.
    var lastProgress: UInt64 = 0

    /// Creates an empty pool; callable from any thread (the pool is then handed to its loop).
    init(key: NativePoolKey, loop: EventLoop, settings: NativeSettings, tlsContext: TLSContext?,
         lane: NativeDirectLane?, context: LoopBound<NativeLoopContext>) {
        self.key = key
        self.loop = loop
        self.settings = settings
        self.tlsContext = tlsContext
        self.lane = lane
        self.contextBound = context
        settings.census.pool(1)
    }

    deinit {
        settings.census.pool(-1)
    }

    /// The number of open or opening connections.
    var connectionCount: Int { connections.count }
    /// The number of idle connections.
    var idleCount: Int { idle.count }
    /// The number of exchanges waiting for a connection.
    var waitingCount: Int { waiters.liveCount }

    // MARK: - Requests

    /// Takes a new exchange from `send`, on the loop.
    func start(_ bound: LoopBound<NativeExchange>, continuation: NativeExchange.Continuation, selfBound: LoopBound<HostPool>) {
        let exchange = bound.value
        guard exchange.begin(continuation, bound: bound) else { return }
        attach(selfBound)
        if isClosed {
            exchange.finish(.failure(NativeErrors.shutDown))
            return
        }
        exchange.pool = self
        dispatch(exchange)
    }

    /// Joins the loop's context on first use.
    private func attach(_ selfBound: LoopBound<HostPool>) {
        guard context == nil else { return }
        let context = contextBound.value
        if context.isShutDown { isClosed = true } else { context.pools.append(self) }
        self.context = context
        self.selfBound = selfBound
    }

    /// Puts `exchange` on an idle connection, or in the queue.
    private func dispatch(_ exchange: NativeExchange) {
        while let connection = idle.popLast() {
            guard connection.isIdleAndOpen else { continue }
            if let pending = unpark(connection) {
                // A caller sent on it meanwhile: it is busy with that request now.
                adopt(pending, on: connection)
                continue
            }
            connection.execute(exchange)
            return
        }
        exchange.enter(.waiting)
        waiters.append(exchange)
        exchange.startWaitTimer(loop: loop)
        balance()
    }

    /// A waiting exchange ended while queued (cancelled or timed out).
    func waiterLeft() {
        waiters.left()
    }

    /// Re-sends `exchange` on a new connection opened for it alone (after a stale connection).
    func retryOnFreshConnection(_ exchange: NativeExchange) {
        guard !isClosed else {
            exchange.finish(.failure(NativeErrors.shutDown))
            return
        }
        exchange.pool = self
        exchange.enter(.dedicated)
        exchange.startWaitTimer(loop: loop)
        open(dedicatedTo: exchange)
    }

    // MARK: - Connections

    /// Opens connections while the queue holds more exchanges than connections are being
    /// opened for it, within the per-host maximum.
    private func balance() {
        let maximum = max(settings.maxConnectionsPerHost, 1)
        while !isClosed, waiters.liveCount > connecting, connections.count < maximum {
            open(dedicatedTo: nil)
        }
    }

    private func open(dedicatedTo exchange: NativeExchange?) {
        let bound = LoopBound(HTTP1ClientConnection(key: key, loop: loop, settings: settings, tlsContext: tlsContext), on: loop)
        let connection = bound.value
        connection.selfBound = bound
        connection.pool = self
        connection.context = context
        connection.dedicatedTo = exchange
        connection.countsAsConnecting = exchange == nil
        if exchange == nil { connecting += 1 }
        connections[ObjectIdentifier(connection)] = connection
        connection.establish()
    }

    /// A connection finished connecting (and its TLS handshake).
    func connectionReady(_ connection: HTTP1ClientConnection) {
        if connection.countsAsConnecting {
            connection.countsAsConnecting = false
            connecting -= 1
        }
        if let exchange = connection.dedicatedTo {
            connection.dedicatedTo = nil
            if exchange.isLive && exchange.phase == .dedicated {
                connection.execute(exchange)
                return
            }
        }
        release(connection)
    }

    /// A connection is free again: it serves the oldest waiting exchange, or rests.
    func release(_ connection: HTTP1ClientConnection) {
        guard !isClosed else {
            connection.close(graceful: true)
            return
        }
        if let next = waiters.popLive() {
            connection.execute(next)
            return
        }
        connection.idleSince = EventLoop.now()
        idle.append(connection)
        armSweep(deadline: connection.idleSince &+ settings.idleTimeout)
        if let lane, let slot = connection.slot {
            slot.markParked()
            lane.park(slot)
            connection.armWatchdog(deadline: connection.idleSince &+ NativeDirectLane.horizon)
        }
    }

    // MARK: - Requests sent directly by callers

    /// Takes a parked connection back from the callers; returns the request one of them sent on
    /// it meanwhile, if any.
    func unpark(_ connection: HTTP1ClientConnection) -> NativeDirectRequest? {
        guard let slot = connection.slot else { return nil }
        let pending = slot.reclaim()
        lane?.unpark(slot)
        return pending
    }

    /// Makes a request that a caller sent on `connection` an exchange of the loop.
    func adopt(_ request: NativeDirectRequest, on connection: HTTP1ClientConnection) {
        if let index = idle.firstIndex(where: { $0 === connection }) { idle.remove(at: index) }
        let exchange = request.exchange.value
        guard exchange.begin(request.continuation, bound: request.exchange) else {
            // Cancelled before the loop saw it: its answer will never be read.
            connection.close()
            return
        }
        if isClosed {
            exchange.finish(.failure(NativeErrors.shutDown))
            connection.close()
            return
        }
        exchange.pool = self
        connection.executeAdopted(exchange, request: request)
    }

    /// The loop noticed activity on an idle connection: adopts a request sent on it, if any.
    /// Returns `true` when it did.
    func adoptIfSent(_ connection: HTTP1ClientConnection) -> Bool {
        guard let pending = unpark(connection) else { return false }
        adopt(pending, on: connection)
        return true
    }

    /// Like ``adoptIfSent(_:)`` for a readiness event, but never waits for a caller that is in
    /// the middle of sending on the connection.
    /// - Returns: `false` when a caller holds the slot: the connection must wait for
    ///   ``slotReleased(_:)``.
    func adoptWithoutWaiting(_ connection: HTTP1ClientConnection) -> Bool {
        guard let slot = connection.slot else { return true }
        switch slot.tryReclaim() {
        case .busy:
            return false
        case .reclaimed(let pending):
            lane?.unpark(slot)
            if let pending { adopt(pending, on: connection) }
            return true
        }
    }

    /// A caller released a slot the loop was waiting for.
    func slotReleased(_ slot: NativeDirectSlot) {
        guard let connection = connections.values.first(where: { $0.slot === slot }) else { return }
        connection.resumeAfterWaitingForCaller()
    }

    /// A caller's request was not written completely: the loop takes it over now.
    func adoptUnfinished(_ slot: NativeDirectSlot, selfBound: LoopBound<HostPool>) {
        attach(selfBound)
        guard let connection = idle.first(where: { $0.slot === slot }) else { return }
        _ = adoptIfSent(connection)
    }

    /// Cancels a request that a caller sent directly on `slot`.
    func cancelDirect(_ slot: NativeDirectSlot, exchange bound: LoopBound<NativeExchange>) {
        if let connection = idle.first(where: { $0.slot === slot }), slot.pendingRequest() != nil {
            _ = adoptIfSent(connection)
        }
        bound.value.cancel()
    }

    /// The watchdog of an idle connection ticked: times out a request sent on it, if any.
    func parkedTick(_ connection: HTTP1ClientConnection) {
        guard let slot = connection.slot else { return }
        let now = EventLoop.now()
        if let pending = slot.pendingRequest() {
            let deadline = pending.startedAt &+ pending.timeout
            if now >= deadline {
                _ = adoptIfSent(connection)  // its own watchdog then fails it at once
            } else {
                connection.armWatchdog(deadline: min(deadline, now &+ NativeDirectLane.horizon))
            }
        } else if slot.isParked {
            connection.armWatchdog(deadline: now &+ NativeDirectLane.horizon)
        }
    }

    /// A connection closed. `establishmentError` is set when it never became ready: the exchange
    /// it was opened for, or else the oldest waiting one, fails with it.
    func connectionClosed(_ connection: HTTP1ClientConnection, establishmentError: HTTPConnectionError?) {
        connections[ObjectIdentifier(connection)] = nil
        if let index = idle.firstIndex(where: { $0 === connection }) { idle.remove(at: index) }
        if connection.countsAsConnecting {
            connection.countsAsConnecting = false
            connecting -= 1
        }
        if let error = establishmentError {
            let dedicated = connection.dedicatedTo
            connection.dedicatedTo = nil
            if let dedicated, dedicated.isLive, dedicated.phase == .dedicated {
                dedicated.finish(.failure(error))
            } else if let next = waiters.popLive() {
                next.finish(.failure(error))
            }
        }
        balance()
    }

    // MARK: - Idle connections

    private func armSweep(deadline: UInt64) {
        guard sweepDeadline == 0, let selfBound else { return }
        sweepDeadline = deadline
        let delay = Int64(clamping: deadline &- min(EventLoop.now(), deadline))
        sweepTimer = loop.scheduleTimer(after: .nanoseconds(delay)) {
            selfBound.value.sweep()
        }
    }

    /// Closes connections idle for the idle timeout.
    private func sweep() {
        sweepTimer = nil
        sweepDeadline = 0
        let now = EventLoop.now()
        let expired = idle.filter { now &- min($0.idleSince, now) >= settings.idleTimeout }
        for connection in expired {
            if let pending = unpark(connection) {
                adopt(pending, on: connection)
            } else {
                connection.close(graceful: true)
            }
        }
        if let oldest = idle.first {
            armSweep(deadline: oldest.idleSince &+ settings.idleTimeout)
        }
    }

    // MARK: - Shutting down

    /// Fails every exchange and closes every connection; the pool refuses work afterwards.
    func closeAll() {
        isClosed = true
        sweepTimer?.cancel()
        sweepTimer = nil
        for exchange in waiters.removeAll() { exchange.finish(.failure(NativeErrors.shutDown)) }
        for connection in Array(connections.values) {
            if let pending = unpark(connection) {
                let exchange = pending.exchange.value
                if exchange.begin(pending.continuation, bound: pending.exchange) {
                    exchange.finish(.failure(NativeErrors.shutDown))
                }
            }
            let dedicated = connection.dedicatedTo
            connection.dedicatedTo = nil
            if let exchange = connection.detach() { exchange.finish(.failure(NativeErrors.shutDown)) }
            dedicated?.finish(.failure(NativeErrors.shutDown))
            connection.close(graceful: true)
        }
        connections = [:]
        idle = []
        selfBound = nil
    }
}

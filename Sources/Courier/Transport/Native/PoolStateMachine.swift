/// The connections to one (scheme, host, port) and the requests waiting for them, as a pure
/// state machine: every method takes one event and returns what the driver must do.
///
/// It does no I/O, owns no timer and holds no reference: requests and connections are known by
/// id, and time comes in with the events (monotonic nanoseconds). ``HostPool`` is its driver on
/// the event loop; the tests drive it with a virtual clock.
///
/// The rules:
/// - **Fair.** A request takes the most recently used idle connection at once; otherwise it
///   joins a first-in, first-out queue, and a connection is opened while the queue holds more
///   requests than connections are being opened for it, within ``maxConnections``.
/// - **Freed connections serve the queue first.** A connection that becomes ready, or finishes
///   a response and can be reused, takes the oldest waiting request before it may rest idle.
/// - **Idle connections expire** after ``idleTimeout``: one sweep timer covers them all.
/// - **A queue wait is bounded by silence.** A waiting request times out when neither it nor any
///   connection of the pool made progress (``progress(at:)``) for its timeout.
/// - **A failed connect fails one request.** The request the connection was opened for alone,
///   or else the oldest waiting one, fails with the connect's error, so a dead host fails its
///   queue one request per attempt instead of retrying forever.
/// - **A stale connection's request goes out once more** on a connection opened for it alone
///   (``retryOnFreshConnection(_:timeout:at:)``).
/// - **Shutdown** fails every waiting request and closes every connection; afterwards every
///   request fails at once.
struct PoolStateMachine {
    /// A request's identity within its pool.
    struct RequestID: Hashable, Sendable, CustomStringConvertible {
        let value: Int
        var description: String { "r\(value)" }
    }

    /// A connection's identity within its pool.
    struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
        let value: Int
        var description: String { "c\(value)" }
    }

    /// Where a connection is.
    enum ConnectionState: Equatable {
        /// Being opened: for the wait queue, or for one request alone (a stale-connection retry).
        case connecting(dedicatedTo: RequestID?)
        /// Ready and without a request since the given time.
        case idle(since: UInt64)
        /// Carrying a request.
        case busy(RequestID)
        /// An HTTP/2 connection, carrying up to its capacity of requests at once.
        case multiplexed(Multiplexed)
    }

    /// Where a request the pool knows is.
    enum RequestState: Equatable {
        /// In the wait queue since the given time.
        case waiting(since: UInt64, timeout: UInt64)
        /// Waiting for the connection opened for it alone.
        case dedicated(ConnectionID, since: UInt64, timeout: UInt64)
        /// On a connection: being sent or answered. The connection ends it.
        case active(ConnectionID)
    }

    /// What the driver must do after an event: at most one thing for requests and one for
    /// connections.
    struct Action: Equatable {
        var request: RequestAction = .none
        var connection: ConnectionAction = .none

        /// Nothing to do.
        static let none = Action()
    }

    /// What to do with requests.
    enum RequestAction: Equatable {
        case none
        /// Send the request on the connection.
        case execute(RequestID, on: ConnectionID)
        /// The request waits for a connection; call ``waitCheck(_:at:)`` at the given time.
        case wait(RequestID, checkAt: UInt64)
        /// End the request with the error.
        case fail(RequestID, HTTPConnectionError)
        /// End these requests with the error.
        case failAll([RequestID], HTTPConnectionError)
        /// Send these requests on the (HTTP/2) connection, in this order.
        case executeAll([RequestID], on: ConnectionID)
        /// The connection carrying the request must end it with the error, and close.
        case abort(RequestID, on: ConnectionID, HTTPConnectionError)
    }

    /// What to do with connections.
    enum ConnectionAction: Equatable {
        case none
        /// Open a new connection with this id; report ``connectionReady(_:at:)`` or
        /// ``connectionClosed(_:error:)``.
        case open(ConnectionID)
        /// Open a new connection for each of these ids, as for ``open(_:)``: the queue grew
        /// while the origin's protocol was unknown and one connection was opened at a time.
        case openAll([ConnectionID])
        /// The connection rests idle; when a time is given, call ``sweep(at:)`` then.
        case rest(ConnectionID, sweepAt: UInt64?)
        /// Close these connections (their requests, if any, are the driver's to end); when a
        /// time is given, call ``sweep(at:)`` then.
        case close([ConnectionID], sweepAt: UInt64?)
    }

    /// A short name of the pool's origin, for error details.
    let origin: String
    /// The most connections open or opening at once (connections opened for a stale-connection
    /// retry may exceed it by the retries in progress).
    let maxConnections: Int
    /// How long a connection may rest idle (nanoseconds).
    let idleTimeout: UInt64

    /// The most HTTP/2 connections open or opening for the queue at once.
    let maxMultiplexedConnections: Int

    var connections: [ConnectionID: ConnectionState] = [:]
    var requests: [RequestID: RequestState] = [:]
    /// Idle connections, least recently used first.
    private var idle: [ConnectionID] = []
    var queue = PoolRequestQueue()
    /// Connections being opened for the queue (not for one request alone).
    var connectingForQueue = 0
    private var nextConnection = 0
    /// When the sweep timer is due, if armed.
    var sweepDue: UInt64?
    /// Which protocol the origin speaks, as far as the pool learnt it.
    var originProtocol: OriginProtocol
    /// The HTTP/2 connections that take new requests (not draining after a GOAWAY), oldest first.
    var multiplexedIDs: [ConnectionID] = []
    /// The last time any connection of the pool made progress.
    private var lastProgress: UInt64 = 0
    private(set) var isShutDown = false

    /// Creates an empty pool.
    /// - Parameters:
    ///   - origin: a short name of the origin, for error details.
    ///   - maxConnections: the most HTTP/1.1 connections.
    ///   - idleTimeout: how long a connection may rest idle (nanoseconds).
    ///   - mayUseHTTP2: whether a new connection may turn out to speak HTTP/2 (ALPN may pick it,
    ///     or HTTP/2 is spoken by prior knowledge). Until the first connection is ready the pool
    ///     then opens one connection at a time, so that a burst of requests to a new HTTP/2
    ///     origin shares one connection instead of opening many.
    ///   - maxMultiplexedConnections: the most HTTP/2 connections.
    init(origin: String, maxConnections: Int, idleTimeout: UInt64, mayUseHTTP2: Bool = false,
         maxMultiplexedConnections: Int = 1) {
        self.origin = origin
        self.maxConnections = max(maxConnections, 1)
        self.idleTimeout = idleTimeout
        self.originProtocol = mayUseHTTP2 ? .unknown : .http1
        self.maxMultiplexedConnections = max(maxMultiplexedConnections, 1)
    }

    /// Open or opening connections.
    var connectionCount: Int { connections.count }
    /// Idle connections.
    var idleCount: Int { idle.count }
    /// Requests in the wait queue.
    var waitingCount: Int { queue.count }

    // MARK: - Requests

    /// A new request arrived.
    mutating func requestArrived(_ id: RequestID, timeout: UInt64, at now: UInt64) -> Action {
        if isShutDown { return Action(request: .fail(id, NativeErrors.shutDown)) }
        if !multiplexedIDs.isEmpty, let connection = multiplexedWithRoom() {
            addStream(id, on: connection, at: now)
            return Action(request: .execute(id, on: connection))
        }
        if let connection = idle.popLast() {
            connections[connection] = .busy(id)
            requests[id] = .active(connection)
            return Action(request: .execute(id, on: connection))
        }
        requests[id] = .waiting(since: now, timeout: timeout)
        queue.append(id)
        return Action(request: .wait(id, checkAt: now &+ timeout), connection: openForQueue())
    }

    /// The request's task was cancelled.
    mutating func requestCancelled(_ id: RequestID) -> Action {
        switch requests[id] {
        case nil:
            return .none
        case .waiting:
            requests[id] = nil
            queue.remove(id)
            return Action(request: .fail(id, .cancelled))
        case .dedicated:
            // Its connection goes on opening; once ready it serves the queue or rests.
            requests[id] = nil
            return Action(request: .fail(id, .cancelled))
        case .active(let connection):
            return Action(request: .abort(id, on: connection, .cancelled))
        }
    }

    /// The wait timer of a waiting request fired.
    mutating func waitCheck(_ id: RequestID, at now: UInt64) -> Action {
        let since: UInt64
        let timeout: UInt64
        switch requests[id] {
        case .waiting(let start, let limit), .dedicated(_, let start, let limit):
            since = start
            timeout = limit
        case .active, nil:
            return .none
        }
        let last = max(since, lastProgress)
        let silence = now &- min(last, now)
        guard silence >= timeout else {
            return Action(request: .wait(id, checkAt: now &+ (timeout - silence)))
        }
        if case .waiting = requests[id] { queue.remove(id) }
        requests[id] = nil
        let limit = Duration.nanoseconds(Int64(clamping: timeout))
        return Action(request: .fail(id, .timedOut.with(detail: "no connection to \(origin) became available in \(limit)")))
    }

    /// A connection of the pool made progress (bytes arrived).
    mutating func progress(at now: UInt64) {
        lastProgress = now
    }

    /// A request's connection turned out stale: it goes out once more on a new connection
    /// opened for it alone.
    mutating func retryOnFreshConnection(_ id: RequestID, timeout: UInt64, at now: UInt64) -> Action {
        if isShutDown { return Action(request: .fail(id, NativeErrors.shutDown)) }
        let connection = newConnectionID()
        connections[connection] = .connecting(dedicatedTo: id)
        requests[id] = .dedicated(connection, since: now, timeout: timeout)
        return Action(request: .wait(id, checkAt: now &+ timeout), connection: .open(connection))
    }

    // MARK: - Connections

    /// A connection finished connecting (and its TLS handshake).
    mutating func connectionReady(_ id: ConnectionID, at now: UInt64) -> Action {
        guard case .connecting(let dedicated) = connections[id] else { return .none }
        if dedicated == nil { connectingForQueue -= 1 }
        if let request = dedicated, case .dedicated(id, _, _) = requests[request] {
            connections[id] = .busy(request)
            requests[request] = .active(id)
            return Action(request: .execute(request, on: id))
        }
        guard originProtocol == .unknown else { return handOut(id, at: now) }
        // The origin speaks HTTP/1.1: the queue, which waited for this one connection, gets as
        // many as it needs now.
        originProtocol = .http1
        var action = handOut(id, at: now)
        if action.connection == .none { action.connection = openForWholeQueue() }
        return action
    }

    /// A connection finished its request and may be reused.
    mutating func connectionReleased(_ id: ConnectionID, at now: UInt64) -> Action {
        guard case .busy(let request) = connections[id] else { return .none }
        requests[request] = nil
        return handOut(id, at: now)
    }

    /// A connection closed. `error` is set when it closed before it became ready: the request
    /// it was opened for, or else the oldest waiting one, fails with it.
    mutating func connectionClosed(_ id: ConnectionID, error: HTTPConnectionError?) -> Action {
        guard let state = connections.removeValue(forKey: id) else { return .none }
        var request = RequestAction.none
        switch state {
        case .idle:
            idle.removeAll { $0 == id }
        case .busy(let carried):
            // The connection ended its request itself.
            requests[carried] = nil
        case .multiplexed:
            // The connection ended its requests itself.
            forgetMultiplexed(id)
        case .connecting(let dedicated):
            if dedicated == nil { connectingForQueue -= 1 }
            guard let error else { break }
            if let dedicated, case .dedicated(id, _, _) = requests[dedicated] {
                requests[dedicated] = nil
                request = .fail(dedicated, error)
            } else if let oldest = queue.popFirst() {
                requests[oldest] = nil
                request = .fail(oldest, error)
            }
        }
        guard !isShutDown else { return Action(request: request) }
        let opened = openForQueue()
        // A connection left unused (an HTTP/2 one that took none of the queue, perhaps for this
        // connect) must still expire: arm the sweep when nothing else will.
        if opened == .none, let due = armSweep() { return Action(request: request, connection: .close([], sweepAt: due)) }
        return Action(request: request, connection: opened)
    }

    /// The sweep timer fired: closes connections idle for the idle timeout.
    mutating func sweep(at now: UInt64) -> Action {
        sweepDue = nil
        var expired: [ConnectionID] = []
        idle.removeAll { id in
            guard case .idle(let since) = connections[id], now &- min(since, now) >= idleTimeout else { return false }
            expired.append(id)
            connections[id] = nil
            return true
        }
        expired += expireMultiplexed(at: now)
        let next = armSweep()
        if expired.isEmpty && next == nil { return .none }
        return Action(connection: .close(expired, sweepAt: next))
    }

    /// Fails every waiting request and closes every connection; later requests fail at once.
    /// The requests on the closed connections are the driver's to end.
    mutating func shutDown() -> Action {
        guard !isShutDown else { return .none }
        isShutDown = true
        var waiting: [RequestID] = []
        for (id, state) in requests {
            if case .active = state { continue }
            waiting.append(id)
        }
        let all = Array(connections.keys)
        requests = [:]
        connections = [:]
        idle = []
        multiplexedIDs = []
        queue = PoolRequestQueue()
        connectingForQueue = 0
        sweepDue = nil
        return Action(request: waiting.isEmpty ? .none : .failAll(waiting.sorted { $0.value < $1.value }, NativeErrors.shutDown),
                      connection: all.isEmpty ? .none : .close(all.sorted { $0.value < $1.value }, sweepAt: nil))
    }

    // MARK: - Helpers

    /// Gives a ready connection to the oldest waiting request, or lets it rest.
    private mutating func handOut(_ id: ConnectionID, at now: UInt64) -> Action {
        if isShutDown {
            connections[id] = nil
            return Action(connection: .close([id], sweepAt: nil))
        }
        if let next = queue.popFirst() {
            connections[id] = .busy(next)
            requests[next] = .active(id)
            return Action(request: .execute(next, on: id))
        }
        connections[id] = .idle(since: now)
        idle.append(id)
        return Action(connection: .rest(id, sweepAt: armSweep(defaultDue: now &+ idleTimeout)))
    }

    /// Opens a connection when the queue holds more requests than connections are being opened
    /// for it, within the maximum. While the origin's protocol is unknown, one at a time; for an
    /// HTTP/2 origin, one more only when every HTTP/2 connection is full, within
    /// ``maxMultiplexedConnections`` (``maxConnections`` bounds HTTP/1.1 connections only).
    mutating func openForQueue() -> ConnectionAction {
        guard queue.count > connectingForQueue else { return .none }
        switch originProtocol {
        case .http1:
            guard connections.count < maxConnections else { return .none }
        case .unknown:
            guard connectingForQueue == 0, connections.count < maxConnections else { return .none }
        case .http2:
            guard connectingForQueue == 0, multiplexedIDs.count < maxMultiplexedConnections else { return .none }
        }
        let id = newConnectionID()
        connections[id] = .connecting(dedicatedTo: nil)
        connectingForQueue += 1
        return .open(id)
    }

    /// Opens connections with ``openForQueue()`` until it opens no more.
    private mutating func openForWholeQueue() -> ConnectionAction {
        var opened: [ConnectionID] = []
        while case .open(let id) = openForQueue() { opened.append(id) }
        return opened.count > 1 ? .openAll(opened) : opened.first.map { .open($0) } ?? .none
    }

    private mutating func newConnectionID() -> ConnectionID {
        nextConnection += 1
        return ConnectionID(value: nextConnection)
    }

    /// Arms the sweep when it is not armed and a connection rests: for the oldest idle
    /// connection's expiry (or `defaultDue`). Returns the time to arm it for, if it must be armed.
    mutating func armSweep(defaultDue: UInt64? = nil) -> UInt64? {
        guard sweepDue == nil else { return nil }
        let due: UInt64
        if let oldest = idle.first, case .idle(let since) = connections[oldest] {
            due = since &+ idleTimeout
        } else if let since = oldestUnusedMultiplexed() {
            due = since &+ idleTimeout
        } else if let defaultDue {
            due = defaultDue
        } else {
            return nil
        }
        sweepDue = due
        return due
    }
}

/// HTTP/2 in the pool: connections that carry many requests at once.
///
/// A connection that negotiated HTTP/2 becomes `multiplexed` when it is ready
/// (``connectionReadyMultiplexed(_:capacity:at:)``): it takes requests until it carries its
/// capacity (the server's `SETTINGS_MAX_CONCURRENT_STREAMS`); the rest wait in the same
/// first-in, first-out queue, and the pool opens another HTTP/2 connection only while it has
/// fewer than ``PoolStateMachine/maxMultiplexedConnections``. A GOAWAY makes a connection
/// drain (``connectionDraining(_:)``): it takes nothing new, its requests the server did not
/// process come back (``requeue(_:previousRequeues:timeout:at:)``), and the driver closes it once
/// empty. A connection without requests rests, and is swept after the idle timeout.
extension PoolStateMachine {
    /// Which protocol an origin speaks, as far as its pool knows.
    enum OriginProtocol: Equatable {
        /// No connection was ready yet, and one may negotiate HTTP/2.
        case unknown
        /// HTTP/1.1: one request per connection.
        case http1
        /// HTTP/2: many requests per connection.
        case http2
    }

    /// An HTTP/2 connection's load.
    struct Multiplexed: Equatable {
        /// The requests it carries.
        var streams: Int
        /// The most requests it may carry at once.
        var capacity: Int
        /// When it last finished or took a request.
        var lastUsed: UInt64
        /// Whether it takes no new requests (the server sent GOAWAY).
        var draining = false
    }

    /// The most times a request is sent again after the server refused it unprocessed (GOAWAY
    /// above its stream, or `REFUSED_STREAM`) before it fails.
    static let maxRequeues = 3

    /// A connection finished connecting and negotiated HTTP/2; the server allows `capacity`
    /// requests at once. It takes the request it was opened for, then the oldest waiting ones.
    mutating func connectionReadyMultiplexed(_ id: ConnectionID, capacity: Int, at now: UInt64) -> Action {
        guard case .connecting(let dedicated) = connections[id] else { return .none }
        if dedicated == nil { connectingForQueue -= 1 }
        originProtocol = .http2
        connections[id] = .multiplexed(Multiplexed(streams: 0, capacity: max(capacity, 0), lastUsed: now))
        multiplexedIDs.append(id)
        var taken: [RequestID] = []
        if let request = dedicated, case .dedicated(id, _, _) = requests[request] {
            addStream(request, on: id, at: now)
            taken.append(request)
        }
        return fill(id, taken: taken, at: now)
    }

    /// The server changed how many requests the connection may carry at once.
    mutating func capacityChanged(_ id: ConnectionID, capacity: Int, at now: UInt64) -> Action {
        guard case .multiplexed(var load) = connections[id] else { return .none }
        load.capacity = max(capacity, 0)
        connections[id] = .multiplexed(load)
        return load.draining ? .none : fill(id, taken: [], at: now)
    }

    /// A request on an HTTP/2 connection ended (the connection ended it). The connection takes
    /// the oldest waiting request, or rests when it carries none.
    mutating func streamEnded(_ request: RequestID, on id: ConnectionID, at now: UInt64) -> Action {
        guard case .multiplexed(var load) = connections[id] else { return .none }
        if case .active(id) = requests[request] { requests[request] = nil }
        load.streams = max(load.streams - 1, 0)
        load.lastUsed = now
        connections[id] = .multiplexed(load)
        if load.draining { return .none }
        return fill(id, taken: [], at: now)
    }

    /// The server sent GOAWAY on the connection: it takes no new request. The requests still
    /// waiting may get a connection of their own.
    mutating func connectionDraining(_ id: ConnectionID) -> Action {
        guard case .multiplexed(var load) = connections[id], !load.draining else { return .none }
        load.draining = true
        connections[id] = .multiplexed(load)
        multiplexedIDs.removeAll { $0 == id }
        return Action(connection: openForQueue())
    }

    /// The server did not process a request of an HTTP/2 connection (a stream above a GOAWAY's
    /// last stream id, or refused with `REFUSED_STREAM`), and its connection reported it ended
    /// (``streamEnded(_:on:at:)``): it is placed again like a new request, on an HTTP/2
    /// connection with room or at the back of the queue, unless it was placed again
    /// ``maxRequeues`` times already, when it fails with ``HTTPConnectionError/connectionLost``.
    mutating func requeue(_ request: RequestID, previousRequeues: Int, timeout: UInt64, at now: UInt64) -> Action {
        guard requests[request] == nil else { return .none }
        if previousRequeues >= Self.maxRequeues {
            return Action(request: .fail(request, .connectionLost.with(
                detail: "\(origin) refused the request unprocessed \(previousRequeues + 1) times")))
        }
        return requestArrived(request, timeout: timeout, at: now)
    }

    // MARK: - Helpers

    /// The oldest HTTP/2 connection that takes new requests and has room.
    func multiplexedWithRoom() -> ConnectionID? {
        multiplexedIDs.first { id in
            guard case .multiplexed(let load) = connections[id] else { return false }
            return load.streams < load.capacity
        }
    }

    /// Puts `request` on the HTTP/2 connection `id`.
    mutating func addStream(_ request: RequestID, on id: ConnectionID, at now: UInt64) {
        guard case .multiplexed(var load) = connections[id] else { return }
        load.streams += 1
        load.lastUsed = now
        connections[id] = .multiplexed(load)
        requests[request] = .active(id)
    }

    /// Gives the connection waiting requests up to its capacity (after `taken`, already on it).
    /// Requests still waiting get another connection when the limits allow (this one is full,
    /// perhaps at a capacity of 0); otherwise a connection left without requests rests.
    private mutating func fill(_ id: ConnectionID, taken: [RequestID], at now: UInt64) -> Action {
        var taken = taken
        while case .multiplexed(let load) = connections[id], load.streams < load.capacity, let next = queue.popFirst() {
            addStream(next, on: id, at: now)
            taken.append(next)
        }
        if taken.isEmpty {
            let opened = openForQueue()
            guard opened == .none else { return Action(connection: opened) }
            guard case .multiplexed(let load) = connections[id], load.streams == 0 else { return .none }
            return Action(connection: .rest(id, sweepAt: armSweep(defaultDue: now &+ idleTimeout)))
        }
        let request: RequestAction = taken.count == 1 ? .execute(taken[0], on: id) : .executeAll(taken, on: id)
        return Action(request: request, connection: openForQueue())
    }

    /// Forgets a closed HTTP/2 connection and the requests it carried (it ended them).
    mutating func forgetMultiplexed(_ id: ConnectionID) {
        multiplexedIDs.removeAll { $0 == id }
        for (request, state) in requests where state == .active(id) {
            requests[request] = nil
        }
    }

    /// Closes the HTTP/2 connections that carried no request for the idle timeout.
    mutating func expireMultiplexed(at now: UInt64) -> [ConnectionID] {
        var expired: [ConnectionID] = []
        for id in multiplexedIDs {
            guard case .multiplexed(let load) = connections[id], load.streams == 0,
                  now &- min(load.lastUsed, now) >= idleTimeout else { continue }
            expired.append(id)
            connections[id] = nil
        }
        if !expired.isEmpty { multiplexedIDs.removeAll { expired.contains($0) } }
        return expired
    }

    /// When the longest-unused HTTP/2 connection without requests was last used.
    func oldestUnusedMultiplexed() -> UInt64? {
        var oldest: UInt64?
        for id in multiplexedIDs {
            guard case .multiplexed(let load) = connections[id], load.streams == 0 else { continue }
            oldest = min(oldest ?? load.lastUsed, load.lastUsed)
        }
        return oldest
    }
}

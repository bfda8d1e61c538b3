/// How one origin's requests spread over a transport's event loops.
///
/// An origin gets one pool per loop it uses, each with its share of the connection limit, so
/// that many requests in flight to one host are read and written on several threads (with one
/// loop, every response of a busy origin queued behind one thread). A request goes to the pool
/// of the loop its caller already runs on (no thread hop) while that pool has a connection to
/// spare, else to the pool with the fewest requests in flight, the first on a tie, so that
/// requests sent one at a time keep using one connection.
///
/// An origin that may speak HTTP/2 (`https` while ALPN may pick it, or plain `http` with prior
/// knowledge) starts with one pool: one
/// HTTP/2 connection carries many requests, and ``NativeTransport/Configuration/maxHTTP2ConnectionsPerHost``
/// bounds the origin as a whole. Once that pool has found that the origin speaks HTTP/1.1, the
/// origin widens to all its pools.
///
/// A value: the transport keeps one per origin under its lock and asks it what to do.
struct OriginSpread: Equatable, Sendable {
    /// The most pools the origin uses: one per loop, and no more than it has connections.
    let widest: Int
    /// The origin's connection limit, shared out between its pools.
    let maxConnections: Int
    /// The pools in use now.
    private(set) var poolCount: Int

    /// - Parameters:
    ///   - loopCount: the transport's event loops.
    ///   - maxConnections: the origin's connection limit (at least 1).
    ///   - mayUseHTTP2: whether the origin's connections may turn out to speak HTTP/2.
    init(loopCount: Int, maxConnections: Int, mayUseHTTP2: Bool) {
        self.maxConnections = max(maxConnections, 1)
        self.widest = max(1, min(loopCount, self.maxConnections))
        self.poolCount = mayUseHTTP2 ? 1 : widest
    }

    /// Pool `index`'s share of the connection limit: the limit divided between the widest set of
    /// pools, the remainder going to the first ones. The shares add up to the limit, and each is
    /// at least 1.
    func connectionLimit(ofPool index: Int) -> Int {
        maxConnections / widest + (index < maxConnections % widest ? 1 : 0)
    }

    /// The first pool found that the origin speaks HTTP/1.1.
    /// - Returns: the indices of the pools to add now (none when the origin already uses all).
    mutating func originSpeaksHTTP1() -> Range<Int> {
        defer { poolCount = widest }
        return poolCount..<widest
    }

    /// Which pool takes the next request.
    /// - Parameters:
    ///   - callersPool: the pool whose loop the caller runs on, if any.
    ///   - load: the requests in flight through pool `index` (one of the ``poolCount`` in use).
    /// - Returns: the caller's pool while it has a connection to spare (fewer requests in flight
    ///   than its share of the limit), else the least loaded pool (the first on a tie).
    func choose(callersPool: Int?, load: (_ index: Int) -> Int) -> Int {
        if let callersPool, callersPool >= 0, callersPool < poolCount,
           load(callersPool) < connectionLimit(ofPool: callersPool) {
            return callersPool
        }
        var best = 0
        var bestLoad = Int.max
        for index in 0..<poolCount {
            let requests = load(index)
            if requests < bestLoad {
                best = index
                bestLoad = requests
            }
        }
        return best
    }
}

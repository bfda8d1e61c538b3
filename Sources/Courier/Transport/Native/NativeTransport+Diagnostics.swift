import Foundation

extension NativeTransport {
    /// What one pool holds at a moment: for tests and diagnostics.
    struct PoolSnapshot: Sendable, Equatable {
        /// Open or opening connections.
        let connections: Int
        /// Ready connections without a request.
        let idle: Int
        /// Requests waiting for a connection.
        let waiting: Int
    }

    /// The live pools and connection objects of this transport; it outlives the transport.
    var census: NativeCensus { settings.census }

    /// The origins (pool keys) the transport has pools for; each has one pool per loop it uses.
    var originCount: Int { state.withLock { $0.pools.count } }

    /// The state of the pools that serve `url`, added up, or `nil` when there are none (yet).
    func poolSnapshot(for url: URL) async -> PoolSnapshot? {
        let snapshots = await poolSnapshots(for: url)
        guard !snapshots.isEmpty else { return nil }
        return PoolSnapshot(connections: snapshots.reduce(0) { $0 + $1.connections },
                            idle: snapshots.reduce(0) { $0 + $1.idle },
                            waiting: snapshots.reduce(0) { $0 + $1.waiting })
    }

    /// The state of each pool that serves `url` (one per loop its origin uses), in order; empty
    /// when there is none (yet) or the transport has shut down. The pools are found as a request
    /// finds them: through the transport's proxy or Unix socket route for `url`, if any. (The
    /// pools of requests that carry a proxy authenticator's credentials are keyed by them, and not
    /// found here.)
    func poolSnapshots(for url: URL) async -> [PoolSnapshot] {
        guard let target = try? target(for: url) else { return [] }
        var snapshots: [PoolSnapshot] = []
        for pool in existingPools(for: target.key) {
            let snapshot = await withCheckedContinuation { continuation in
                let accepted = pool.loop.execute {
                    continuation.resume(returning: Optional(pool.value.snapshot))
                }
                if !accepted { continuation.resume(returning: nil) }
            }
            guard let snapshot else { return [] }
            snapshots.append(snapshot)
        }
        return snapshots
    }
}

extension HostPool {
    /// The pool's counts now.
    var snapshot: NativeTransport.PoolSnapshot {
        NativeTransport.PoolSnapshot(connections: connectionCount, idle: idleCount, waiting: waitingCount)
    }
}

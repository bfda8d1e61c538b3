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

    /// The state of the pool that serves `url`, or `nil` when there is none (yet).
    func poolSnapshot(for url: URL) async -> PoolSnapshot? {
        guard let target = try? NativeRequestTarget(url: url),
              let pool = existingPool(for: target.key) else { return nil }
        return await withCheckedContinuation { continuation in
            let accepted = pool.loop.execute {
                continuation.resume(returning: pool.value.snapshot)
            }
            if !accepted { continuation.resume(returning: nil) }
        }
    }
}

extension HostPool {
    /// The pool's counts now.
    var snapshot: NativeTransport.PoolSnapshot {
        NativeTransport.PoolSnapshot(connections: connectionCount, idle: idleCount, waiting: waitingCount)
    }
}

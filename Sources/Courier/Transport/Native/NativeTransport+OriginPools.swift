import CourierTLS
import CourierWire

extension NativeTransport {
    /// A pool, the loop it lives on, and what the transport reads of it.
    struct PoolHandle: Sendable {
        let pool: LoopBound<HostPool>
        let gauge: PoolGauge
        var loop: EventLoop { pool.loop }
    }

    /// One origin's pools, one per event loop it uses, as its ``OriginSpread`` decides. Kept
    /// under the transport's lock.
    struct OriginPools: Sendable {
        let key: NativePoolKey
        /// The context the origin's TLS connections use (`nil` for plain ones).
        let tlsContext: TLSContext?
        /// The loop of the first pool: pool `i` lives on loop `(firstLoop + i) % contexts.count`,
        /// so that origins that start on different loops spread from there.
        let firstLoop: Int
        private(set) var spread: OriginSpread
        /// The pools in use, in order.
        private(set) var handles: [PoolHandle] = []

        /// Makes the origin's first pools.
        init(key: NativePoolKey, tlsContext: TLSContext?, firstLoop: Int,
             contexts: [LoopBound<NativeLoopContext>], settings: NativeSettings) {
            self.key = key
            self.tlsContext = tlsContext
            self.firstLoop = firstLoop
            self.spread = OriginSpread(loopCount: contexts.count, maxConnections: settings.maxConnectionsPerHost,
                                       mayUseHTTP2: HostPool.mayUseHTTP2(key, settings))
            handles = (0..<spread.poolCount).map { makePool($0, contexts: contexts, settings: settings) }
        }

        /// The first pool: the one a request sent alone goes to.
        var first: PoolHandle { handles[0] }

        /// The pool that takes the next request (``OriginSpread/choose(callersPool:load:)``),
        /// with the request counted in its gauge. When the first pool has found that the origin
        /// speaks HTTP/1.1, the origin widens to all its pools first.
        /// - Parameter callersLoop: the index of the loop the caller runs on, if it is one of
        ///   the transport's.
        mutating func next(callersLoop: Int?, contexts: [LoopBound<NativeLoopContext>], settings: NativeSettings) -> PoolHandle {
            let chosen = choose(callersLoop: callersLoop, contexts: contexts, settings: settings)
            chosen.gauge.requestStarted()
            return chosen
        }

        private mutating func choose(callersLoop: Int?, contexts: [LoopBound<NativeLoopContext>],
                                     settings: NativeSettings) -> PoolHandle {
            if spread.widest == 1 { return handles[0] }
            if spread.poolCount < spread.widest, handles[0].gauge.speaksHTTP1 {
                for index in spread.originSpeaksHTTP1() {
                    handles.append(makePool(index, contexts: contexts, settings: settings))
                }
            }
            if handles.count == 1 { return handles[0] }
            let callersPool = callersLoop.map { ($0 - firstLoop + contexts.count) % contexts.count }
            return handles[spread.choose(callersPool: callersPool) { handles[$0].gauge.requests }]
        }

        private func makePool(_ index: Int, contexts: [LoopBound<NativeLoopContext>], settings: NativeSettings) -> PoolHandle {
            let context = contexts[(firstLoop + index) % contexts.count]
            let gauge = PoolGauge()
            let pool = HostPool(key: key, loop: context.loop, settings: settings, tlsContext: tlsContext, context: context,
                                maxConnections: spread.connectionLimit(ofPool: index),
                                // A pool after the first exists only once the origin is known
                                // to speak HTTP/1.1, or when it cannot speak HTTP/2 at all.
                                knowsHTTP1: index > 0, gauge: gauge)
            return PoolHandle(pool: LoopBound(sending: pool, to: context.loop), gauge: gauge)
        }
    }
}

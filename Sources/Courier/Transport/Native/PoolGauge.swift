import Synchronization

/// What the transport reads of one pool without going to its loop: the requests in flight
/// through it (to choose among an origin's pools, ``OriginSpread``), and whether it found that
/// its origin speaks HTTP/1.1 (set on the pool's loop).
final class PoolGauge: Sendable {
    private let requestsInFlight = Atomic<Int>(0)
    private let foundHTTP1 = Atomic<Bool>(false)

    /// Requests sent through the pool and not yet finished.
    var requests: Int { requestsInFlight.load(ordering: .relaxed) }

    /// Whether the pool found that its origin speaks HTTP/1.1.
    var speaksHTTP1: Bool { foundHTTP1.load(ordering: .relaxed) }

    /// A request was sent through the pool.
    func requestStarted() { requestsInFlight.add(1, ordering: .relaxed) }

    /// A request sent through the pool finished.
    func requestEnded() { requestsInFlight.subtract(1, ordering: .relaxed) }

    /// The pool's first connection turned out to speak HTTP/1.1.
    func markHTTP1() {
        if !foundHTTP1.load(ordering: .relaxed) { foundHTTP1.store(true, ordering: .relaxed) }
    }

    /// One streamed request's count in a gauge, ended once by whichever comes first: its
    /// exchange letting go of its body, or the `stream` call failing before the head.
    final class Ticket: Sendable {
        private let gauge: PoolGauge
        private let ended = Atomic<Bool>(false)

        init(_ gauge: PoolGauge) {
            self.gauge = gauge
        }

        /// Ends the count; later calls do nothing.
        func end() {
            if !ended.exchange(true, ordering: .relaxed) { gauge.requestEnded() }
        }
    }
}

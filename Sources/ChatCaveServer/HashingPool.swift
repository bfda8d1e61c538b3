import Dispatch
import Synchronization

/// Runs password hashes a bounded number at a time, with a bounded queue.
///
/// A hash takes a slot when one is free, or waits when fewer than `queueLimit` others wait;
/// otherwise it is refused at once with 503, so slow hashing can never pile up unbounded work
/// or starve the requests that need no hash.
final class HashingPool: Sendable {
    /// The longest a queued hash waits for a slot before it is refused with 503.
    static let maxWait: DispatchTimeInterval = .seconds(10)

    private struct Counts {
        var admitted = 0
        var running = 0
        var peak = 0
    }

    private let slots: DispatchSemaphore
    private let admissionLimit: Int
    private let counts = Mutex(Counts())

    /// Creates a pool.
    /// - Parameters:
    ///   - concurrency: how many hashes run at once (at least 1).
    ///   - queueLimit: how many more may wait.
    init(concurrency: Int, queueLimit: Int) {
        slots = DispatchSemaphore(value: max(1, concurrency))
        admissionLimit = max(1, concurrency) + max(0, queueLimit)
    }

    /// The most hashes that ever ran at the same time.
    var peakConcurrency: Int {
        counts.withLock { $0.peak }
    }

    /// Runs `body` in a slot, waiting for one if the queue has room.
    /// - Returns: what `body` returned.
    /// - Throws: 503 with `Retry-After: 1` when every slot and queue place is taken, or no slot
    ///   came free in time.
    func run<Value>(_ body: () -> Value) throws(APIError) -> Value {
        let admitted = counts.withLock { counts -> Bool in
            guard counts.admitted < admissionLimit else { return false }
            counts.admitted += 1
            return true
        }
        guard admitted else { throw .busy(retryAfter: 1) }
        defer { counts.withLock { $0.admitted -= 1 } }
        guard slots.wait(timeout: .now() + Self.maxWait) == .success else { throw .busy(retryAfter: 1) }
        defer { slots.signal() }
        counts.withLock { counts in
            counts.running += 1
            counts.peak = max(counts.peak, counts.running)
        }
        defer { counts.withLock { $0.running -= 1 } }
        return body()
    }
}

import Dispatch
import Synchronization

/// Runs password hashes a bounded number at a time, with a bounded queue.
///
/// A hash takes a slot when one is free, or waits when fewer than `queueLimit` others wait;
/// otherwise it is refused at once with 503, so slow hashing can never pile up unbounded work
/// or starve the requests that need no hash.
///
/// `reserved` of the places (slots and queue together) are kept for ``Purpose/signIn``: the
/// password check of an existing user. Other hashes (sign-ups, checks of unknown names) are
/// refused once only the reserved places are left, so a flood of them cannot keep users
/// from signing in.
final class HashingPool: Sendable {
    /// What a hash is for, which decides whether it may take a reserved place.
    enum Purpose: Sendable {
        /// The password check of an existing user: may take any place.
        case signIn
        /// Anything else (a new password, a check of an unknown name): leaves the reserved places.
        case other
    }

    /// The longest a queued hash waits for a slot before it is refused with 503.
    static let maxWait: DispatchTimeInterval = .seconds(10)

    private struct Counts {
        var admitted = 0
        var running = 0
        var peak = 0
    }

    private let slots: DispatchSemaphore
    private let admissionLimit: Int
    private let reserved: Int
    private let counts = Mutex(Counts())

    /// Creates a pool.
    /// - Parameters:
    ///   - concurrency: how many hashes run at once (at least 1).
    ///   - queueLimit: how many more may wait.
    ///   - reserved: how many of these places only ``Purpose/signIn`` may take (at most all
    ///     but one).
    init(concurrency: Int, queueLimit: Int, reserved: Int) {
        slots = DispatchSemaphore(value: max(1, concurrency))
        admissionLimit = max(1, concurrency) + max(0, queueLimit)
        self.reserved = min(max(0, reserved), admissionLimit - 1)
    }

    /// How many hashes are running or waiting for a slot now.
    var admittedCount: Int {
        counts.withLock { $0.admitted }
    }

    /// The most hashes that ever ran at the same time.
    var peakConcurrency: Int {
        counts.withLock { $0.peak }
    }

    /// Runs `body` in a slot, waiting for one if the queue has room.
    /// - Parameters:
    ///   - purpose: whether the hash may take a reserved place.
    ///   - body: the hash.
    /// - Returns: what `body` returned.
    /// - Throws: 503 with `Retry-After: 1` when every place open to `purpose` is taken, or no
    ///   slot came free in time.
    func run<Value>(for purpose: Purpose, _ body: () -> Value) throws(APIError) -> Value {
        let limit = purpose == .signIn ? admissionLimit : admissionLimit - reserved
        let admitted = counts.withLock { counts -> Bool in
            guard counts.admitted < limit else { return false }
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

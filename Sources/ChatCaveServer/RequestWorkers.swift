import Dispatch
import Foundation
import Synchronization

/// Runs each request on a thread of its own, at most ``limit`` at once.
///
/// A GCD concurrent queue runs only about as many items at a time as there are cores, so
/// requests waiting for a password hash would hold back every other request behind them
/// (`GET /` included) and pile up unbounded. With a thread per request, the ``HashingPool``
/// refuses excess hashes at once and cheap requests never wait for hashing.
final class RequestWorkers: Sendable {
    /// The most requests handled at the same time; more get 503 at once.
    let limit: Int
    private let running = Mutex(0)
    private let group = DispatchGroup()

    /// Creates workers for at most `limit` requests at once.
    init(limit: Int = 512) {
        self.limit = max(1, limit)
    }

    /// Starts `body` on a new thread, unless ``limit`` requests are running.
    /// - Returns: `false` (and `body` does not run) when the limit is reached.
    func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let admitted = running.withLock { running -> Bool in
            guard running < limit else { return false }
            running += 1
            return true
        }
        guard admitted else { return false }
        group.enter()
        let thread = Thread { [self] in
            body()
            running.withLock { $0 -= 1 }
            group.leave()
        }
        thread.name = "ChatCaveServer.request"
        thread.start()
        return true
    }

    /// Waits until every started request has finished, or `timeout` has passed.
    func wait(timeout: DispatchTime) {
        _ = group.wait(timeout: timeout)
    }
}

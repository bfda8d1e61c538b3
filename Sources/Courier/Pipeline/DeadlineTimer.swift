import Dispatch
import Synchronization

/// A one-shot timer on a Dispatch queue, independent of Swift's cooperative thread pool, so a
/// request's deadline fires on time even when that pool is busy.
final class DeadlineTimer: Sendable {
    private let cancelled = Atomic<Bool>(false)

    /// Runs `action` after `delay`, unless cancelled first.
    init(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.timeInterval) { [self] in
            if !cancelled.load(ordering: .acquiring) { action() }
        }
    }

    /// Stops the timer; the action will not run if it has not started.
    func cancel() {
        cancelled.store(true, ordering: .releasing)
    }
}

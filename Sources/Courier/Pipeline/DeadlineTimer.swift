import Dispatch
import Synchronization

/// A one-shot timer on a Dispatch queue, independent of Swift's cooperative thread pool, so a
/// request's deadline fires on time even when that pool is busy.
///
/// It is a Dispatch timer source rather than `asyncAfter`: cancelling a source releases its
/// action at once, where a cancelled `asyncAfter` block stays queued, with everything it holds,
/// until its time comes (for a 60 s timeout, every request of the last minute).
final class DeadlineTimer: Sendable {
    private let source: Mutex<(any DispatchSourceTimer)?>

    /// Runs `action` after `delay`, unless cancelled first.
    init(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + delay.timeInterval)
        timer.setEventHandler(handler: action)
        timer.resume()
        source = Mutex(timer)
    }

    deinit {
        cancel()
    }

    /// Stops the timer and releases its action; the action will not run if it has not started.
    func cancel() {
        source.withLock { source in
            defer { source = nil }
            return source
        }?.cancel()
    }
}

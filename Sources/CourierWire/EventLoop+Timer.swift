#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

extension EventLoop {
    /// A one-shot timer scheduled with ``EventLoop/scheduleTimer(after:_:)``.
    ///
    /// The work runs once on the loop's thread when the deadline passes, unless
    /// ``cancel()`` wins first. Cancelling releases the work closure at once.
    /// Timers that are still pending when the loop shuts down are dropped without running.
    public final class Timer: Sendable {
        /// The deadline on the monotonic clock, in nanoseconds (see ``EventLoop/now()``).
        public let deadline: UInt64
        private let work: Mutex<(@Sendable () -> Void)?>
        private let counters: TimerCounters

        init(deadline: UInt64, work: @escaping @Sendable () -> Void, counters: TimerCounters) {
            self.deadline = deadline
            self.work = Mutex(work)
            self.counters = counters
        }

        /// Cancels the timer if it has not fired yet. Callable from any thread, any number of times.
        ///
        /// - Returns: `true` if this call prevented the work from running; `false` if it
        ///   already ran, is running, or was cancelled before.
        @discardableResult
        public func cancel() -> Bool {
            let removed = work.withLock { work -> (@Sendable () -> Void)? in
                let current = work
                work = nil
                return current
            }
            guard removed != nil else { return false }
            counters.cancelled.add(1, ordering: .relaxed)
            return true
        }

        /// Whether the timer will still run (not fired, not cancelled).
        public var isPending: Bool {
            work.withLock { $0 != nil }
        }

        /// Takes the work for running; `nil` if cancelled. Called on the loop thread.
        func take() -> (@Sendable () -> Void)? {
            work.withLock { work -> (@Sendable () -> Void)? in
                let current = work
                work = nil
                return current
            }
        }
    }

    /// Runs `work` on this loop's thread once `delay` has passed.
    ///
    /// Callable from any thread. The deadline is measured on the monotonic clock;
    /// the loop's `epoll_wait` sleeps until the nearest deadline, so timers fire with
    /// millisecond precision. Zero or negative delays run on the next loop iteration.
    ///
    /// - Parameters:
    ///   - delay: How long to wait.
    ///   - work: What to run on the loop thread.
    /// - Returns: The timer, for ``Timer/cancel()``. If the loop is shut down the
    ///   timer never fires.
    @discardableResult
    public func scheduleTimer(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Timer {
        // now() is far below 2^62 and nanoseconds(_:) is capped at 2^62: no overflow.
        let deadline = EventLoop.now() &+ EventLoop.nanoseconds(delay)
        let timer = Timer(deadline: deadline, work: work, counters: timerCounters)
        if inEventLoop {
            state.timers.insert(timer)
        } else {
            let accepted = execute { [state] in state.timers.insert(timer) }
            if !accepted { timer.cancel() }
        }
        return timer
    }

    /// The monotonic clock (`CLOCK_MONOTONIC`) in nanoseconds.
    ///
    /// - Returns: Nanoseconds since an arbitrary fixed point.
    public static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// Converts a duration to whole nanoseconds, clamped to 0 ... 2^62.
    ///
    /// - Parameter duration: Any duration, including negative or huge ones.
    /// - Returns: Nanoseconds, never negative, small enough to add to ``now()`` safely.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let cap: UInt64 = 1 << 62
        if seconds >= Int64(cap / 1_000_000_000) { return cap }
        let whole = UInt64(seconds) * 1_000_000_000
        let fraction = attoseconds > 0 ? UInt64(attoseconds / 1_000_000_000) : 0
        return min(whole + fraction, cap)
    }

    /// Runs every timer whose deadline passed. Loop thread only.
    func runExpiredTimers() {
        let now = EventLoop.now()
        // Bounded by the heap size at entry: timers scheduled by timers wait for the next turn.
        var budget = state.timers.count
        while budget > 0, let timer = state.timers.popExpired(now: now) {
            budget -= 1
            if let work = timer.take() {
                work()
            } else {
                timerCounters.cancelled.subtract(1, ordering: .relaxed)
            }
        }
        let cancelled = timerCounters.cancelled.load(ordering: .relaxed)
        if cancelled > 64, cancelled * 2 > state.timers.count {
            let dropped = state.timers.compact()
            timerCounters.cancelled.subtract(dropped, ordering: .relaxed)
        }
    }

    /// The `epoll_wait` timeout in milliseconds for the nearest timer: -1 when none.
    func timeoutForNextTimer() -> Int32 {
        guard let deadline = state.timers.nearestDeadline else { return -1 }
        let now = EventLoop.now()
        if deadline <= now { return 0 }
        let milliseconds = (deadline - now + 999_999) / 1_000_000
        return Int32(clamping: milliseconds)
    }
}

/// Shared counters between a loop and its timers (cancelled timers still in the heap).
final class TimerCounters: Sendable {
    let cancelled = Atomic<Int>(0)
}

import Synchronization

/// Stops what a request's pipeline is waiting for when the request ends from outside the task
/// that runs it.
///
/// A request usually runs on a Swift task of its own, and ``RequestTask`` cancels that task when
/// the request ends early (``HTTPConnection/cancel(_:)``, its deadline, its connection going
/// away). An `async` caller's request may instead run in the caller's own task, which saves a
/// task and a thread wake-up per request; that task is not the library's to cancel. Each wait of
/// such a request (the transport's exchange, a retry's backoff, the re-authentication queue, the
/// delegate's answer from the callback queue) registers here how to stop it, and
/// ``interrupt()`` runs that: once, and at once for a wait registered after the interruption. A
/// pipeline waits on one thing at a time; a wait registered inside another puts the outer one
/// back when it ends.
final class RequestInterruption: Sendable {
    private enum State {
        case idle
        case waiting(@Sendable () -> Void)
        case interrupted
    }

    private let state = Mutex<State>(.idle)

    init() {}

    /// Whether ``interrupt()`` was called.
    var isInterrupted: Bool {
        state.withLock { state in
            if case .interrupted = state { return true }
            return false
        }
    }

    /// Stops the current wait, if any, and every later one as soon as it is registered.
    func interrupt() {
        let stop = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state = .interrupted }
            if case .waiting(let stop) = state { return stop }
            return nil
        }
        stop?()
    }

    /// Runs `operation`, calling `stop` if the request is interrupted while it runs, or before
    /// it starts if it already was. `stop` may run on another thread, concurrently with
    /// `operation`, or even just after it returned (an interrupt that took the stop as the wait
    /// ended), so it must be harmless then and when called twice; the operation must end
    /// promptly once stopped (as it would if its task were cancelled), and must check
    /// ``isInterrupted`` where it would check `Task.isCancelled`.
    func whileWaiting<Value, Failure: Error>(
        _ operation: () async throws(Failure) -> Value,
        stop: @escaping @Sendable () -> Void
    ) async throws(Failure) -> Value {
        let previous = state.withLock { state -> State in
            let previous = state
            if case .interrupted = state { return previous }
            state = .waiting(stop)
            return previous
        }
        if case .interrupted = previous { stop() }
        defer {
            state.withLock { state in
                if case .waiting = state { state = previous }
            }
        }
        return try await operation()
    }
}

extension RequestInterruption {
    /// Runs `operation`, a wait that `stop` ends promptly, and stops it when the request ends:
    /// through `interruption` for a request that runs in its caller's task (the caller's own
    /// cancellation ends the request, which interrupts it), otherwise when the current task, the
    /// request's own, is cancelled. `stop` follows the rules of ``whileWaiting(_:stop:)``.
    static func wait<Value, Failure: Error>(
        _ interruption: RequestInterruption?,
        _ operation: () async throws(Failure) -> Value,
        stop: @escaping @Sendable () -> Void
    ) async throws(Failure) -> Value {
        if let interruption { return try await interruption.whileWaiting(operation, stop: stop) }
        let result: Result<Value, Failure> = await withTaskCancellationHandler {
            do throws(Failure) {
                return .success(try await operation())
            } catch {
                return .failure(error)
            }
        } onCancel: {
            stop()
        }
        return try result.get()
    }
}

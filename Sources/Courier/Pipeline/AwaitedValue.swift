import Synchronization

/// The outcome of a request run in its `async` caller's own task, handed from the request's end
/// to the caller (see ``RequestInterruption``).
typealias AwaitedOutcome = AwaitedValue<Result<HTTPResponse, HTTPConnectionError>>

/// A value set once, from any thread, and taken once by a task that waits for it if it is not
/// there yet.
///
/// It carries what a request run in its caller's task waits for from another thread: its outcome
/// (the pipeline can return before a cancel from another thread has filled it in), and the
/// delegate's answer from the callback queue, which an interruption fills in first with `nil` so
/// that the caller need not wait for a slow delegate.
final class AwaitedValue<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case filled(Value)
        case awaited(CheckedContinuation<Value, Never>)
        case taken
    }

    private let state = Mutex<State>(.empty)

    init() {}

    /// Sets the value, resuming the taker if it waits for it. Only the first call counts.
    func fill(_ value: consuming Value) {
        // Held in an optional so that it moves, without a copy, to where it goes.
        var value = Optional(value)
        let waiting = state.withLock { state -> CheckedContinuation<Value, Never>? in
            switch state {
            case .empty:
                if let filled = value.take() { state = .filled(filled) }
                return nil
            case .awaited(let continuation):
                state = .taken
                return continuation
            case .filled, .taken:
                return nil
            }
        }
        if let waiting, let value = value.take() { waiting.resume(returning: value) }
    }

    /// The value: at once if it was filled in, otherwise when it is. Called once.
    func take() async -> Value {
        if let value = takeIfFilled() { return value }
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Value? in
                if case .filled(let value) = state {
                    state = .taken
                    return value
                }
                state = .awaited(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func takeIfFilled() -> Value? {
        state.withLock { state in
            guard case .filled = state else { return nil }
            // Swapped out rather than copied, so that the value is moved to the taker.
            var taken = State.taken
            swap(&state, &taken)
            guard case .filled(let value) = consume taken else { return nil }
            return value
        }
    }
}

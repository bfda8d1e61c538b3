import Synchronization

/// The outcome of a request run in its `async` caller's own task (see ``RequestInterruption``),
/// handed from the request's end to the caller.
///
/// The caller takes it after the pipeline has returned. Usually the request has ended by then
/// and the outcome is waiting; when it ends from elsewhere (a cancel from another thread), the
/// pipeline can return before that thread has filled it in, and the caller waits for it.
final class AwaitedOutcome: Sendable {
    typealias Outcome = Result<HTTPResponse, HTTPConnectionError>

    private enum State {
        case empty
        case filled(Outcome)
        case awaited(CheckedContinuation<Outcome, Never>)
        case taken
    }

    private let state = Mutex<State>(.empty)

    init() {}

    /// Sets the outcome, resuming the caller if it waits for it. Only the first call counts.
    func fill(_ outcome: Outcome) {
        let waiting = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            switch state {
            case .empty:
                state = .filled(outcome)
                return nil
            case .awaited(let continuation):
                state = .taken
                return continuation
            case .filled, .taken:
                return nil
            }
        }
        waiting?.resume(returning: outcome)
    }

    /// The outcome: at once if it was filled in, otherwise when it is. Called once.
    func take() async -> Outcome {
        if let outcome = takeIfFilled() { return outcome }
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Outcome? in
                if case .filled(let outcome) = state {
                    state = .taken
                    return outcome
                }
                state = .awaited(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func takeIfFilled() -> Outcome? {
        state.withLock { state in
            guard case .filled(let outcome) = state else { return nil }
            state = .taken
            return outcome
        }
    }
}

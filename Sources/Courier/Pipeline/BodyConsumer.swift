import Foundation
import Synchronization

/// Reads a streamed response's body for a caller that is not reading it itself: a download
/// writing a file, or a closure handed each chunk. ``RequestTask`` runs it on the request's own
/// task once the head is accepted, and ends the request with what it returns.
protocol BodyConsumer: Sendable {
    /// Whether the request must run off the transport's event loop (the consumer blocks on disk).
    var runsOffLoop: Bool { get }
    /// Whether the cache may store the response as it passes.
    var mayStoreInCache: Bool { get }
    /// Reads the body to its end.
    /// - Parameters:
    ///   - response: the accepted head (its body empty).
    ///   - body: the body.
    ///   - events: delivers the consumer's own events on the callback queue.
    /// - Returns: the response to finish the request with, or the error to fail it with.
    func consume(_ response: HTTPResponse, body: HTTPBodyStream, events: BodyConsumerEvents) async -> Result<HTTPResponse, HTTPConnectionError>
    /// The head was not accepted (``ResponseValidation``): the body will not be read.
    func rejected(_ response: HTTPResponse)
}

extension BodyConsumer {
    /// `true`.
    var mayStoreInCache: Bool { true }

    /// Does nothing.
    func rejected(_ response: HTTPResponse) {}
}

/// How a ``BodyConsumer`` reaches the callback queue.
struct BodyConsumerEvents: Sendable {
    /// Runs the work on the callback queue and waits until it has run (or been dropped because
    /// the request ended): a slow closure slows the reading, and so the connection.
    let deliver: @Sendable (_ work: @escaping @Sendable () -> Void) async -> Void
    /// Queues the work on the callback queue without waiting (dropped if the request ends first).
    let post: @Sendable (_ work: @escaping @Sendable () -> Void) -> Void
}

/// Orders a request's end after its body consumer: while a consumer runs, the terminal callback
/// waits until it has returned (a download has closed its file by then, so the caller who hears
/// of a cancel finds the partial file complete and unlocked); once the request has ended, no
/// consumer starts.
final class BodyConsumerGate: Sendable {
    private struct State {
        var running = false
        var ended = false
        var afterConsumer: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    /// Marks a consumer as running; `false` when the request has already ended.
    func enter() -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            state.running = true
            return true
        }
    }

    /// The consumer returned: runs what waited for it.
    func leave() {
        let waiting = state.withLock { state in
            state.running = false
            defer { state.afterConsumer = [] }
            return state.afterConsumer
        }
        for work in waiting { work() }
    }

    /// The request ended: `true` when no consumer runs, and the caller goes on at once; else
    /// `false`, and the work `later` makes runs when the running consumer returns.
    func end(orLater later: () -> @Sendable () -> Void) -> Bool {
        state.withLock { state in
            state.ended = true
            if state.running { state.afterConsumer.append(later()) }
            return !state.running
        }
    }
}

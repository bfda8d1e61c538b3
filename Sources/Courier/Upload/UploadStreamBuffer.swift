import Foundation
import Synchronization

/// The bounded hand-over between the task that iterates a caller's stream and the transport
/// that writes it: the producer suspends while ``limit`` bytes wait, and the consumer is woken
/// (through the callback it registered) when bytes arrive after it found none.
///
/// A chunk larger than the limit is not copied: it is held once and handed out in slices.
final class UploadStreamBuffer: Sendable {
    /// What the consumer gets from ``take(max:)``.
    enum Pull {
        /// Up to the requested number of bytes.
        case bytes(Data)
        /// Nothing yet: the waker runs when bytes arrive or the stream ends.
        case waiting
        /// The stream ended; every byte was taken.
        case finished
        /// The stream threw.
        case failed(any Error)
    }

    private struct State {
        var chunks: [Data] = []
        var head = 0
        var buffered = 0
        var finished = false
        var error: (any Error)?
        var stopped = false
        var consumerWaiting = false
        var producer: CheckedContinuation<Void, Never>?
        /// Cleared by ``stop()``, so that a producer still stuck in the caller's sequence keeps
        /// no connection alive.
        var waker: (@Sendable () -> Void)?
    }

    /// The most bytes held before the producer waits.
    let limit: Int
    private let state: Mutex<State>

    /// Creates a buffer that calls `waker` (from the producer's thread) when a waiting consumer
    /// can pull again.
    init(limit: Int, waker: @escaping @Sendable () -> Void) {
        self.limit = limit
        var initial = State()
        initial.waker = waker
        self.state = Mutex(initial)
    }

    /// Adds a chunk; suspends while the buffer is full. Returns `false` when the consumer stopped
    /// (the request ended): the producer should stop iterating.
    func push(_ chunk: Data) async -> Bool {
        if chunk.isEmpty { return !isStopped }
        let wake = state.withLock { state -> (@Sendable () -> Void)?? in
            if state.stopped { return .none }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            let wake = state.consumerWaiting ? state.waker : nil
            state.consumerWaiting = false
            return .some(wake)
        }
        guard let wake else { return false }
        wake?()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.stopped || state.buffered < limit { return true }
                state.producer = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return !isStopped
    }

    /// The stream ended, with `error` when it threw.
    func finish(error: (any Error)?) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            state.finished = true
            state.error = error
            let wake = state.consumerWaiting ? state.waker : nil
            state.consumerWaiting = false
            return wake
        }
        wake?()
    }

    /// Takes up to `max` bytes.
    func take(max: Int) -> Pull {
        let (pull, producer) = state.withLock { state -> (Pull, CheckedContinuation<Void, Never>?) in
            guard state.head < state.chunks.count else {
                if state.finished {
                    if let error = state.error { return (.failed(error), nil) }
                    return (.finished, nil)
                }
                state.consumerWaiting = true
                return (.waiting, nil)
            }
            let chunk = state.chunks[state.head]
            let piece: Data
            if chunk.count <= max {
                piece = chunk
                state.chunks[state.head] = Data()
                state.head += 1
                if state.head == state.chunks.count {
                    state.chunks.removeAll(keepingCapacity: true)
                    state.head = 0
                }
            } else {
                let start = chunk.startIndex
                piece = chunk[start ..< start + max]
                state.chunks[state.head] = chunk[(start + max)...]
            }
            state.buffered -= piece.count
            var producer: CheckedContinuation<Void, Never>?
            if state.buffered < limit {
                producer = state.producer
                state.producer = nil
            }
            return (.bytes(piece), producer)
        }
        producer?.resume()
        return pull
    }

    /// The consumer is done (the request ended): drops what is held and releases the producer.
    func stop() {
        let producer = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.stopped = true
            state.waker = nil
            state.chunks = []
            state.head = 0
            state.buffered = 0
            let producer = state.producer
            state.producer = nil
            return producer
        }
        producer?.resume()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }
}

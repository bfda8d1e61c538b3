import Foundation
import Synchronization

/// The chunks of a streamed response body between the transport that produces them and the
/// ``HTTPBodyStream`` that consumes them, with backpressure.
///
/// The producer (a transport) calls ``yield(_:)`` for each chunk; once the chunks waiting for the
/// consumer reach the high-water mark, ``yield(_:)`` answers `false` and the producer stops
/// reading its socket. When the consumer has taken enough that half the mark or less is left,
/// the buffer calls the producer's `onDemand` hook, and the producer reads again, unless chunks
/// that came meanwhile filled the buffer once more (``producerMayGoOn`` is `false`: that demand
/// is stale, and the consumer's next catching up sends a fresh one). The producer
/// ends the stream once with ``finish(_:)``. If the consumer leaves first (it stops iterating,
/// its task is cancelled, or it drops the stream), the buffer calls the producer's `onCancel`
/// hook once and keeps no more chunks.
///
/// Hooks run outside the buffer's lock, on the thread that caused them.
final class BodyStreamBuffer: Sendable {
    /// What the producer is told.
    struct ProducerHooks: Sendable {
        /// The consumer wants more: resume reading (unless ``BodyStreamBuffer/producerMayGoOn``
        /// is `false` by the time the producer acts on it).
        var onDemand: @Sendable () -> Void
        /// The consumer left before the end: stop and release the source.
        var onCancel: @Sendable () -> Void
    }

    /// Sees every chunk the consumer is given, as the producer yields it, and then how the body
    /// ended (for a cache that stores a streamed response as it passes).
    struct Tap: Sendable {
        /// A chunk was accepted for the consumer.
        var chunk: @Sendable (Data) -> Void
        /// The body ended: `true` when the producer finished it cleanly, `false` when it broke
        /// off or the consumer left.
        var end: @Sendable (Bool) -> Void
    }

    private typealias Waiter = CheckedContinuation<Result<Data?, HTTPConnectionError>, Never>

    private struct State {
        var chunks: [Data] = []
        var nextChunk = 0
        var buffered = 0
        var peakBuffered = 0
        /// `nil` while the body flows; `.success` at its end, `.failure` when it broke.
        var end: Result<Void, HTTPConnectionError>?
        var waiter: Waiter?
        var producerPaused = false
        var consumerLeft = false
        var hooks: ProducerHooks?
        /// Told once how the body ended (see ``BodyStreamBuffer/onEnd(_:)``).
        var endObserver: (@Sendable (Result<Void, HTTPConnectionError>) -> Void)?
        /// Sees the chunks and the end (see ``BodyStreamBuffer/tap(_:)``).
        var tap: Tap?
        /// Whether the consumer has been given a chunk yet.
        var handedAny = false
    }

    /// The most bytes held for the consumer before the producer is asked to pause.
    let highWaterMark: Int
    private let state = Mutex(State())

    /// Creates an empty buffer.
    /// - Parameter highWaterMark: the bytes held before the producer pauses; 256 KiB by default.
    init(highWaterMark: Int = 256 << 10) {
        self.highWaterMark = max(highWaterMark, 1)
    }

    /// A buffer that already holds the whole body and has ended (a response that was not
    /// streamed from the network, such as a cache hit).
    /// - Parameter body: the body; empty for none.
    convenience init(finished body: Data) {
        self.init()
        if !body.isEmpty { yield(body) }
        finish(nil)
    }

    /// Tells `observer` once how the body ended: `.success` when the producer finished it,
    /// `.failure` with the error that broke it, or with ``HTTPConnectionError/cancelled`` when
    /// the consumer left first. If it has ended already, `observer` runs at once.
    func onEnd(_ observer: @escaping @Sendable (Result<Void, HTTPConnectionError>) -> Void) {
        let ended = state.withLock { state -> Result<Void, HTTPConnectionError>? in
            if let end = state.end { return end }
            if state.consumerLeft { return .failure(.cancelled) }
            state.endObserver = observer
            return nil
        }
        if let ended { observer(ended) }
    }

    /// Sets the tap that sees every chunk of the body, and its end: the chunks waiting now are
    /// shown to it at once (in order, before any later chunk), the rest as they are yielded. If
    /// the consumer has already been given a chunk, has left, or the body broke off, the tap
    /// cannot see the whole body and is told `end(false)` at once.
    func tap(_ tap: Tap) {
        let outcome = state.withLock { state -> Bool? in
            if state.handedAny || state.consumerLeft { return false }
            if case .failure = state.end { return false }
            for chunk in state.chunks[state.nextChunk...] { tap.chunk(chunk) }  // under the lock: kept in order
            if state.end != nil { return true }
            state.tap = tap
            return nil
        }
        if let outcome { tap.end(outcome) }
    }

    /// Sets the producer's hooks. If the consumer already left, `onCancel` runs at once.
    func connect(_ hooks: ProducerHooks) {
        let left = state.withLock { state -> Bool in
            state.hooks = hooks
            return state.consumerLeft
        }
        if left { hooks.onCancel() }
    }

    // MARK: - Producer

    /// Adds a chunk for the consumer.
    /// - Parameter chunk: body bytes; an empty chunk is ignored.
    /// - Returns: whether the producer may go on; `false` asks it to stop reading until
    ///   `onDemand` (or, if the consumer left, for good).
    @discardableResult
    func yield(_ chunk: Data) -> Bool {
        let (waiter, goOn, tap) = state.withLock { state -> (Waiter?, Bool, Tap?) in
            guard state.end == nil, !state.consumerLeft else { return (nil, false, nil) }
            guard !chunk.isEmpty else { return (nil, true, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                state.handedAny = true
                return (waiter, true, state.tap)
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            state.peakBuffered = max(state.peakBuffered, state.buffered)
            if state.buffered >= highWaterMark { state.producerPaused = true }
            return (nil, !state.producerPaused, state.tap)
        }
        tap?.chunk(chunk)
        waiter?.resume(returning: .success(chunk))
        return goOn
    }

    /// Ends the body: cleanly with `nil`, or with the error that broke it. Later calls do nothing.
    func finish(_ error: HTTPConnectionError?) {
        let end: Result<Void, HTTPConnectionError> = error.map { .failure($0) } ?? .success(())
        let (waiter, observer, tap) = state.withLock { state -> (Waiter?, (@Sendable (Result<Void, HTTPConnectionError>) -> Void)?, Tap?) in
            guard state.end == nil, !state.consumerLeft else { return (nil, nil, nil) }
            state.end = end
            state.hooks = nil
            defer { state.waiter = nil; state.endObserver = nil; state.tap = nil }
            return (state.waiter, state.endObserver, state.tap)
        }
        tap?.end(error == nil)
        waiter?.resume(returning: error.map { .failure($0) } ?? .success(nil))
        observer?(end)
    }

    /// Ends the body with `error` from the consumer's side of things (the request was cancelled
    /// or its deadline passed): the consumer's next read throws `error`, the chunks held are
    /// dropped, and the producer is told to stop. Does nothing once the body has ended.
    func abort(_ error: HTTPConnectionError) {
        let (waiter, cancel, observer, tap) = state.withLock {
            state -> (Waiter?, (@Sendable () -> Void)?, (@Sendable (Result<Void, HTTPConnectionError>) -> Void)?, Tap?) in
            guard state.end == nil, !state.consumerLeft else { return (nil, nil, nil, nil) }
            state.end = .failure(error)
            state.chunks = []
            state.nextChunk = 0
            state.buffered = 0
            defer { state.waiter = nil; state.hooks = nil; state.endObserver = nil; state.tap = nil }
            return (state.waiter, state.hooks?.onCancel, state.endObserver, state.tap)
        }
        tap?.end(false)
        waiter?.resume(returning: .failure(error))
        cancel?()
        observer?(.failure(error))
    }

    /// The most bytes the buffer held at once (for tests and diagnostics).
    var peakBuffered: Int { state.withLock { $0.peakBuffered } }

    /// The bytes held for the consumer now (for tests and diagnostics).
    var buffered: Int { state.withLock { $0.buffered } }

    /// Whether the producer ended the body, cleanly or not (for tests and diagnostics).
    var hasEnded: Bool { state.withLock { $0.end != nil } }

    /// Whether the producer may go on reading: it was not asked to stop, or the consumer has
    /// since taken the buffer down to half. A demand (`onDemand`) that the producer acts on
    /// after the buffer filled up again is stale when this is `false`; a fresh one follows.
    var producerMayGoOn: Bool { state.withLock { !$0.producerPaused } }

    /// The bytes the producer may still add before the buffer reaches its high-water mark
    /// (0 at or past it): a producer that reads in large blocks reads no more than this.
    var room: Int { state.withLock { max(highWaterMark - $0.buffered, 0) } }

    // MARK: - Consumer

    /// The next chunk, `nil` at the end, or the error that broke the body.
    func next() async -> Result<Data?, HTTPConnectionError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: Waiter) in
                let (ready, demand) = take(orWait: waiter)
                demand?()
                if let ready { waiter.resume(returning: ready) }
            }
        } onCancel: {
            consumerLeft(because: .cancelled)
        }
    }

    /// Takes a chunk or the end if there is one; otherwise parks `waiter`. Also returns the
    /// producer's `onDemand` hook when taking a chunk lets a paused producer go on.
    private func take(orWait waiter: Waiter) -> (Result<Data?, HTTPConnectionError>?, (@Sendable () -> Void)?) {
        state.withLock { state in
            if state.consumerLeft { return (.failure(.cancelled), nil) }
            if state.nextChunk < state.chunks.count {
                let chunk = state.chunks[state.nextChunk]
                state.handedAny = true
                state.chunks[state.nextChunk] = Data()
                state.nextChunk += 1
                if state.nextChunk == state.chunks.count {
                    state.chunks.removeAll(keepingCapacity: true)
                    state.nextChunk = 0
                }
                state.buffered -= chunk.count
                var demand: (@Sendable () -> Void)?
                if state.producerPaused, state.buffered <= highWaterMark / 2, state.end == nil {
                    state.producerPaused = false
                    demand = state.hooks?.onDemand
                }
                return (.success(chunk), demand)
            }
            if let end = state.end {
                switch end {
                case .success: return (.success(nil), nil)
                case .failure(let error): return (.failure(error), nil)
                }
            }
            state.waiter = waiter
            return (nil, nil)
        }
    }

    /// The consumer stopped before the end (`.cancelled` when its task was cancelled, or when it
    /// stopped iterating): the producer is told once, a waiting `next` returns the error, and the
    /// chunks held are released.
    func consumerLeft(because error: HTTPConnectionError = .cancelled) {
        let (waiter, cancel, observer, tap) = state.withLock {
            state -> (Waiter?, (@Sendable () -> Void)?, (@Sendable (Result<Void, HTTPConnectionError>) -> Void)?, Tap?) in
            guard !state.consumerLeft else { return (nil, nil, nil, nil) }
            state.consumerLeft = true
            state.chunks = []
            state.nextChunk = 0
            state.buffered = 0
            let ending = state.end == nil
            defer { state.waiter = nil; state.hooks = nil; state.endObserver = nil; state.tap = nil }
            return (state.waiter, ending ? state.hooks?.onCancel : nil, ending ? state.endObserver : nil, ending ? state.tap : nil)
        }
        tap?.end(false)
        waiter?.resume(returning: .failure(error))
        cancel?()
        observer?(.failure(error))
    }
}

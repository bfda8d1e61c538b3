@testable import Courier
import Foundation
import Synchronization
import Testing

/// ``RequestInterruption`` and ``AwaitedOutcome``, which let a request run in its caller's task,
/// without sockets: every order of interrupt, wait, fill and take.
@Suite("Request interruption")
struct RequestInterruptionTests {
    /// Counts calls of a `stop` closure.
    final class StopCounter: Sendable {
        private let count = Atomic<Int>(0)
        var calls: Int { count.load(ordering: .acquiring) }
        func stop() { count.add(1, ordering: .acquiringAndReleasing) }
    }

    @Test("an interrupt during a wait stops it once; the wait's end unregisters it")
    func interruptDuringWait() async {
        let interruption = RequestInterruption()
        let counter = StopCounter()
        await interruption.whileWaiting({
            #expect(!interruption.isInterrupted)
            interruption.interrupt()
            interruption.interrupt()
            #expect(interruption.isInterrupted)
        }, stop: counter.stop)
        #expect(counter.calls == 1)
    }

    @Test("a wait registered after the interrupt is stopped before its operation runs")
    func interruptBeforeWait() async {
        let interruption = RequestInterruption()
        interruption.interrupt()
        let counter = StopCounter()
        let seenAtStart = await interruption.whileWaiting({ counter.calls }, stop: counter.stop)
        #expect(seenAtStart == 1)
        #expect(counter.calls == 1)
    }

    @Test("an interrupt after a wait has ended stops nothing")
    func interruptAfterWait() async {
        let interruption = RequestInterruption()
        let counter = StopCounter()
        await interruption.whileWaiting({}, stop: counter.stop)
        interruption.interrupt()
        #expect(counter.calls == 0)
        #expect(interruption.isInterrupted)
    }

    @Test("a wait inside another puts the outer one back when it ends")
    func nestedWait() async {
        let interruption = RequestInterruption()
        let (outer, inner) = (StopCounter(), StopCounter())
        await interruption.whileWaiting({
            await interruption.whileWaiting({}, stop: inner.stop)
            interruption.interrupt()
        }, stop: outer.stop)
        #expect(outer.calls == 1)
        #expect(inner.calls == 0)
    }

    @Test("a wait's error passes through")
    func errorPassesThrough() async {
        let interruption = RequestInterruption()
        await #expect(throws: HTTPConnectionError.timedOut) {
            try await interruption.whileWaiting({ () async throws(HTTPConnectionError) in throw .timedOut }, stop: {})
        }
    }

    @Test("an interrupt from another thread at any moment ends a wait on a continuation: never a lost wake-up (2,000 rounds)")
    func interruptRace() async {
        for round in 0..<2_000 {
            let interruption = RequestInterruption()
            let gate = ContinuationGate()
            let interrupter = Thread {
                if round.isMultiple(of: 3) { usleep(UInt32(round % 50)) }
                interruption.interrupt()
            }
            interrupter.start()
            // The operation waits until stop opens the gate; it checks the interruption where it
            // would check cancellation, as every real wait does.
            await interruption.whileWaiting({
                await gate.wait(unlessAlreadyOpen: interruption.isInterrupted)
            }, stop: gate.open)
        }
    }

    @Test("an outcome filled before it is taken is taken at once")
    func fillThenTake() async {
        let outcome = AwaitedOutcome()
        outcome.fill(.failure(.cancelled))
        outcome.fill(.failure(.timedOut))  // only the first counts
        await #expect(throws: HTTPConnectionError.cancelled) { try await outcome.take().get() }
    }

    @Test("a taker waiting for the outcome is resumed by the fill (1,000 rounds, filled from another thread)")
    func takeThenFill() async {
        for round in 0..<1_000 {
            let outcome = AwaitedOutcome()
            let filler = Thread {
                if round.isMultiple(of: 2) { usleep(UInt32(round % 40)) }
                outcome.fill(.failure(round.isMultiple(of: 2) ? .cancelled : .deadlineExceeded))
            }
            filler.start()
            let result = await outcome.take()
            #expect(throws: round.isMultiple(of: 2) ? HTTPConnectionError.cancelled : .deadlineExceeded) { try result.get() }
        }
    }
}

/// A one-shot gate a task can wait on; opening it (once or more, from any thread) lets the
/// waiter go, whether it opened before or after the wait began.
final class ContinuationGate: Sendable {
    private enum State {
        case closed
        case waiting(CheckedContinuation<Void, Never>)
        case open
    }

    private let state = Mutex<State>(.closed)

    /// Waits until the gate opens; returns at once if `alreadyOpen` or if it is open.
    func wait(unlessAlreadyOpen alreadyOpen: Bool) async {
        if alreadyOpen { return }
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state -> Bool in
                if case .open = state { return true }
                state = .waiting(continuation)
                return false
            }
            if isOpen { continuation.resume() }
        }
    }

    /// Opens the gate.
    func open() {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .open }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiting?.resume()
    }
}

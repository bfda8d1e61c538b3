@testable import Courier
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// ``RequestInterruption`` and ``AwaitedValue``, which let a request run in its caller's task,
/// without sockets: every order of interrupt, wait, fill and take, and the re-authentication
/// queue's wait. A wait that is not stopped fails the test after a bounded wait, and is then
/// let go, so that the run goes on.
@Suite("Request interruption", .timeLimit(.minutes(1)))
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
            let gate = AwaitedValue<Void>()
            let interrupter = Thread {
                if round.isMultiple(of: 3) { usleep(UInt32(round % 50)) }
                interruption.interrupt()
            }
            interrupter.start()
            // The operation waits until stop opens the gate; it checks the interruption where it
            // would check cancellation, as every real wait does.
            await interruption.whileWaiting({
                if !interruption.isInterrupted { await gate.take() }
            }, stop: { gate.fill(()) })
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

    @Test("a wait stops on its task's cancellation without an interruption, and on the interruption with one")
    func waitStoppedEitherWay() async {
        for interruption in [nil, RequestInterruption()] {
            let gate = AwaitedValue<Void>()
            let ended = Locked(false)
            let waiter = Task {
                await RequestInterruption.wait(interruption, { await gate.take() }, stop: { gate.fill(()) })
                ended.withLock { $0 = true }
            }
            if let interruption { interruption.interrupt() } else { waiter.cancel() }
            #expect(await eventually(timeout: .seconds(10)) { ended.withLock { $0 } },
                    interruption == nil ? "task cancellation did not stop the wait" : "the interruption did not stop the wait")
            gate.fill(())  // lets a wait that was not stopped end
            await waiter.value
        }
    }

    @Test("an interrupted answer from the callback queue is nil, and the late answer is dropped")
    func answerInterrupted() async {
        let answer = AwaitedValue<Int?>()
        let interruption = RequestInterruption()
        interruption.interrupt()
        let value = await interruption.whileWaiting({ await answer.take() }, stop: { answer.fill(nil) })
        answer.fill(42)  // the delegate answers after all
        #expect(value == nil)
        // Interrupted while it waits (or just before it registers): nil as well.
        let later = AwaitedValue<Int?>()
        let waiting = RequestInterruption()
        let answered = Locked<Int??>(nil)
        let taker = Task {
            let answer = await waiting.whileWaiting({ await later.take() }, stop: { later.fill(nil) })
            answered.withLock { $0 = .some(answer) }
        }
        waiting.interrupt()
        #expect(await eventually(timeout: .seconds(10)) { answered.withLock { $0 } != nil }, "the interruption did not end the wait")
        later.fill(7)  // the delegate's late answer (lets a wait that was not stopped end)
        await taker.value
        #expect(answered.withLock { $0 } == .some(nil))
    }

    @Test("an interruption ends a request's wait in the re-authentication queue; the refresh goes on for the request that started it")
    func credentialQueueWait() async throws {
        let release = AwaitedValue<Void>()
        let session = CredentialSession(authenticator: GatedAuthenticator(release: release), matcher: .everything,
                                        store: nil, limit: RefreshLimit())
        let context = AuthenticationContext(sender: { _ throws(HTTPConnectionError) in throw .cancelled }, baseURL: nil,
                                            timeout: .seconds(30), maxResponseBodySize: 1 << 20)
        let starter = Task { await session.rejected(version: 0, sentAt: .now, context: context) }
        #expect(await eventually { session.waitingCount == 1 })
        let interruption = RequestInterruption()
        let waiter = Task { await session.credentialForSending(context: context, interruption: interruption) }
        #expect(await eventually { session.waitingCount == 2 })
        interruption.interrupt()
        #expect(await eventually(timeout: .seconds(10)) { session.waitingCount == 1 }, "the interrupted request still waits")
        release.fill(())
        let interrupted = await waiter.value
        #expect({ if case .cancelled = interrupted { true } else { false } }(), "\(interrupted)")
        let refreshed = await starter.value
        #expect({ if case .credential(let credential?, _) = refreshed { credential.secret == "fresh" } else { false } }(),
                "\(refreshed)")
        // A request interrupted before it reaches the queue does not wait at all.
        let early = RequestInterruption()
        early.interrupt()
        let late = await session.rejected(version: 1, sentAt: .now, context: context, interruption: early)
        #expect({ if case .cancelled = late { true } else { false } }(), "\(late)")
    }
}

/// An authenticator whose refresh waits until the test releases it, then hands out "fresh",
/// sent as `Authorization: Bearer fresh`.
struct GatedAuthenticator: Authenticator {
    let release: AwaitedValue<Void>

    func apply(_ credential: Credential, to request: inout TransportRequest) {
        request.headers.set("Bearer " + credential.secret, for: "Authorization")
    }

    func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
        await release.take()
        return Credential(secret: "fresh")
    }
}

import CourierWire
import Testing

/// Every transition of the Happy Eyeballs machine, without sockets: direct events, and whole
/// races on a virtual clock (``VirtualRace``).
@Suite("Happy Eyeballs machine")
struct HappyEyeballsMachineTests {
    typealias Action = HappyEyeballsMachine.Action

    static func v4(_ last: UInt8, port: Int = 80) -> SocketAddress { SocketAddress(ip: "192.0.2.\(last)", port: port)! }
    static func v6(_ last: UInt8, port: Int = 80) -> SocketAddress { SocketAddress(ip: "2001:db8::\(last)", port: port)! }
    static let refused = VirtualRace.refused
    static let delay = Duration.milliseconds(250)

    // MARK: - Ordering

    @Test("addresses are interleaved by family, the resolver's first family first, duplicates dropped")
    func interleaving() {
        let (a6, b6, c6, a4, b4) = (Self.v6(1), Self.v6(2), Self.v6(3), Self.v4(1), Self.v4(2))
        #expect(HappyEyeballsMachine.interleave([a6, b6, c6, a4, b4]) == [a6, a4, b6, b4, c6])
        #expect(HappyEyeballsMachine.interleave([a4, a6, b6, b4]) == [a4, a6, b4, b6])
        #expect(HappyEyeballsMachine.interleave([a4, b4, a4]) == [a4, b4])
        #expect(HappyEyeballsMachine.interleave([]) == [])
    }

    // MARK: - Direct transitions

    @Test("resolved: the first attempt starts at once, the timer is armed while more addresses are left")
    func firstAttempt() {
        var machine = HappyEyeballsMachine(attemptDelay: Self.delay)
        #expect(machine.phase == .resolving)
        let actions = machine.resolved([Self.v6(1), Self.v4(1)])
        #expect(actions == [.armAttemptTimer(generation: 1, delay: Self.delay), .startAttempt(0, Self.v6(1))])
        #expect(machine.phase == .connecting)
        #expect(machine.pendingAttempts == [0])

        var single = HappyEyeballsMachine()
        #expect(single.resolved([Self.v4(1)]) == [.startAttempt(0, Self.v4(1))])
    }

    @Test("the timer starts the next attempt while the earlier one stays pending; a stale timer is ignored")
    func timerStartsNext() {
        var machine = HappyEyeballsMachine(attemptDelay: Self.delay)
        _ = machine.resolved([Self.v6(1), Self.v4(1), Self.v6(2)])
        #expect(machine.attemptDelayElapsed(generation: 1)
                == [.armAttemptTimer(generation: 2, delay: Self.delay), .startAttempt(1, Self.v4(1))])
        #expect(machine.attemptDelayElapsed(generation: 1) == [])  // replaced by generation 2
        #expect(machine.attemptDelayElapsed(generation: 2) == [.startAttempt(2, Self.v6(2))])
        #expect(machine.pendingAttempts == [0, 1, 2])
        #expect(machine.attemptDelayElapsed(generation: 3) == [])
    }

    @Test("a failed attempt is closed and the next starts at once, with a fresh timer")
    func failureStartsNextAtOnce() {
        var machine = HappyEyeballsMachine(attemptDelay: Self.delay)
        _ = machine.resolved([Self.v6(1), Self.v4(1), Self.v6(2)])
        #expect(machine.attemptFailed(0, error: Self.refused)
                == [.closeAttempt(0), .armAttemptTimer(generation: 2, delay: Self.delay), .startAttempt(1, Self.v4(1))])
        #expect(machine.lastError == Self.refused)
        // The last address: no timer is needed any more, the armed one is cancelled.
        #expect(machine.attemptFailed(1, error: Self.refused) == [.closeAttempt(1), .cancelAttemptTimer, .startAttempt(2, Self.v6(2))])
    }

    @Test("success of a later attempt while an earlier one is pending: the later wins, the earlier is closed")
    func laterAttemptWins() {
        var machine = HappyEyeballsMachine(attemptDelay: Self.delay)
        _ = machine.resolved([Self.v6(1), Self.v4(1), Self.v6(2)])
        _ = machine.attemptDelayElapsed(generation: 1)
        #expect(machine.attemptConnected(1) == [.cancelAttemptTimer, .closeAttempt(0), .connected(1)])
        #expect(machine.phase == .connected(1))
        #expect(machine.pendingAttempts == [])
        // The earlier attempt's answer comes late: it is closed (again; closing is idempotent).
        #expect(machine.attemptConnected(0) == [.closeAttempt(0)])
        #expect(machine.attemptFailed(0, error: Self.refused) == [.closeAttempt(0)])
        #expect(machine.attemptConnected(1) == [])
        #expect(machine.attemptDelayElapsed(generation: 2) == [])
        #expect(machine.timedOut() == [])
        #expect(machine.cancel() == [])
    }

    @Test("two attempts connecting in the same turn: the first reported wins, the second is closed")
    func twoConnectInOneTurn() {
        var machine = HappyEyeballsMachine(attemptDelay: Self.delay)
        _ = machine.resolved([Self.v6(1), Self.v4(1)])
        _ = machine.attemptDelayElapsed(generation: 1)
        #expect(machine.pendingAttempts == [0, 1])
        let first = machine.attemptConnected(0)
        let second = machine.attemptConnected(1)
        #expect(first == [.closeAttempt(1), .connected(0)])
        #expect(second == [.closeAttempt(1)])
        #expect((first + second).filter { if case .connected = $0 { true } else { false } }.count == 1)
    }

    @Test("every attempt fails: the race fails once, naming the last failure")
    func allFail() {
        var machine = HappyEyeballsMachine(attemptDelay: Self.delay)
        _ = machine.resolved([Self.v6(1), Self.v4(1)])
        _ = machine.attemptDelayElapsed(generation: 1)
        let unreachable = SocketError(operation: "connect", errno: 101)
        #expect(machine.attemptFailed(1, error: unreachable) == [.closeAttempt(1)])  // 0 still pending
        #expect(machine.attemptFailed(0, error: Self.refused) == [.closeAttempt(0), .failed(.allAttemptsFailed(last: Self.refused))])
        #expect(machine.phase == .finished)
        #expect(machine.attemptFailed(0, error: Self.refused) == [.closeAttempt(0)])
    }

    @Test("the overall timeout during the race closes every attempt and fails with timedOut and the last error")
    func timeoutDuringRace() {
        var machine = HappyEyeballsMachine(attemptDelay: Self.delay)
        _ = machine.resolved([Self.v6(1), Self.v4(1), Self.v6(2)])
        _ = machine.attemptFailed(0, error: Self.refused)
        _ = machine.attemptDelayElapsed(generation: 2)
        #expect(machine.timedOut() == [.closeAttempt(1), .closeAttempt(2), .failed(.timedOut(last: Self.refused))])
        #expect(machine.attemptConnected(2) == [.closeAttempt(2)])  // a late winner is closed
        #expect(machine.timedOut() == [])

        var resolving = HappyEyeballsMachine()
        #expect(resolving.timedOut() == [.failed(.timedOut(last: nil))])
        #expect(resolving.resolved([Self.v4(1)]) == [])  // the answer after the timeout is ignored
    }

    @Test("cancel during the race closes every attempt and the timer, and reports nothing")
    func cancelDuringRace() {
        var machine = HappyEyeballsMachine(attemptDelay: Self.delay)
        _ = machine.resolved([Self.v6(1), Self.v4(1), Self.v6(2)])
        _ = machine.attemptDelayElapsed(generation: 1)
        #expect(machine.cancel() == [.cancelAttemptTimer, .closeAttempt(0), .closeAttempt(1)])
        #expect(machine.phase == .finished)
        #expect(machine.attemptConnected(0) == [.closeAttempt(0)])
        #expect(machine.attemptDelayElapsed(generation: 2) == [])

        var resolving = HappyEyeballsMachine()
        #expect(resolving.cancel() == [])
        #expect(resolving.resolved([Self.v4(1)]) == [])
        #expect(resolving.resolutionFailed(Self.refused) == [])
    }

    @Test("resolution failures and empty answers fail the race")
    func resolutionFailures() {
        var failing = HappyEyeballsMachine()
        #expect(failing.resolutionFailed(Self.refused) == [.failed(.resolutionFailed(Self.refused))])
        var empty = HappyEyeballsMachine()
        #expect(empty.resolved([]) == [.failed(.noAddresses)])
    }

    @Test("an attempt delay below 10 ms counts as 10 ms")
    func minimumDelay() {
        #expect(HappyEyeballsMachine(attemptDelay: .zero).attemptDelay == .milliseconds(10))
        #expect(HappyEyeballsMachine(attemptDelay: .seconds(-1)).attemptDelay == .milliseconds(10))
        #expect(HappyEyeballsMachine(attemptDelay: .milliseconds(300)).attemptDelay == .milliseconds(300))
    }

    // MARK: - Whole races on a virtual clock

    @Test("[black hole, good]: the good address is tried after one attempt delay and wins; the black hole is closed")
    func blackHoleThenGood() {
        var race = VirtualRace([(Self.v4(1), .blackHole), (Self.v4(2), .connects(after: .milliseconds(1)))])
        race.run([Self.v4(1), Self.v4(2)])
        #expect(race.outcome == .won(attempt: 1, at: .milliseconds(251)))
        #expect(race.started == [0: .zero, 1: .milliseconds(250)])
        #expect(race.closed == [0])
    }

    @Test("[refused IPv6, good IPv4]: the IPv4 attempt starts at once and wins without waiting")
    func refusedIPv6() {
        var race = VirtualRace([(Self.v6(1), .failsAtOnce), (Self.v4(1), .connects(after: .zero))])
        race.run([Self.v6(1), Self.v4(1)])
        #expect(race.outcome == .won(attempt: 1, at: .zero))
        #expect(race.closed == [0])
    }

    @Test("a slow failure before the delay starts the next at once; attempts start every delay while others are pending")
    func cadence() {
        var race = VirtualRace(attemptDelay: .milliseconds(100), [
            (Self.v6(1), .fails(after: .milliseconds(40))), (Self.v4(1), .blackHole),
            (Self.v6(2), .blackHole), (Self.v4(2), .connects(after: .milliseconds(5))),
        ])
        race.run([Self.v6(1), Self.v6(2), Self.v4(1), Self.v4(2)])
        // Interleaved: v6(1), v4(1), v6(2), v4(2).
        #expect(race.started == [0: .zero, 1: .milliseconds(40), 2: .milliseconds(140), 3: .milliseconds(240)])
        #expect(race.outcome == .won(attempt: 3, at: .milliseconds(245)))
        #expect(race.closed.sorted() == [0, 1, 2])
    }

    @Test("every address black-holed: timedOut at the overall timeout, every attempt closed")
    func allBlackHoled() {
        var race = VirtualRace([(Self.v4(1), .blackHole), (Self.v6(1), .blackHole)])
        race.run([Self.v4(1), Self.v6(1)], timeout: .seconds(2))
        #expect(race.outcome == .failed(.timedOut(last: nil), at: .seconds(2)))
        #expect(race.closed.sorted() == [0, 1])
    }

    @Test("every address refused: cannot connect at once, with the last error")
    func allRefused() {
        var race = VirtualRace([(Self.v4(1), .failsAtOnce), (Self.v6(1), .failsAtOnce)])
        race.run([Self.v4(1), Self.v6(1)])
        #expect(race.outcome == .failed(.allAttemptsFailed(last: Self.refused), at: .zero))
        #expect(race.closed == [0, 1])
    }

    @Test("cancel in the middle of a virtual race closes both pending attempts; nothing runs afterwards")
    func cancelMidRace() {
        var race = VirtualRace([(Self.v4(1), .blackHole), (Self.v4(2), .connects(after: .milliseconds(100))), (Self.v4(3), .blackHole)])
        race.run([Self.v4(1), Self.v4(2), Self.v4(3)], pause: .milliseconds(300))
        #expect(race.started == [0: .zero, 1: .milliseconds(250)])
        race.feed { $0.cancel() }
        #expect(race.closed == [0, 1])
        race.run([], pause: .seconds(1))  // the answer of attempt 1 was dropped with it; the timer too
        #expect(race.outcome == .unfinished)
        #expect(race.started.count == 2)
    }
}

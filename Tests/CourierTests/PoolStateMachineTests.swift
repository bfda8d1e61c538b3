@testable import Courier
import Testing

/// The pool state machine on a virtual clock: every transition and race, without sockets,
/// threads or sleeps. Times are plain nanosecond numbers.
@Suite("Pool state machine")
struct PoolStateMachineTests {
    typealias Machine = PoolStateMachine
    typealias R = PoolStateMachine.RequestID
    typealias C = PoolStateMachine.ConnectionID

    static let second: UInt64 = 1_000_000_000
    static let timeout = 10 * second
    static let idle = 60 * second

    func r(_ value: Int) -> R { R(value: value) }
    func c(_ value: Int) -> C { C(value: value) }

    func machine(max: Int = 2) -> Machine {
        Machine(origin: "http://example.com:80", maxConnections: max, idleTimeout: Self.idle)
    }

    // MARK: - Placing requests

    @Test("a first request waits and opens a connection; once ready it runs there; then the connection rests and is reused")
    func firstRequestThenReuse() {
        var pool = machine()
        #expect(pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
                == .init(request: .wait(r(1), checkAt: Self.timeout), connection: .open(c(1))))
        #expect(pool.waitingCount == 1 && pool.connectionCount == 1)
        #expect(pool.connectionReady(c(1), at: 5) == .init(request: .execute(r(1), on: c(1))))
        #expect(pool.waitingCount == 0 && pool.requests[r(1)] == .active(c(1)))
        #expect(pool.connectionReleased(c(1), at: 9) == .init(connection: .rest(c(1), sweepAt: 9 + Self.idle)))
        #expect(pool.idleCount == 1 && pool.requests.isEmpty)
        #expect(pool.requestArrived(r(2), timeout: Self.timeout, at: 10) == .init(request: .execute(r(2), on: c(1))))
        #expect(pool.idleCount == 0 && pool.connectionCount == 1)
    }

    @Test("no more connections than the maximum: the third request waits without opening one")
    func maximum() {
        var pool = machine(max: 2)
        #expect(pool.requestArrived(r(1), timeout: Self.timeout, at: 0).connection == .open(c(1)))
        #expect(pool.requestArrived(r(2), timeout: Self.timeout, at: 0).connection == .open(c(2)))
        #expect(pool.requestArrived(r(3), timeout: Self.timeout, at: 0) == .init(request: .wait(r(3), checkAt: Self.timeout)))
        #expect(pool.connectionCount == 2 && pool.waitingCount == 3)
    }

    @Test("a connection opened for the queue is not opened twice: one waiter, one connection")
    func oneOpenPerWaiter() {
        var pool = machine(max: 4)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        #expect(pool.connectionReady(c(1), at: 1) == .init(request: .execute(r(1), on: c(1))))
        // c1 is busy: the next waiter opens c2, and only c2.
        #expect(pool.requestArrived(r(2), timeout: Self.timeout, at: 2).connection == .open(c(2)))
        #expect(pool.connectionCount == 2)
    }

    @Test("the queue is first in, first out, and a freed connection serves it before resting")
    func fairQueue() {
        var pool = machine(max: 1)
        for index in 1...4 { _ = pool.requestArrived(r(index), timeout: Self.timeout, at: UInt64(index)) }
        #expect(pool.connectionReady(c(1), at: 10).request == .execute(r(1), on: c(1)))
        #expect(pool.connectionReleased(c(1), at: 11).request == .execute(r(2), on: c(1)))
        #expect(pool.connectionReleased(c(1), at: 12).request == .execute(r(3), on: c(1)))
        #expect(pool.connectionReleased(c(1), at: 13).request == .execute(r(4), on: c(1)))
        #expect(pool.connectionReleased(c(1), at: 14).connection == .rest(c(1), sweepAt: 14 + Self.idle))
    }

    @Test("the most recently used idle connection is taken first")
    func mostRecentlyUsed() {
        var pool = machine(max: 2)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        _ = pool.connectionReady(c(2), at: 1)
        _ = pool.connectionReleased(c(2), at: 5)
        _ = pool.connectionReleased(c(1), at: 7)
        #expect(pool.requestArrived(r(3), timeout: Self.timeout, at: 8).request == .execute(r(3), on: c(1)))
        #expect(pool.requestArrived(r(4), timeout: Self.timeout, at: 8).request == .execute(r(4), on: c(2)))
    }

    // MARK: - Cancellation

    @Test("cancel while queued: fails at once with cancelled and leaves the queue; the connection then rests")
    func cancelWaiting() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        #expect(pool.requestCancelled(r(1)) == .init(request: .fail(r(1), .cancelled)))
        #expect(pool.waitingCount == 0 && pool.requests.isEmpty)
        #expect(pool.connectionReady(c(1), at: 3) == .init(connection: .rest(c(1), sweepAt: 3 + Self.idle)))
    }

    @Test("cancel in the middle of the queue: the others keep their order")
    func cancelMiddle() {
        var pool = machine(max: 1)
        for index in 1...3 { _ = pool.requestArrived(r(index), timeout: Self.timeout, at: 0) }
        #expect(pool.requestCancelled(r(2)).request == .fail(r(2), .cancelled))
        #expect(pool.waitingCount == 2)
        #expect(pool.connectionReady(c(1), at: 1).request == .execute(r(1), on: c(1)))
        #expect(pool.connectionReleased(c(1), at: 2).request == .execute(r(3), on: c(1)))
    }

    @Test("cancel while active: the connection aborts the request (and closes)")
    func cancelActive() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        #expect(pool.requestCancelled(r(1)) == .init(request: .abort(r(1), on: c(1), .cancelled)))
        // The connection closes after aborting; nothing waits, so nothing opens.
        #expect(pool.connectionClosed(c(1), error: nil) == .none)
        #expect(pool.connectionCount == 0 && pool.requests.isEmpty)
    }

    @Test("race: cancel against response — a cancel that arrives after the response was delivered does nothing")
    func cancelAfterResponse() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        _ = pool.connectionReleased(c(1), at: 2)
        #expect(pool.requestCancelled(r(1)) == .none)
        #expect(pool.idleCount == 1)
    }

    @Test("cancel a request waiting for its dedicated connection: it fails, and the connection serves the queue once ready")
    func cancelDedicated() {
        var pool = machine(max: 1)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        _ = pool.connectionClosed(c(1), error: nil)
        #expect(pool.retryOnFreshConnection(r(1), timeout: Self.timeout, at: 2)
                == .init(request: .wait(r(1), checkAt: 2 + Self.timeout), connection: .open(c(2))))
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 3)
        #expect(pool.requestCancelled(r(1)).request == .fail(r(1), .cancelled))
        #expect(pool.connectionReady(c(2), at: 4).request == .execute(r(2), on: c(2)))
    }

    // MARK: - Timeouts

    @Test("a queued request times out after its timeout of silence, and leaves the queue")
    func waitTimeout() {
        var pool = machine(max: 1)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        let action = pool.waitCheck(r(1), at: Self.timeout)
        guard case .fail(r(1), let error) = action.request else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(error == .timedOut)
        #expect(error.detail?.contains("no connection to http://example.com:80 became available in 10.0 seconds") == true)
        #expect(pool.waitingCount == 0 && pool.requests.isEmpty)
    }

    @Test("a queued request does not time out while the pool makes progress: the check moves on")
    func waitBehindProgress() {
        var pool = machine(max: 1)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        pool.progress(at: 4 * Self.second)
        #expect(pool.waitCheck(r(1), at: Self.timeout) == .init(request: .wait(r(1), checkAt: 14 * Self.second)))
        #expect(pool.waitCheck(r(1), at: 14 * Self.second).request == .fail(r(1), .timedOut))
    }

    @Test("race: timeout against data — a wait check after the request got its connection does nothing")
    func waitCheckAfterStart() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        #expect(pool.waitCheck(r(1), at: Self.timeout) == .none)
        #expect(pool.requests[r(1)] == .active(c(1)))
    }

    // MARK: - Failing connections

    @Test("a failed connect fails the oldest waiting request, and opens again for the rest of the queue")
    func connectFailure() {
        var pool = machine(max: 1)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        #expect(pool.connectionClosed(c(1), error: .cannotConnect)
                == .init(request: .fail(r(1), .cannotConnect), connection: .open(c(2))))
        #expect(pool.connectionClosed(c(2), error: .cannotConnect) == .init(request: .fail(r(2), .cannotConnect)))
        #expect(pool.connectionCount == 0 && pool.waitingCount == 0 && pool.requests.isEmpty)
    }

    @Test("a failed dedicated connect fails the request it was opened for, not the queue")
    func dedicatedConnectFailure() {
        var pool = machine(max: 1)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 1)
        _ = pool.connectionClosed(c(1), error: nil)
        // r2 waits; closing c1 opened c2 for it.
        #expect(pool.connectionCount == 1)
        #expect(pool.retryOnFreshConnection(r(1), timeout: Self.timeout, at: 2).connection == .open(c(3)))
        #expect(pool.connectionClosed(c(3), error: .cannotConnect).request == .fail(r(1), .cannotConnect))
        #expect(pool.requests[r(2)] == .waiting(since: 1, timeout: Self.timeout))
    }

    @Test("race: stale connection against send — the request goes out once more on a connection of its own, even at the maximum")
    func staleRetry() {
        var pool = machine(max: 1)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        _ = pool.connectionReleased(c(1), at: 2)
        #expect(pool.requestArrived(r(2), timeout: Self.timeout, at: 3).request == .execute(r(2), on: c(1)))
        // The server had closed c1 while it was idle: the send meets a closed connection.
        #expect(pool.connectionClosed(c(1), error: nil) == .none)
        #expect(pool.retryOnFreshConnection(r(2), timeout: Self.timeout, at: 4).connection == .open(c(2)))
        #expect(pool.connectionReady(c(2), at: 5).request == .execute(r(2), on: c(2)))
    }

    @Test("race: close against a queued request — a busy connection that closes is replaced for the queue")
    func closeWithQueue() {
        var pool = machine(max: 1)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        #expect(pool.connectionClosed(c(1), error: nil) == .init(connection: .open(c(2))))
        #expect(pool.connectionReady(c(2), at: 2).request == .execute(r(2), on: c(2)))
    }

    @Test("an idle connection the server closed is forgotten; the next request opens a new one")
    func idleClosed() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        _ = pool.connectionReleased(c(1), at: 2)
        #expect(pool.connectionClosed(c(1), error: nil) == .none)
        #expect(pool.idleCount == 0)
        #expect(pool.requestArrived(r(2), timeout: Self.timeout, at: 3).connection == .open(c(2)))
    }

    // MARK: - Idle expiry

    @Test("the sweep closes only connections idle for the idle timeout, and re-arms for the next")
    func sweep() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        _ = pool.connectionReady(c(2), at: 1)
        #expect(pool.connectionReleased(c(1), at: 10).connection == .rest(c(1), sweepAt: 10 + Self.idle))
        // The sweep is armed already: the second rest does not arm it again.
        #expect(pool.connectionReleased(c(2), at: 20).connection == .rest(c(2), sweepAt: nil))
        #expect(pool.sweep(at: 10 + Self.idle) == .init(connection: .close([c(1)], sweepAt: 20 + Self.idle)))
        #expect(pool.sweep(at: 20 + Self.idle) == .init(connection: .close([c(2)], sweepAt: nil)))
        #expect(pool.connectionCount == 0)
        // A connection closed by the sweep reports its close later: nothing more happens.
        #expect(pool.connectionClosed(c(1), error: nil) == .none)
    }

    @Test("a busy connection is never swept; it rests afterwards with a fresh idle time")
    func busyNotSwept() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)
        _ = pool.connectionReleased(c(1), at: 2)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 3)
        #expect(pool.sweep(at: 2 + Self.idle) == .none)
        #expect(pool.connectionReleased(c(1), at: 5 + Self.idle).connection == .rest(c(1), sweepAt: 5 + 2 * Self.idle))
    }

    // MARK: - Shutting down

    @Test("shutdown with requests in every state: waiting and dedicated ones fail, every connection closes, later events do nothing")
    func shutdownEverywhere() {
        var pool = machine(max: 2)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)   // c1: will be active
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)   // c2: will be idle
        _ = pool.connectionReady(c(1), at: 1)
        _ = pool.connectionReady(c(2), at: 1)
        _ = pool.connectionReleased(c(2), at: 2)
        _ = pool.requestArrived(r(3), timeout: Self.timeout, at: 3)   // takes idle c2
        _ = pool.requestArrived(r(4), timeout: Self.timeout, at: 3)   // waits
        _ = pool.connectionClosed(c(2), error: nil)                    // r3's c2 went stale: opens c3 for r4
        _ = pool.retryOnFreshConnection(r(3), timeout: Self.timeout, at: 4)  // c4, dedicated to r3
        #expect(pool.connections.count == 3)
        let action = pool.shutDown()
        #expect(action.request == .failAll([r(3), r(4)], NativeErrors.shutDown))
        #expect(action.connection == .close([c(1), c(3), c(4)], sweepAt: nil))
        #expect(pool.connectionCount == 0 && pool.waitingCount == 0 && pool.requests.isEmpty)
        #expect(pool.requestArrived(r(5), timeout: Self.timeout, at: 5) == .init(request: .fail(r(5), NativeErrors.shutDown)))
        #expect(pool.connectionReady(c(3), at: 5) == .none)
        #expect(pool.connectionReleased(c(1), at: 5) == .none)
        #expect(pool.connectionClosed(c(4), error: .cannotConnect) == .none)
        #expect(pool.retryOnFreshConnection(r(1), timeout: Self.timeout, at: 5).request == .fail(r(1), NativeErrors.shutDown))
        #expect(pool.shutDown() == .none)
    }

    @Test("a queue of 10,000 requests through 3 connections is served in order, and the pool ends idle")
    func longQueue() {
        var pool = machine(max: 3)
        var served: [R] = []
        var now: UInt64 = 0
        for index in 1...10_000 { _ = pool.requestArrived(r(index), timeout: Self.timeout, at: now) }
        var busy: [C] = []
        for id in 1...3 {
            if case .execute(let request, let connection) = pool.connectionReady(c(id), at: now).request {
                served.append(request)
                busy.append(connection)
            }
        }
        while let connection = busy.first {
            busy.removeFirst()
            now += 1
            if case .execute(let request, let next) = pool.connectionReleased(connection, at: now).request {
                served.append(request)
                busy.append(next)
            }
        }
        #expect(served == (1...10_000).map(r))
        #expect(pool.idleCount == 3 && pool.waitingCount == 0 && pool.requests.isEmpty)
    }
}

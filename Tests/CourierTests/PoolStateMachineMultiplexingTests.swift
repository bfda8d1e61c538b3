@testable import Courier
import Testing

/// The pool state machine with HTTP/2 connections, on a virtual clock: learning the origin's
/// protocol, multiplexing up to the server's stream limit, the FIFO queue behind it, GOAWAY
/// draining, requeueing refused requests, idle expiry.
@Suite("Pool state machine: HTTP/2 multiplexing")
struct PoolStateMachineMultiplexingTests {
    typealias Machine = PoolStateMachine
    typealias R = PoolStateMachine.RequestID
    typealias C = PoolStateMachine.ConnectionID

    static let second: UInt64 = 1_000_000_000
    static let timeout = 10 * second
    static let idle = 60 * second

    func r(_ value: Int) -> R { R(value: value) }
    func c(_ value: Int) -> C { C(value: value) }

    func machine(max: Int = 8, http2Max: Int = 1) -> Machine {
        Machine(origin: "https://example.com:443", maxConnections: max, idleTimeout: Self.idle, mayUseHTTP2: true,
                maxMultiplexedConnections: http2Max)
    }

    @Test("while the protocol is unknown, a burst opens one connection; HTTP/2 then carries the whole burst")
    func burstSharesOneConnection() {
        var pool = machine()
        #expect(pool.requestArrived(r(1), timeout: Self.timeout, at: 0).connection == .open(c(1)))
        for i in 2...5 {
            #expect(pool.requestArrived(r(i), timeout: Self.timeout, at: 0) == .init(request: .wait(r(i), checkAt: Self.timeout)))
        }
        #expect(pool.connectionCount == 1)
        #expect(pool.connectionReadyMultiplexed(c(1), capacity: 100, at: 1)
                == .init(request: .executeAll([r(1), r(2), r(3), r(4), r(5)], on: c(1))))
        #expect(pool.originProtocol == .http2 && pool.waitingCount == 0)
        // A later request joins the same connection at once.
        #expect(pool.requestArrived(r(6), timeout: Self.timeout, at: 2) == .init(request: .execute(r(6), on: c(1))))
    }

    @Test("while the protocol is unknown, a burst opens one connection; HTTP/1.1 then opens one for each request still waiting")
    func burstLearnsHTTP1() {
        var pool = machine(max: 5)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(3), timeout: Self.timeout, at: 0)
        #expect(pool.connectionCount == 1)
        // Found by the random conversations: only c2 opened here, and c2's readiness opened no
        // more, so a burst to an HTTPS origin that speaks HTTP/1.1 ran on two connections.
        #expect(pool.connectionReady(c(1), at: 1) == .init(request: .execute(r(1), on: c(1)), connection: .openAll([c(2), c(3)])))
        #expect(pool.originProtocol == .http1)
        #expect(pool.requestArrived(r(4), timeout: Self.timeout, at: 2).connection == .open(c(4)))
        #expect(pool.connectionReady(c(2), at: 3) == .init(request: .execute(r(2), on: c(2))))
    }

    @Test("a burst that learns HTTP/1.1 opens no more connections than the maximum")
    func burstLearnsHTTP1AtTheLimit() {
        var pool = machine(max: 2)
        for i in 1...4 { _ = pool.requestArrived(r(i), timeout: Self.timeout, at: 0) }
        #expect(pool.connectionReady(c(1), at: 1) == .init(request: .execute(r(1), on: c(1)), connection: .open(c(2))))
        #expect(pool.connectionCount == 2 && pool.waitingCount == 3)
    }

    @Test("the stream limit caps a connection; the rest wait FIFO and take streams as they end")
    func streamLimitQueue() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(3), timeout: Self.timeout, at: 0)
        #expect(pool.connectionReadyMultiplexed(c(1), capacity: 1, at: 1) == .init(request: .execute(r(1), on: c(1))))
        // No second HTTP/2 connection: the maximum is one.
        #expect(pool.requestArrived(r(4), timeout: Self.timeout, at: 2) == .init(request: .wait(r(4), checkAt: 2 + Self.timeout)))
        #expect(pool.connectionCount == 1 && pool.waitingCount == 3)
        #expect(pool.streamEnded(r(1), on: c(1), at: 3) == .init(request: .execute(r(2), on: c(1))))
        #expect(pool.streamEnded(r(2), on: c(1), at: 4) == .init(request: .execute(r(3), on: c(1))))
        #expect(pool.streamEnded(r(3), on: c(1), at: 5) == .init(request: .execute(r(4), on: c(1))))
        #expect(pool.streamEnded(r(4), on: c(1), at: 6) == .init(connection: .rest(c(1), sweepAt: 6 + Self.idle)))
    }

    @Test("a second HTTP/2 connection opens only when configured and every connection is full")
    func secondConnectionWhenConfigured() {
        var pool = machine(http2Max: 2)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        #expect(pool.connectionReadyMultiplexed(c(1), capacity: 1, at: 1)
                == .init(request: .execute(r(1), on: c(1)), connection: .open(c(2))))
        #expect(pool.connectionReadyMultiplexed(c(2), capacity: 1, at: 2) == .init(request: .execute(r(2), on: c(2))))
        #expect(pool.requestArrived(r(3), timeout: Self.timeout, at: 3) == .init(request: .wait(r(3), checkAt: 3 + Self.timeout)))
        #expect(pool.connectionCount == 2)
    }

    @Test("HTTP/2 connections are bounded by their own limit alone, not by a smaller HTTP/1.1 limit (a pool's share on one of several loops)")
    func http2LimitAloneBoundsHTTP2() {
        var pool = machine(max: 1, http2Max: 2)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        #expect(pool.connectionReadyMultiplexed(c(1), capacity: 1, at: 1)
                == .init(request: .execute(r(1), on: c(1)), connection: .open(c(2))))
        #expect(pool.connectionReadyMultiplexed(c(2), capacity: 1, at: 2) == .init(request: .execute(r(2), on: c(2))))
        #expect(pool.connectionCount == 2)
        // While the protocol is unknown, the HTTP/1.1 limit still holds.
        var unknown = machine(max: 1, http2Max: 2)
        _ = unknown.requestArrived(r(1), timeout: Self.timeout, at: 0)
        #expect(unknown.requestArrived(r(2), timeout: Self.timeout, at: 0) == .init(request: .wait(r(2), checkAt: Self.timeout)))
        #expect(unknown.connectionCount == 1)
    }

    @Test("a raised stream limit hands out waiting requests")
    func capacityRaised() {
        var pool = machine()
        for i in 1...3 { _ = pool.requestArrived(r(i), timeout: Self.timeout, at: 0) }
        _ = pool.connectionReadyMultiplexed(c(1), capacity: 1, at: 1)
        #expect(pool.capacityChanged(c(1), capacity: 10, at: 2) == .init(request: .executeAll([r(2), r(3)], on: c(1))))
    }

    @Test("GOAWAY: the connection drains, refused requests come back and open a new connection")
    func goAwayRequeues() {
        var pool = machine()
        for i in 1...3 { _ = pool.requestArrived(r(i), timeout: Self.timeout, at: 0) }
        _ = pool.connectionReadyMultiplexed(c(1), capacity: 10, at: 1)
        #expect(pool.connectionDraining(c(1)) == .none)
        // r2 and r3 were above the last stream id.
        #expect(pool.streamEnded(r(2), on: c(1), at: 2) == .none)
        #expect(pool.requeue(r(2), previousRequeues: 0, timeout: Self.timeout, at: 2)
                == .init(request: .wait(r(2), checkAt: 2 + Self.timeout), connection: .open(c(2))))
        #expect(pool.streamEnded(r(3), on: c(1), at: 2) == .none)
        #expect(pool.requeue(r(3), previousRequeues: 0, timeout: Self.timeout, at: 2)
                == .init(request: .wait(r(3), checkAt: 2 + Self.timeout)))
        // A new request never goes to the draining connection.
        #expect(pool.requestArrived(r(4), timeout: Self.timeout, at: 3) == .init(request: .wait(r(4), checkAt: 3 + Self.timeout)))
        #expect(pool.connectionReadyMultiplexed(c(2), capacity: 10, at: 4) == .init(request: .executeAll([r(2), r(3), r(4)], on: c(2))))
        // r1 finishes on the draining connection, which then closes.
        #expect(pool.streamEnded(r(1), on: c(1), at: 5) == .none)
        #expect(pool.connectionClosed(c(1), error: nil) == .none)
        #expect(pool.connectionCount == 1)
    }

    @Test("a request refused again and again fails after the requeue limit")
    func requeueLimit() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReadyMultiplexed(c(1), capacity: 10, at: 1)
        for attempt in 0..<Machine.maxRequeues {
            _ = pool.streamEnded(r(1), on: c(1), at: 2)
            #expect(pool.requeue(r(1), previousRequeues: attempt, timeout: Self.timeout, at: 2) == .init(request: .execute(r(1), on: c(1))))
        }
        _ = pool.streamEnded(r(1), on: c(1), at: 3)
        let action = pool.requeue(r(1), previousRequeues: Machine.maxRequeues, timeout: Self.timeout, at: 3)
        guard case .fail(r(1), let error) = action.request else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(error == .connectionLost)
        #expect(pool.requests.isEmpty)
    }

    @Test("a cancelled request on an HTTP/2 connection is aborted there; its end frees its stream")
    func cancelActive() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        _ = pool.connectionReadyMultiplexed(c(1), capacity: 1, at: 1)
        #expect(pool.requestCancelled(r(1)) == .init(request: .abort(r(1), on: c(1), .cancelled)))
        #expect(pool.streamEnded(r(1), on: c(1), at: 2) == .init(request: .execute(r(2), on: c(1))))
        // A queued request cancelled leaves the queue.
        _ = pool.requestArrived(r(3), timeout: Self.timeout, at: 3)
        #expect(pool.requestCancelled(r(3)) == .init(request: .fail(r(3), .cancelled)))
        #expect(pool.waitingCount == 0)
    }

    @Test("an HTTP/2 connection that closes forgets its requests; the queue gets a new connection")
    func closedConnection() {
        var pool = machine()
        for i in 1...3 { _ = pool.requestArrived(r(i), timeout: Self.timeout, at: 0) }
        _ = pool.connectionReadyMultiplexed(c(1), capacity: 2, at: 1)
        #expect(pool.connectionClosed(c(1), error: nil) == .init(connection: .open(c(2))))
        #expect(pool.requests[r(1)] == nil && pool.requests[r(2)] == nil)
        #expect(pool.requests[r(3)] == .waiting(since: 0, timeout: Self.timeout))
    }

    @Test("an HTTP/2 connection without requests is swept after the idle timeout")
    func idleSweep() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReadyMultiplexed(c(1), capacity: 10, at: 1)
        #expect(pool.streamEnded(r(1), on: c(1), at: 2) == .init(connection: .rest(c(1), sweepAt: 2 + Self.idle)))
        #expect(pool.sweep(at: 1 + Self.idle) == .init(connection: .close([], sweepAt: 2 + Self.idle)))
        #expect(pool.sweep(at: 2 + Self.idle) == .init(connection: .close([c(1)], sweepAt: nil)))
        #expect(pool.connectionCount == 0)
    }

    @Test("a connect that fails before the protocol is known fails one waiter and tries again")
    func failedFirstConnect() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        let action = pool.connectionClosed(c(1), error: .cannotConnect)
        #expect(action == .init(request: .fail(r(1), .cannotConnect), connection: .open(c(2))))
        #expect(pool.originProtocol == .unknown)
    }

    @Test("race: a lowered stream limit takes effect as streams end; nothing waiting starts until there is room")
    func capacityLowered() {
        var pool = machine()
        for i in 1...4 { _ = pool.requestArrived(r(i), timeout: Self.timeout, at: 0) }
        _ = pool.connectionReadyMultiplexed(c(1), capacity: 3, at: 1)
        #expect(pool.capacityChanged(c(1), capacity: 1, at: 2) == .none)
        #expect(pool.streamEnded(r(1), on: c(1), at: 3) == .none)
        #expect(pool.streamEnded(r(2), on: c(1), at: 4) == .none)
        #expect(pool.streamEnded(r(3), on: c(1), at: 5) == .init(request: .execute(r(4), on: c(1))))
    }

    @Test("a server that allows 0 streams: requests wait, and time out by the wait check, never hang")
    func zeroCapacity() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        #expect(pool.connectionReadyMultiplexed(c(1), capacity: 0, at: 1) == .init(connection: .rest(c(1), sweepAt: 1 + Self.idle)))
        let action = pool.waitCheck(r(1), at: Self.timeout)
        guard case .fail(r(1), let error) = action.request else {
            Issue.record("expected the wait to time out, got \(action)")
            return
        }
        #expect(error == .timedOut)
    }

    @Test("an HTTP/2 connection that has no room for the queue (a limit of 0 streams) gets a second one when two are allowed")
    func zeroCapacityOpensAnother() {
        // Found by the random conversations: the requests waited for a connection that could
        // never take them while a second one was allowed.
        var pool = machine(http2Max: 2)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        #expect(pool.connectionReadyMultiplexed(c(1), capacity: 0, at: 1) == .init(connection: .open(c(2))))
        #expect(pool.connectionReadyMultiplexed(c(2), capacity: 10, at: 2) == .init(request: .executeAll([r(1), r(2)], on: c(2))))
        // With both allowed connections open and neither taking streams, a request waits and
        // nothing more opens.
        #expect(pool.capacityChanged(c(2), capacity: 0, at: 3) == .none)
        #expect(pool.requestArrived(r(3), timeout: Self.timeout, at: 4) == .init(request: .wait(r(3), checkAt: 4 + Self.timeout)))
    }

    @Test("an HTTP/2 connection left without streams still expires when the connection opened beside it fails")
    func unusedConnectionExpiresAfterFailedNeighbour() {
        // Found in review: c1 (0 streams allowed) opened c2 instead of resting, so no sweep was
        // armed; when c2 failed nothing armed it, and c1 stayed open for good.
        var pool = machine(http2Max: 2)
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        #expect(pool.connectionReadyMultiplexed(c(1), capacity: 0, at: 1) == .init(connection: .open(c(2))))
        let failed = pool.connectionClosed(c(2), error: .cannotConnect)
        #expect(failed == .init(request: .fail(r(1), .cannotConnect), connection: .close([], sweepAt: 1 + Self.idle)))
        #expect(pool.sweep(at: 1 + Self.idle) == .init(connection: .close([c(1)], sweepAt: nil)))
        #expect(pool.connectionCount == 0)
    }

    @Test("race: a request cancelled after it was placed again fails as cancelled and leaves the queue")
    func cancelAfterRequeue() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.connectionReadyMultiplexed(c(1), capacity: 10, at: 1)
        _ = pool.connectionDraining(c(1))
        _ = pool.streamEnded(r(1), on: c(1), at: 2)
        #expect(pool.requeue(r(1), previousRequeues: 0, timeout: Self.timeout, at: 2).connection == .open(c(2)))
        #expect(pool.requestCancelled(r(1)) == .init(request: .fail(r(1), .cancelled)))
        #expect(pool.waitingCount == 0)
        // The new connection comes up with nothing to do and rests.
        #expect(pool.connectionReadyMultiplexed(c(2), capacity: 10, at: 3) == .init(connection: .rest(c(2), sweepAt: 3 + Self.idle)))
    }

    @Test("a connection opened for one request alone (a stale retry) that negotiates HTTP/2 serves that request first")
    func dedicatedUpgrade() {
        var pool = machine()
        _ = pool.requestArrived(r(1), timeout: Self.timeout, at: 0)
        _ = pool.requestArrived(r(2), timeout: Self.timeout, at: 0)
        _ = pool.connectionReady(c(1), at: 1)  // HTTP/1.1 after all: r1 runs there
        #expect(pool.retryOnFreshConnection(r(1), timeout: Self.timeout, at: 2).connection == .open(c(3)))
        #expect(pool.connectionReadyMultiplexed(c(3), capacity: 10, at: 3).request == .executeAll([r(1), r(2)], on: c(3)))
    }

    @Test("events for connections or requests the pool does not know change nothing")
    func unknownEvents() {
        var pool = machine()
        #expect(pool.connectionReadyMultiplexed(c(9), capacity: 5, at: 0) == .none)
        #expect(pool.streamEnded(r(9), on: c(9), at: 0) == .none)
        #expect(pool.capacityChanged(c(9), capacity: 5, at: 0) == .none)
        #expect(pool.connectionDraining(c(9)) == .none)
        #expect(pool.connectionCount == 0 && pool.requests.isEmpty)
    }

    @Test("shutdown closes HTTP/2 connections and fails waiting requests")
    func shutdown() {
        var pool = machine()
        for i in 1...2 { _ = pool.requestArrived(r(i), timeout: Self.timeout, at: 0) }
        _ = pool.connectionReadyMultiplexed(c(1), capacity: 1, at: 1)
        #expect(pool.shutDown() == .init(request: .failAll([r(2)], NativeErrors.shutDown), connection: .close([c(1)], sweepAt: nil)))
        #expect(pool.requestArrived(r(3), timeout: Self.timeout, at: 2).request == .fail(r(3), NativeErrors.shutDown))
    }
}

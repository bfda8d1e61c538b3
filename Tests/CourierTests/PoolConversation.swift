@testable import Courier
import CourierTestServer
import Testing

/// One random conversation between ``PoolStateMachine`` and a model of its driver (`HostPool`
/// and its connections, as they answer each action), on a virtual clock.
///
/// The model keeps its own view of every request and connection, written from the machine's
/// documented rules rather than its code, and checks each action against it: a request is
/// placed only while it waits, on a connection that is free (or an HTTP/2 one with room), the
/// queue is served first in, first out, a request ends exactly once, no connection is opened
/// beyond the limits, a waiting request always has a connection coming, and nothing stays in
/// the machine once its request ended.
struct PoolConversation {
    typealias Machine = PoolStateMachine
    typealias R = PoolStateMachine.RequestID
    typealias C = PoolStateMachine.ConnectionID

    /// Where the model has a request.
    enum RequestPhase: Equatable {
        /// In the machine's queue, or about to be placed (arrived, requeued).
        case waiting
        /// Waiting for the connection opened for it alone.
        case dedicated(C)
        /// On a connection.
        case running(C)
        /// Failed by the machine or ended by its connection.
        case ended

        /// Waiting, in the queue or for its own connection: the machine's to place or fail.
        var isPending: Bool {
            switch self {
            case .waiting, .dedicated: true
            case .running, .ended: false
            }
        }

        /// On a connection.
        var isRunning: Bool { if case .running = self { true } else { false } }
    }

    /// Where the model has a connection.
    enum ConnectionPhase: Equatable {
        case opening
        /// Ready (or just released) with no request.
        case free
        /// An HTTP/1.1 connection carrying a request.
        case busy(R)
        /// An HTTP/2 connection and the requests it carries.
        case multiplexed(streams: Set<R>, capacity: Int, draining: Bool)
    }

    static let second: UInt64 = 1_000_000_000
    static let timeout = 10 * second
    static let idleTimeout = 60 * second

    var pool: Machine
    var random: SeededRandom
    let label: String
    let maxConnections: Int
    let maxMultiplexed: Int
    /// Whether the origin's connections turn out to speak HTTP/2.
    let speaksHTTP2: Bool
    var now: UInt64 = 0

    var requests: [R: RequestPhase] = [:]
    /// The machine's queue, as the model expects it: waiting requests in the order they joined.
    var queueOrder: [R] = []
    var terminals: [R: Int] = [:]
    var requeues: [R: Int] = [:]
    var staleRetried: Set<R> = []
    var connections: [C: ConnectionPhase] = [:]
    /// Connections opened for one request alone: they may exceed the limit.
    var dedicatedConnections: Set<C> = []
    var waitChecks: [R: UInt64] = [:]
    var sweepAt: UInt64?
    var nextRequest = 0
    var shutDown = false
    /// The last events, for failure messages.
    var history: [String] = []

    init(seed: UInt64, index: Int) {
        random = SeededRandom(seed: seed, stream: index)
        maxConnections = Int.random(in: 1...4, using: &random)
        maxMultiplexed = Int.random(in: 1...2, using: &random)
        speaksHTTP2 = Bool.random(using: &random)
        let mayUseHTTP2 = speaksHTTP2 || Bool.random(using: &random)
        label = "seed \(seed), conversation \(index) (max \(maxConnections), HTTP/2 \(speaksHTTP2), max HTTP/2 \(maxMultiplexed))"
        pool = Machine(origin: "https://example.com:443", maxConnections: maxConnections, idleTimeout: Self.idleTimeout,
                       mayUseHTTP2: mayUseHTTP2, maxMultiplexedConnections: maxMultiplexed)
    }

    // MARK: Events

    /// Plays `count` random events, then drains or shuts down, checking after each event.
    mutating func play(_ count: Int) {
        for _ in 0..<count {
            randomEvent()
            check()
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            event("shutDown") { $0.shutDownPool() }
        } else {
            drain()
        }
    }

    private mutating func randomEvent() {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<22: event("arrive") { $0.arrive() }
        case 22..<27: event("cancel") { $0.cancelSome() }
        case 27..<40:
            let failing = Int.random(in: 0..<5, using: &random) == 0
            event("connection ready or failed") { $0.openingConnectionSettles(failing: failing) }
        case 40..<55: event("a request ends") { $0.someRequestEnds() }
        case 55..<60: event("stale connection") { $0.staleConnection() }
        case 60..<63: event("idle connection closed") { $0.idleConnectionCloses() }
        case 63..<70: event("HTTP/2 change") { $0.http2Change() }
        case 70..<90:
            let step = UInt64.random(in: 0...(3 * Self.second), using: &random)
            event("time passes") { $0.timePasses(by: step) }
        case 90..<95:
            now += UInt64.random(in: 0...Self.second, using: &random)
            pool.progress(at: now)
        case 95:
            // A wait check that lost the race with the request's placement does nothing.
            if let r = requests.keys.filter({ requests[$0]!.isRunning }).randomElement(using: &random) {
                event("late wait check") { conversation in
                    let action = conversation.pool.waitCheck(r, at: conversation.now)
                    conversation.expect(action == .none, "a late wait check for \(r) did \(action)")
                }
            }
        case 96 where Int.random(in: 0..<20, using: &random) == 0:
            event("shutDown") { $0.shutDownPool() }
        default:
            break
        }
    }

    private mutating func event(_ name: String, _ body: (inout PoolConversation) -> Void) {
        note("\(now / 1_000_000) ms: \(name)")
        body(&self)
    }

    private mutating func note(_ line: String) {
        history.append(line)
        if history.count > 60 { history.removeFirst() }
    }

    private mutating func arrive() {
        nextRequest += 1
        let r = R(value: nextRequest)
        requests[r] = .waiting
        perform(pool.requestArrived(r, timeout: Self.timeout, at: now))
    }

    private mutating func cancelSome() {
        guard let r = requests.keys.filter({ requests[$0] != .ended }).randomElement(using: &random) else { return }
        let action = pool.requestCancelled(r)
        switch requests[r]! {
        case .waiting, .dedicated:
            expect(action == Machine.Action(request: .fail(r, .cancelled)), "cancelling waiting \(r) did \(action)")
        case .running(let c):
            expect(action == Machine.Action(request: .abort(r, on: c, .cancelled)), "cancelling running \(r) did \(action)")
        case .ended:
            break
        }
        perform(action)
    }

    private mutating func openingConnectionSettles(failing: Bool) {
        guard let c = connections.keys.filter({ connections[$0] == .opening }).randomElement(using: &random) else { return }
        note("  \(c) \(failing ? "fails" : "is ready")")
        if failing {
            connections[c] = nil
            dedicatedConnections.remove(c)
            let dedicatedRequest = requests.first { $0.value == .dedicated(c) }?.key
            let action = pool.connectionClosed(c, error: .cannotConnect)
            let expected = dedicatedRequest ?? queueOrder.first
            expect(action.request == (expected.map { .fail($0, .cannotConnect) } ?? .none),
                   "a failed connect of \(c) did \(action); expected to fail \(expected.map(String.init(describing:)) ?? "nothing")")
            perform(action)
        } else if speaksHTTP2 {
            let capacity = Int.random(in: 0...4, using: &random)
            connections[c] = .multiplexed(streams: [], capacity: capacity, draining: false)
            perform(pool.connectionReadyMultiplexed(c, capacity: capacity, at: now))
        } else {
            connections[c] = .free
            perform(pool.connectionReady(c, at: now))
        }
    }

    private mutating func someRequestEnds() {
        let running = requests.compactMap { r, phase -> (R, C)? in
            if case .running(let c) = phase { (r, c) } else { nil }
        }.sorted { $0.0.value < $1.0.value }
        guard let (r, c) = running.randomElement(using: &random) else { return }
        note("  \(r) on \(c) ends")
        switch connections[c] {
        case .busy(r):
            end(r)
            if Bool.random(using: &random) {
                connections[c] = .free
                perform(pool.connectionReleased(c, at: now))
            } else {
                closeConnection(c)
            }
        case .multiplexed(var streams, let capacity, let draining):
            streams.remove(r)
            connections[c] = .multiplexed(streams: streams, capacity: capacity, draining: draining)
            if Int.random(in: 0..<4, using: &random) == 0 {
                // REFUSED_STREAM or above a GOAWAY's last stream: placed again.
                requests[r] = .waiting
                perform(pool.streamEnded(r, on: c, at: now))
                let previous = requeues[r, default: 0]
                requeues[r] = previous + 1
                perform(pool.requeue(r, previousRequeues: previous, timeout: Self.timeout, at: now))
            } else {
                end(r)
                perform(pool.streamEnded(r, on: c, at: now))
            }
            closeIfDrained(c)
        default:
            expect(false, "\(r) runs on \(c), which the model has as \(String(describing: connections[c]))")
        }
    }

    /// An HTTP/1.1 request finds its pooled connection stale and goes out again, once, on a
    /// connection of its own.
    private mutating func staleConnection() {
        let candidates = requests.compactMap { r, phase -> (R, C)? in
            guard case .running(let c) = phase, case .busy = connections[c], !staleRetried.contains(r) else { return nil }
            return (r, c)
        }.sorted { $0.0.value < $1.0.value }
        guard let (r, c) = candidates.randomElement(using: &random) else { return }
        note("  \(r) finds \(c) stale")
        staleRetried.insert(r)
        requests[r] = .waiting
        closeConnection(c)
        let action = pool.retryOnFreshConnection(r, timeout: Self.timeout, at: now)
        if !shutDown {
            guard case .open(let fresh) = action.connection else {
                expect(false, "a stale retry of \(r) opened no connection: \(action)")
                return
            }
            requests[r] = .dedicated(fresh)
            dedicatedConnections.insert(fresh)
            connections[fresh] = .opening
            expect(action.request == .wait(r, checkAt: now + Self.timeout), "a stale retry of \(r) did \(action)")
            waitChecks[r] = now + Self.timeout
        } else {
            perform(action)
        }
    }

    private mutating func idleConnectionCloses() {
        guard let c = connections.keys.filter({ connections[$0] == .free }).randomElement(using: &random) else { return }
        note("  \(c) closes")
        closeConnection(c)
    }

    private mutating func http2Change() {
        let multiplexed = connections.keys.filter { if case .multiplexed = connections[$0] { true } else { false } }
        guard let c = multiplexed.randomElement(using: &random),
              case .multiplexed(let streams, _, let draining) = connections[c] else { return }
        note("  \(c): \(connections[c]!)")
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            let capacity = Int.random(in: 0...4, using: &random)
            connections[c] = .multiplexed(streams: streams, capacity: capacity, draining: draining)
            perform(pool.capacityChanged(c, capacity: capacity, at: now))
        case 1:
            guard case .multiplexed(let streams, let capacity, false) = connections[c] else { return }
            connections[c] = .multiplexed(streams: streams, capacity: capacity, draining: true)
            perform(pool.connectionDraining(c))
            closeIfDrained(c)
        default:
            connectionLost(c)
        }
    }

    /// An HTTP/2 connection is lost, as `HTTP2ClientConnection` reports it: first that it takes
    /// nothing new, then the end of each of its streams, then the close.
    private mutating func connectionLost(_ c: C) {
        guard case .multiplexed(var streams, let capacity, let draining) = connections[c] else { return }
        if !draining {
            connections[c] = .multiplexed(streams: streams, capacity: capacity, draining: true)
            perform(pool.connectionDraining(c))
        }
        for r in streams.sorted(by: { $0.value < $1.value }) {
            streams.remove(r)
            connections[c] = .multiplexed(streams: streams, capacity: capacity, draining: true)
            end(r)
            perform(pool.streamEnded(r, on: c, at: now))
        }
        closeConnection(c)
    }

    private mutating func timePasses(by step: UInt64) {
        now += step
        for (r, due) in waitChecks.sorted(by: { ($0.value, $0.key.value) < ($1.value, $1.key.value) }) where due <= now {
            guard waitChecks[r] == due else { continue }
            waitChecks[r] = nil
            perform(pool.waitCheck(r, at: now))
        }
        if let due = sweepAt, due <= now {
            sweepAt = nil
            perform(pool.sweep(at: now))
        }
    }

    private mutating func shutDownPool() {
        guard !shutDown else { return }
        shutDown = true
        perform(pool.shutDown())
        expect(pool.requestArrived(R(value: -1), timeout: Self.timeout, at: now) == Machine.Action(request: .fail(R(value: -1), NativeErrors.shutDown)),
               "a request after shutdown did not fail at once")
        check()
        expect(requests.values.allSatisfy { $0 == .ended }, "requests outlived the shutdown: \(requests.filter { $0.value != .ended })")
        expect(pool.requests.isEmpty && pool.connectionCount == 0 && connections.isEmpty, "the pool holds something after shutdown")
    }

    /// Lets every connection settle and every request end, then every idle connection expire.
    private mutating func drain() {
        for _ in 0..<10_000 {
            if connections.values.contains(.opening) {
                openingConnectionSettles(failing: false)
            } else if requests.values.contains(where: \.isRunning) {
                someRequestEnds()
            } else if requests.values.contains(.waiting) || !waitChecks.isEmpty {
                timePasses(by: Self.second)
            } else {
                break
            }
            check()
        }
        expect(requests.values.allSatisfy { $0 == .ended }, "requests never ended: \(requests.filter { $0.value != .ended })")
        expect(pool.requests.isEmpty && pool.waitingCount == 0, "the machine still holds requests: \(pool.requests)")
        timePasses(by: Self.idleTimeout)
        timePasses(by: Self.idleTimeout)
        check()
        expect(pool.connectionCount == 0 && connections.isEmpty, "idle connections never expired: \(pool.connections)")
    }

    // MARK: The machine's actions, carried out as HostPool and its connections do

    private mutating func perform(_ action: Machine.Action) {
        if action != .none { note("  -> \(action.request) / \(action.connection)") }
        switch action.request {
        case .none:
            break
        case .execute(let r, let c):
            place(r, on: c)
        case .executeAll(let rs, let c):
            expect(rs.count > 1, "executeAll with \(rs.count) request(s)")
            for r in rs { place(r, on: c) }
        case .wait(let r, let due):
            expectPending(r, "wait")
            expect(due > now, "a wait check due now or in the past")
            if requests[r] == .waiting, !queueOrder.contains(r) { queueOrder.append(r) }
            waitChecks[r] = due
        case .fail(let r, _):
            expectPending(r, "fail")
            end(r)
        case .failAll(let rs, _):
            for r in rs {
                expectPending(r, "failAll")
                end(r)
            }
        case .abort(let r, let c, _):
            expect(requests[r] == .running(c), "abort of \(r) on \(c), which the model has as \(String(describing: requests[r]))")
            switch connections[c] {
            case .busy(r):
                end(r)
                closeConnection(c)
            case .multiplexed(var streams, let capacity, let draining):
                streams.remove(r)
                connections[c] = .multiplexed(streams: streams, capacity: capacity, draining: draining)
                end(r)
                perform(pool.streamEnded(r, on: c, at: now))
                closeIfDrained(c)
            default:
                expect(false, "abort on \(c), which carries no \(r)")
            }
        }
        switch action.connection {
        case .none:
            break
        case .open(let c):
            opened(c)
        case .openAll(let cs):
            expect(cs.count > 1, "openAll with \(cs.count) connection(s)")
            cs.forEach { opened($0) }
        case .rest(let c, let due):
            switch connections[c] {
            case .free: break
            case .multiplexed(let streams, _, _): expect(streams.isEmpty, "an HTTP/2 connection rests with streams")
            default: expect(false, "\(c) rests, but the model has it as \(String(describing: connections[c]))")
            }
            arm(due)
        case .close(let cs, let due):
            for c in cs {
                switch connections[c] {
                case .free:
                    break
                case .multiplexed(let streams, _, _) where streams.isEmpty:
                    break
                default:
                    // Only a shutdown closes a connection that is in use; its requests end with it.
                    expect(shutDown, "close of \(c), which the model has as \(String(describing: connections[c]))")
                    if case .busy(let r) = connections[c] { end(r) }
                    if case .multiplexed(let streams, _, _) = connections[c] { streams.forEach { end($0) } }
                }
                connections[c] = nil
                dedicatedConnections.remove(c)
            }
            arm(due)
        }
    }

    private mutating func opened(_ c: C) {
        expect(connections[c] == nil && pool.connections[c] == .connecting(dedicatedTo: nil),
               "open of \(c), which exists or is not for the queue")
        connections[c] = .opening
    }

    private mutating func place(_ r: R, on c: C) {
        switch requests[r] {
        case .waiting:
            if let first = queueOrder.first, queueOrder.contains(r) {
                expect(first == r, "\(r) was placed before \(first), which waited longer")
            }
        case .dedicated(let own):
            expect(own == c, "\(r) waited for \(own) but was placed on \(c)")
        default:
            expect(false, "\(r) was placed on \(c), but the model has it as \(String(describing: requests[r]))")
        }
        queueOrder.removeAll { $0 == r }
        switch connections[c] {
        case .free:
            connections[c] = .busy(r)
        case .multiplexed(var streams, let capacity, let draining):
            expect(streams.count < capacity, "\(c) took \(r) beyond its capacity of \(capacity)")
            streams.insert(r)
            connections[c] = .multiplexed(streams: streams, capacity: capacity, draining: draining)
        default:
            expect(false, "\(r) was placed on \(c), which the model has as \(String(describing: connections[c]))")
        }
        requests[r] = .running(c)
        waitChecks[r] = nil  // the exchange stops its wait check once placed
    }

    private mutating func closeConnection(_ c: C) {
        connections[c] = nil
        dedicatedConnections.remove(c)
        perform(pool.connectionClosed(c, error: nil))
    }

    /// An HTTP/2 connection after GOAWAY closes itself once its last stream ended.
    private mutating func closeIfDrained(_ c: C) {
        guard case .multiplexed(let streams, _, true) = connections[c], streams.isEmpty else { return }
        closeConnection(c)
    }

    private mutating func arm(_ due: UInt64?) {
        guard let due else { return }
        expect(sweepAt == nil, "the sweep was armed twice")
        sweepAt = due
    }

    private mutating func end(_ r: R) {
        terminals[r, default: 0] += 1
        expect(terminals[r] == 1, "\(r) ended \(terminals[r]!) times")
        requests[r] = .ended
        queueOrder.removeAll { $0 == r }
        waitChecks[r] = nil
    }

    private func expectPending(_ r: R, _ what: String) {
        expect(requests[r]?.isPending == true, "\(what) of \(r), which the model has as \(String(describing: requests[r]))")
    }

    // MARK: Checks

    /// What must hold between events.
    mutating func check() {
        for (r, phase) in requests {
            switch phase {
            case .waiting:
                expect(pool.requests[r].map { if case .waiting = $0 { true } else { false } } == true,
                       "\(r) waits in the model, the machine has \(String(describing: pool.requests[r]))")
            case .dedicated(let c):
                expect(pool.requests[r].map { if case .dedicated(c, _, _) = $0 { true } else { false } } == true,
                       "\(r) waits for \(c) in the model, the machine has \(String(describing: pool.requests[r]))")
            case .running(let c):
                expect(pool.requests[r] == .active(c) || shutDown, "\(r) runs on \(c) in the model, the machine has \(String(describing: pool.requests[r]))")
            case .ended:
                expect(pool.requests[r] == nil, "\(r) ended, yet the machine still holds it")
            }
        }
        expect(pool.requests.keys.allSatisfy { requests[$0] != nil }, "the machine holds a request the model never placed")
        expect(pool.waitingCount == queueOrder.count, "the machine has \(pool.waitingCount) waiting, the model \(queueOrder.count)")
        expect(Set(pool.connections.keys) == Set(connections.keys), "connections differ: \(pool.connections.keys.sorted { $0.value < $1.value }) against \(connections.keys.sorted { $0.value < $1.value })")
        let forQueue = connections.keys.filter { !dedicatedConnections.contains($0) }
        if !speaksHTTP2 {
            expect(forQueue.count <= maxConnections, "\(forQueue.count) connections for the queue, limit \(maxConnections)")
        } else {
            let live = connections.values.filter { if case .multiplexed(_, _, false) = $0 { true } else { false } }.count
            expect(live <= maxMultiplexed, "\(live) HTTP/2 connections take requests, limit \(maxMultiplexed)")
        }
        let openingForQueue = connections.filter { $0.value == .opening && !dedicatedConnections.contains($0.key) }.count
        expect(pool.connectingForQueue == openingForQueue || shutDown,
               "the machine counts \(pool.connectingForQueue) connection(s) opening for the queue, the model \(openingForQueue)")
        // A waiting request always has a connection coming, unless the limits are reached.
        if !queueOrder.isEmpty {
            let withRoom = connections.values.contains {
                if case .multiplexed(let streams, let capacity, false) = $0 { streams.count < capacity } else { false }
            }
            expect(pool.idleCount == 0 && !withRoom, "a request waits while a connection could take it")
            // HTTP/1.1: one connection coming for each, up to the limit; otherwise one at a time.
            let coming: Bool
            switch pool.originProtocol {
            case .http1:
                coming = pool.connectingForQueue >= queueOrder.count || pool.connectionCount >= maxConnections
            case .unknown:
                coming = pool.connectingForQueue > 0 || pool.connectionCount >= maxConnections
            case .http2:
                coming = pool.connectingForQueue > 0 || pool.multiplexedIDs.count >= maxMultiplexed
            }
            expect(coming, "\(queueOrder.count) request(s) wait, \(pool.connectingForQueue) connection(s) coming")
        }
    }

    private func expect(_ condition: Bool, _ message: @autoclosure () -> String,
                        sourceLocation: SourceLocation = #_sourceLocation) {
        guard !condition else { return }
        Issue.record("\(label): \(message())\nlast events:\n\(history.joined(separator: "\n"))", sourceLocation: sourceLocation)
    }
}

@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// An `async` caller's request run in the caller's own task (``AwaitedRequestPlacement``): every
/// way a request can end from outside that task stops what its pipeline waits on, with exactly
/// one outcome. The connections here pin the placement, which is also the default.
@Suite("Requests in the caller's task", .timeLimit(.minutes(2)))
struct CallersTaskTests {
    /// Runs a test against a fresh ``TestServer`` under a ``LeakCheck`` that watches its port.
    func withServer(sourceLocation: SourceLocation = #_sourceLocation,
                    _ body: (TestServer, LeakCheck) async throws -> Void) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck(sourceLocation: sourceLocation) { leaks throws in
            leaks.watch(server)
            try await body(server, leaks)
        }
    }

    /// A native connection to `server` whose `async` requests run in their callers' tasks.
    func connection(_ server: TestServer, _ leaks: LeakCheck, timeout: Duration = .seconds(30), retry: RetryPolicy = .never,
                    deadline: Duration? = nil, monitor: EventMonitor? = nil) -> HTTPConnection {
        leaks.connection(server, .native, timeout: timeout) { configuration in
            configuration.awaitedRequestPlacement = .callersTask
            configuration.retryPolicy = retry
            configuration.deadline = deadline
            configuration.eventMonitor = monitor
        }
    }

    /// Waits until `count` requests are registered, and returns their ids.
    func activeIDs(_ connection: HTTPConnection, count: Int) async -> [RequestID] {
        #expect(await eventually { connection.activeRequestIDs.count == count })
        return connection.activeRequestIDs
    }

    /// Records the monitor's events: which requests started (were prepared for the network), and
    /// which backoffs began.
    final class Monitored: Sendable {
        private let events = Locked<[EventMonitor.Event]>([])
        var monitor: EventMonitor { EventMonitor { [events] event in events.withLock { $0.append(event) } } }
        var started: Int { events.withLock { $0.filter { if case .started = $0 { true } else { false } }.count } }
        var retries: Int { events.withLock { $0.filter { if case .retrying = $0 { true } else { false } }.count } }
    }

    @Test("placement: in the caller's task by default, alone in flight or not; on its own task when pinned there")
    func placementIsUsed() async throws {
        try await withServer { server, leaks throws in
            for (round, placement) in [AwaitedRequestPlacement?.none, .callersTask, .ownTask].enumerated() {
                // The monitor hears the start in the task that runs the request's pipeline.
                let starters = Locked<[Int]>([])
                let connection = leaks.connection(server, .native) { configuration in
                    if let placement { configuration.awaitedRequestPlacement = placement }
                    configuration.eventMonitor = EventMonitor { event in
                        guard case .started = event else { return }
                        let task = withUnsafeCurrentTask { $0?.hashValue } ?? 0
                        starters.withLock { $0.append(task) }
                    }
                }
                let caller = withUnsafeCurrentTask { $0?.hashValue } ?? -1
                _ = try await connection.get("/echo")
                let busy = connection.get("/fault/stall") { _ in }
                #expect(await eventually { server.requestCount(path: "/fault/stall") == round + 1 })
                _ = try await connection.get("/echo")
                connection.cancel(busy)
                #expect(await eventually { connection.activeRequestIDs.isEmpty })
                let runs = starters.withLock { $0 }  // the first request, the one in flight, the second
                #expect(runs.count == 3)
                guard runs.count == 3 else { continue }
                let inCaller = [runs[0] == caller, runs[2] == caller]
                switch placement {
                case nil, .callersTask: #expect(inCaller == [true, true], "alone in flight and with another in flight")
                case .ownTask: #expect(inCaller == [false, false])
                }
            }
        }
    }

    @Test("cancel(id) ends a request waiting on the server, once, and the pool still serves")
    func cancelByID() async throws {
        try await withServer { server, leaks throws in
            let connection = connection(server, leaks)
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let caller = Task { try await connection.get("/fault/stall") }
            #expect(await eventually { server.requestCount(path: "/fault/stall") == 1 })
            let ids = await activeIDs(connection, count: 1)
            let clock = ContinuousClock()
            let start = clock.now
            DispatchQueue.concurrentPerform(iterations: 50) { _ in connection.cancel(ids[0]) }
            await #expect(throws: HTTPConnectionError.cancelled) { try await caller.value }
            // A hang guard, not a timing claim: without the interruption, the caller would wait
            // for the 30 s timeout.
            #expect(clock.now - start < .seconds(10))
            #expect(await eventually { recorder.terminalCount == 1 })
            #expect(recorder.events.filter(\.isTerminal) == [.cancel(ids[0])])
            #expect(try await connection.get("/echo").status == .ok)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("cancelling the caller's task ends its request with .cancelled")
    func callerCancelled() async throws {
        try await withServer { server, leaks throws in
            let connection = connection(server, leaks)
            let caller = Task { try await connection.get("/fault/stall") }
            #expect(await eventually { server.requestCount(path: "/fault/stall") == 1 })
            caller.cancel()
            await #expect(throws: HTTPConnectionError.cancelled) { try await caller.value }
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("cancelAll from many threads while 20 requests race in: each caller gets one outcome")
    func cancelAllRace() async throws {
        try await withServer { server, leaks throws in
            let connection = connection(server, leaks)
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let clock = ContinuousClock()
            for round in 0..<5 {
                let stalledBefore = server.requestCount(path: "/fault/stall")
                let returned = Locked(0)
                let callers = (0..<20).map { index in
                    Task { () -> String in
                        defer { returned.withLock { $0 += 1 } }
                        do {
                            return "\(try await connection.get(index.isMultiple(of: 2) ? "/echo" : "/fault/stall").status.code)"
                        } catch {
                            return (error as? HTTPConnectionError)?.kindName ?? "\(error)"
                        }
                    }
                }
                // The first rounds cancel once every request is registered (some still on their
                // way out); the later ones once the stalled requests hold all 8 connections of
                // the pool (the other two wait in its queue).
                if round < 2 {
                    #expect(await eventually { connection.activeRequestIDs.count + returned.withLock { $0 } == 20 })
                } else {
                    #expect(await eventually { server.requestCount(path: "/fault/stall") >= stalledBefore + 8 })
                }
                let start = clock.now
                DispatchQueue.concurrentPerform(iterations: 8) { _ in connection.cancelAll() }
                for caller in callers {
                    let outcome = await caller.value
                    #expect(outcome == "200" || outcome == "cancelled", "\(outcome)")
                }
                #expect(clock.now - start < .seconds(10), "the stalled requests waited for their 30 s timeout")
            }
            #expect(await eventually { recorder.terminalCount == 100 })
            try await Task.sleep(for: .milliseconds(100))  // nothing more may arrive
            #expect(recorder.terminalCount == 100)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("a caller cancelled before it calls never reaches the server, with or without a delegate (200 tries)")
    func cancelledCallerNeverSends() async throws {
        try await withServer { server, leaks throws in
            let monitored = Monitored()
            let connection = connection(server, leaks, monitor: monitored.monitor)
            let recorder = leaks.track(EventRecorder())
            for round in 0..<200 {
                if round == 100 { connection.delegate = recorder }
                let caller = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await connection.get("/echo/never")
                }
                await #expect(throws: HTTPConnectionError.cancelled) { try await caller.value }
            }
            #expect(await eventually { recorder.terminalCount == 100 })
            #expect(recorder.events.allSatisfy { if case .cancel = $0 { true } else { false } }, "\(recorder.events)")
            #expect(monitored.started == 0, "a cancelled caller's request was prepared for the network")
            #expect(server.requestCount(path: "/echo/never") == 0)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("a request cancelled from the delegate's willSend never reaches the server")
    func cancelledInWillSend() async throws {
        try await withServer { server, leaks throws in
            let monitored = Monitored()
            let connection = connection(server, leaks, monitor: monitored.monitor)
            let canceller = leaks.track(InterveningDelegate(willSend: { connection, id in connection.cancel(id) }))
            connection.delegate = canceller
            await #expect(throws: HTTPConnectionError.cancelled) { try await connection.get("/echo/never") }
            #expect(await eventually { canceller.recorder.terminalCount == 1 })
            #expect(canceller.recorder.events.filter(\.isTerminal).count == 1)
            #expect(!canceller.recorder.events.contains { if case .didStart = $0 { true } else { false } },
                    "the delegate heard a start: \(canceller.recorder.events)")
            #expect(monitored.started == 0, "the cancelled request was prepared for the network")
            try await Task.sleep(for: .milliseconds(100))
            #expect(server.requestCount(path: "/echo/never") == 0)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("a caller cancelled while the delegate is slow to answer willSend or willRedirect returns at once, and the request goes no further",
          arguments: [InterveningDelegate.Point.willSend, .willRedirect])
    func cancelledDuringSlowDelegate(at point: InterveningDelegate.Point) async throws {
        try await withServer { server, leaks throws in
            server.route("/moved") { _ in .response(status: 302, headers: [("Location", "/echo/after")]) }
            let connection = connection(server, leaks)
            let entered = Locked<RequestID?>(nil)
            let release = DispatchSemaphore(value: 0)
            let slow: @Sendable (HTTPConnection, RequestID) -> Void = { _, id in
                entered.withLock { $0 = id }
                release.wait()  // holds the callback queue, as a delegate doing slow work would
            }
            let delegate = leaks.track(point == .willSend ? InterveningDelegate(willSend: slow) : InterveningDelegate(willRedirect: slow))
            connection.delegate = delegate
            var released = false
            defer { if !released { release.signal() } }
            let returned = Locked(false)
            let caller = Task {
                defer { returned.withLock { $0 = true } }
                return try await connection.get("/moved")
            }
            #expect(await eventually { entered.withLock { $0 } != nil })
            let id = try #require(entered.withLock { $0 })
            connection.cancel(id)
            // The delegate is still holding the callback queue.
            #expect(await eventually(timeout: .seconds(10)) { returned.withLock { $0 } }, "the caller waited for the delegate")
            release.signal()
            released = true
            await #expect(throws: HTTPConnectionError.cancelled) { try await caller.value }
            #expect(await eventually { delegate.recorder.terminalCount == 1 })
            try await Task.sleep(for: .milliseconds(100))  // nothing more may arrive, nor be sent
            #expect(delegate.recorder.events.filter(\.isTerminal).count == 1)
            let heardStart = delegate.recorder.events.contains { if case .didStart = $0 { true } else { false } }
            #expect(heardStart == (point == .willRedirect), "\(delegate.recorder.events)")
            #expect(server.requestCount(path: "/moved") == (point == .willSend ? 0 : 1))
            #expect(server.requestCount(path: "/echo/after") == 0)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("cancel(id) ends a retry's backoff at once, with no second attempt")
    func cancelDuringBackoff() async throws {
        try await withServer { server, leaks throws in
            server.route("/busy") { _ in .text(status: 503, "busy") }
            let monitored = Monitored()
            let connection = connection(server, leaks, retry: .custom { _ in .retry(after: .seconds(60)) },
                                        monitor: monitored.monitor)
            let caller = Task { try await connection.get("/busy") }
            #expect(await eventually { monitored.retries == 1 })  // the backoff begins
            let ids = await activeIDs(connection, count: 1)
            connection.cancel(ids[0])
            let clock = ContinuousClock()
            let start = clock.now
            await #expect(throws: HTTPConnectionError.cancelled) { try await caller.value }
            #expect(clock.now - start < .seconds(30), "the 60 s backoff was not cut")
            #expect(server.requestCount(path: "/busy") == 1)
        }
    }

    @Test("cancel(id) ends a wait in the re-authentication queue; the refresh goes on for the others")
    func cancelDuringAuthenticationWait() async throws {
        try await withServer { server, leaks throws in
            server.route("/private/*") { request in
                .response(status: request.value(for: "Authorization") == "Bearer fresh" ? 200 : 401)
            }
            let connection = connection(server, leaks)
            let release = AwaitedValue<Void>()
            connection.authenticate(matching: .everything, with: GatedAuthenticator(release: release))
            let session = try #require(connection.authentication.session(for: server.url("/private/first")))
            let first = Task { try await connection.get("/private/first").status.code }
            #expect(await eventually { session.waitingCount == 1 })  // rejected, waiting for its refresh
            let waiting = Task { try await connection.get("/private/waiting") }
            #expect(await eventually { session.waitingCount == 2 })  // queued behind the refresh
            let waitingID = connection.activeRequestIDs.max()!
            connection.cancel(waitingID)
            #expect(await eventually(timeout: .seconds(10)) { session.waitingCount == 1 }, "the cancelled request still waits")
            release.fill(())
            await #expect(throws: HTTPConnectionError.cancelled) { try await waiting.value }
            #expect(try await first.value == 200)
            #expect(server.requestCount(path: "/private/waiting") == 0)
        }
    }

    @Test("the deadline cuts the exchange, a retry's backoff and an authentication wait")
    func deadline() async throws {
        try await withServer { server, leaks throws in
            server.route("/busy") { _ in .text(status: 503, "busy") }
            server.route("/private") { _ in .response(status: 401) }
            // Hang guards, not timing claims: without the interruption, each would wait 30 or 60 s.
            let clock = ContinuousClock()
            var start = clock.now
            let stalled = connection(server, leaks, deadline: .milliseconds(300))
            await #expect(throws: HTTPConnectionError.deadlineExceeded) { try await stalled.get("/fault/stall") }
            #expect(clock.now - start < .seconds(10), "the exchange outlived its deadline")
            start = clock.now
            let retrying = connection(server, leaks, retry: .custom { _ in .retry(after: .seconds(60)) }, deadline: .seconds(2))
            await #expect(throws: HTTPConnectionError.deadlineExceeded) { try await retrying.get("/busy") }
            #expect(clock.now - start < .seconds(10), "the backoff outlived the deadline")
            #expect(server.requestCount(path: "/busy") == 1)
            start = clock.now
            let signingIn = connection(server, leaks, deadline: .milliseconds(300))
            signingIn.authenticate(matching: .everything, with: .basic { @Sendable _ in
                try? await Task.sleep(for: .seconds(60))  // a user who never answers the sign-in screen
                return nil
            })
            await #expect(throws: HTTPConnectionError.deadlineExceeded) { try await signingIn.get("/private") }
            #expect(clock.now - start < .seconds(10), "the authentication wait outlived the deadline")
            for connection in [stalled, retrying, signingIn] { #expect(connection.activeRequestIDs.isEmpty) }
        }
    }
}

/// A delegate that runs a step of the test's in `willSend` or `willRedirect` (cancel the request,
/// hold the callback queue), and records the events.
final class InterveningDelegate: HTTPConnectionDelegate, Sendable {
    /// Where the step runs.
    enum Point: Sendable, CustomStringConvertible {
        case willSend, willRedirect
        var description: String { self == .willSend ? "willSend" : "willRedirect" }
    }

    let recorder = EventRecorder()
    private let point: Point
    private let step: @Sendable (HTTPConnection, RequestID) -> Void

    init(willSend step: @escaping @Sendable (HTTPConnection, RequestID) -> Void) {
        (point, self.step) = (.willSend, step)
    }

    init(willRedirect step: @escaping @Sendable (HTTPConnection, RequestID) -> Void) {
        (point, self.step) = (.willRedirect, step)
    }

    func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest {
        if point == .willSend { step(connection, id) }
        return recorder.connection(connection, willSend: request, id: id)
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, willRedirect hop: RedirectHop) -> RedirectAction {
        if point == .willRedirect { step(connection, id) }
        return .follow
    }

    func connection(_ connection: HTTPConnection, didStart id: RequestID) {
        recorder.connection(connection, didStart: id)
    }

    func connection(_ connection: HTTPConnection, didCancel id: RequestID) {
        recorder.connection(connection, didCancel: id)
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
        recorder.connection(connection, request: id, didFinishWith: response)
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError) {
        recorder.connection(connection, request: id, didFailWith: error)
    }
}

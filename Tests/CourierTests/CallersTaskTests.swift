@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// An `async` caller's request run in the caller's own task (``AwaitedRequestPlacement``): every
/// way a request can end from outside that task stops what its pipeline waits on, with exactly
/// one outcome. The connections here pin the placement; by default it is used while other
/// requests are in flight.
@Suite("Requests in the caller's task")
struct CallersTaskTests {
    /// A native connection to `server` whose `async` requests run in their callers' tasks.
    func connection(_ server: TestServer, _ leaks: LeakCheck, timeout: Duration = .seconds(30), retry: RetryPolicy = .never,
                    deadline: Duration? = nil) -> HTTPConnection {
        leaks.connection(server, .native, timeout: timeout) { configuration in
            configuration.awaitedRequestPlacement = .callersTask
            configuration.retryPolicy = retry
            configuration.deadline = deadline
        }
    }

    /// Waits until `count` requests are registered, and returns their ids.
    func activeIDs(_ connection: HTTPConnection, count: Int) async -> [RequestID] {
        #expect(await eventually { connection.activeRequestIDs.count == count })
        return connection.activeRequestIDs
    }

    @Test("automatic placement: in the caller's task while another request is in flight, in its own otherwise; pinned ones as pinned")
    func placementIsUsed() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            for (round, placement) in [AwaitedRequestPlacement.automatic, .callersTask, .ownTask].enumerated() {
                // The monitor hears the start in the task that runs the request's pipeline.
                let starters = Locked<[Int]>([])
                let connection = leaks.connection(server, .native) { configuration in
                    configuration.awaitedRequestPlacement = placement
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
                case .automatic: #expect(inCaller == [false, true], "alone: own task; with another in flight: caller's")
                case .callersTask: #expect(inCaller == [true, true])
                case .ownTask: #expect(inCaller == [false, false])
                }
            }
        }
    }

    @Test("cancel(id) ends a request waiting on the server, once, and the pool still serves")
    func cancelByID() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
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
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
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
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
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
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = connection(server, leaks)
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
            #expect(server.requestCount(path: "/echo/never") == 0)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("a request cancelled from the delegate's willSend never reaches the server")
    func cancelledInWillSend() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = connection(server, leaks)
            let canceller = leaks.track(CancellingDelegate())
            connection.delegate = canceller
            await #expect(throws: HTTPConnectionError.cancelled) { try await connection.get("/echo/never") }
            #expect(await eventually { canceller.recorder.terminalCount == 1 })
            #expect(canceller.recorder.events.filter(\.isTerminal).count == 1)
            try await Task.sleep(for: .milliseconds(100))
            #expect(server.requestCount(path: "/echo/never") == 0)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("cancel(id) ends a retry's backoff at once, with no second attempt")
    func cancelDuringBackoff() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            server.route("/busy") { _ in .text(status: 503, "busy") }
            let connection = connection(server, leaks, retry: .custom { _ in .retry(after: .seconds(60)) })
            let caller = Task { try await connection.get("/busy") }
            #expect(await eventually { server.requestCount(path: "/busy") == 1 })
            let ids = await activeIDs(connection, count: 1)
            try await Task.sleep(for: .milliseconds(50))  // into the backoff
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
        let auth = try AuthServer()
        defer { auth.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(auth.server)
            auth.state.withLock { $0.tokenDelay = .milliseconds(800) }
            let connection = connection(auth.server, leaks)
            connection.authenticate(matching: .everything, with: auth.bearer())
            let first = Task { try await connection.get("/protected/first").status.code }
            #expect(await eventually { auth.server.requestCount(path: "/token") == 1 })  // the refresh is running
            let waiting = Task { try await connection.get("/protected/waiting") }
            #expect(await eventually { connection.activeRequestIDs.count == 2 })
            let waitingID = connection.activeRequestIDs.max()!
            connection.cancel(waitingID)
            await #expect(throws: HTTPConnectionError.cancelled) { try await waiting.value }
            #expect(try await first.value == 200)
            #expect(auth.server.requestCount(path: "/protected/waiting") == 0)
            #expect(auth.tokenCalls == 1)
        }
    }

    @Test("the deadline cuts the exchange, a retry's backoff and an authentication wait")
    func deadline() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            server.route("/busy") { _ in .text(status: 503, "busy") }
            server.route("/private") { _ in .response(status: 401) }
            let stalled = connection(server, leaks, deadline: .milliseconds(300))
            await #expect(throws: HTTPConnectionError.deadlineExceeded) { try await stalled.get("/fault/stall") }
            let retrying = connection(server, leaks, retry: .custom { _ in .retry(after: .seconds(60)) }, deadline: .seconds(2))
            await #expect(throws: HTTPConnectionError.deadlineExceeded) { try await retrying.get("/busy") }
            #expect(server.requestCount(path: "/busy") == 1)
            let signingIn = connection(server, leaks, deadline: .milliseconds(300))
            signingIn.authenticate(matching: .everything, with: .basic { @Sendable _ in
                try? await Task.sleep(for: .seconds(60))  // a user who never answers the sign-in screen
                return nil
            })
            await #expect(throws: HTTPConnectionError.deadlineExceeded) { try await signingIn.get("/private") }
            for connection in [stalled, retrying, signingIn] { #expect(connection.activeRequestIDs.isEmpty) }
        }
    }
}

/// A delegate that cancels every request in `willSend`, and records the events.
final class CancellingDelegate: HTTPConnectionDelegate, Sendable {
    let recorder = EventRecorder()

    func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest {
        connection.cancel(id)
        return recorder.connection(connection, willSend: request, id: id)
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

import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Cancellation races (reliability cases I1–I5): always exactly one terminal callback.
@Suite("Cancellation")
struct CancellationTests {
    @Test("I4 cancel called 100 times from many threads while the response races in: one terminal callback", arguments: TransportUnderTest.allCases)
    func concurrentCancels(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            var ids: [RequestID] = []
            for round in 0..<20 {
                // Alternate between a response that is already on its way and one still pending.
                let target = round.isMultiple(of: 2) ? "/echo" : "/delay/5"
                let id = connection.get(target, onSuccess: recorder.onSuccess, onError: recorder.onError)
                ids.append(id)
                DispatchQueue.concurrentPerform(iterations: 100) { _ in connection.cancel(id) }
            }
            let count = ids.count
            #expect(await eventually { recorder.closureTerminalCount == count && recorder.terminalCount == count })
            try await Task.sleep(for: .milliseconds(100))  // nothing more may arrive
            for id in ids {
                let terminals = recorder.events.filter { event in
                    switch event {
                    case .finish(id, _), .fail(id, _), .cancel(id): true
                    default: false
                    }
                }
                #expect(terminals.count == 1, "request \(id): \(terminals)")
            }
            #expect(recorder.closureTerminalCount == ids.count)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("I1 cancel right after start: the request ends cancelled and the pool still serves", arguments: TransportUnderTest.allCases)
    func cancelImmediately(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let id = connection.get("/delay/300", onSuccess: recorder.onSuccess, onError: recorder.onError)
            connection.cancel(id)
            #expect(await eventually { recorder.closureTerminalCount == 1 })
            #expect(recorder.events.contains(.cancel(id)))
            #expect(recorder.events.contains(.closureError("cancelled")))
            #expect(try await connection.get("/echo").status == .ok)
        }
    }

    @Test("I2 cancel while waiting for the response ends promptly", arguments: TransportUnderTest.allCases)
    func cancelWhileWaiting(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport, timeout: .seconds(30))
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let id = connection.get("/fault/stall", onSuccess: recorder.onSuccess, onError: recorder.onError)
            #expect(await eventually { server.requestCount(path: "/fault/stall") == 1 })
            let clock = ContinuousClock()
            let start = clock.now
            connection.cancel(id)
            #expect(await eventually { recorder.closureTerminalCount == 1 })
            #expect(clock.now - start < .seconds(10))
            #expect(recorder.events.filter(\.isTerminal) == [.cancel(id)])
        }
    }

    @Test("I3 cancel from inside the request's own didStart callback", arguments: TransportUnderTest.allCases)
    func cancelFromOwnCallback(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let recorder = leaks.track(EventRecorder())
            // Weakly: the connection keeps its last request's closures (for retry()), so a strong
            // capture would be a cycle.
            // The server never answers: only the cancel can end the request (a late one would
            // end it with a timeout instead, and fail the test).
            let id = connection.get("/fault/stall", onDidStart: { [weak connection] id in
                recorder.onDidStart(id)
                connection?.cancel(id)
            }, onSuccess: recorder.onSuccess, onError: recorder.onError)
            #expect(await eventually { recorder.closureTerminalCount == 1 })
            try await Task.sleep(for: .milliseconds(300))
            #expect(recorder.events == [.closureStart(id), .closureError("cancelled")])
        }
    }

    @Test("I5 cancel after the response was delivered: no second terminal callback", arguments: TransportUnderTest.allCases)
    func cancelAfterFinish(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let id = connection.get("/echo", onSuccess: recorder.onSuccess, onError: recorder.onError)
            #expect(await eventually { recorder.closureTerminalCount == 1 })
            connection.cancel(id)
            connection.cancelAll()
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.terminalCount == 1)
            #expect(recorder.closureTerminalCount == 1)
            #expect(recorder.events.contains(.finish(id, 200)))
        }
    }

    @Test("cancelAll cancels every request in flight, each once", arguments: TransportUnderTest.allCases)
    func cancelAll(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport, timeout: .seconds(30))
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let ids = (0..<10).map { _ in connection.get("/fault/stall", onSuccess: recorder.onSuccess, onError: recorder.onError) }
            #expect(connection.activeRequestIDs.count == 10)
            connection.cancelAll()
            #expect(await eventually { recorder.terminalCount == 10 && recorder.closureTerminalCount == 10 })
            #expect(Set(recorder.events.filter(\.isTerminal)) == Set(ids.map { .cancel($0) }))
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("cancelling the Swift task cancels an async request", arguments: TransportUnderTest.allCases)
    func taskCancellation(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, transport, timeout: .seconds(30))
            let task = Task { try await connection.get("/fault/stall") }
            #expect(await eventually { server.requestCount(path: "/fault/stall") == 1 })
            task.cancel()
            let result = await task.result
            #expect(throws: HTTPConnectionError.cancelled) { try result.get() }
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("an async caller cancelled before it calls never reaches the server, with or without a delegate (200 tries)",
          arguments: TransportUnderTest.allCases)
    func cancelledCallerNeverSends(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let recorder = leaks.track(EventRecorder())
            // The first half of the rounds without a delegate (the request can reach the transport
            // at once), the second with one (its start events take a trip to the callback queue).
            for round in 0..<200 {
                if round == 100 { connection.delegate = recorder }
                let task = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await connection.get("/echo/never")
                }
                await #expect(throws: HTTPConnectionError.cancelled) { try await task.value }
            }
            #expect(await eventually { recorder.terminalCount == 100 })
            #expect(recorder.events.allSatisfy { if case .cancel = $0 { true } else { false } }, "\(recorder.events)")
            #expect(try await connection.get("/echo/after").status.code == 200)
            #expect(server.requestCount(path: "/echo/never") == 0)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }
}

extension EventRecorder.Event: Hashable {
    func hash(into hasher: inout Hasher) { hasher.combine(description) }
}

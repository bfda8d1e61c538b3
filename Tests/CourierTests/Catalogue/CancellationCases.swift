import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Reliability catalogue, section I: cancellation races, on both transports. Each cancelled
/// request ends with exactly one terminal callback (`onError(.cancelled)` and the delegate's
/// `didCancel`), or with its response when that won the race, never both.
@Suite("Catalogue I: cancellation races")
struct CancellationCases {
    @Test("I1 cancel before the request starts: the server sees nothing", arguments: TransportUnderTest.allCases)
    func beforeStart(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/delay/300"), during: { context, ids in
            context.connection.cancel(ids[0])
            // An async caller whose task is cancelled before it calls never reaches the server.
            let connection = context.connection
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await connection.get("/echo/never")
            }
            await #expect(throws: HTTPConnectionError.cancelled) { try await task.value }
        })
        #expect(outcome.error == .cancelled, "\(outcome.result)")
        #expect(server.requestCount(path: "/echo/never") == 0)
    }

    @Test("I2 cancel during connect, while sending, while reading the body", arguments: TransportUnderTest.allCases)
    func midFlight(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        let silent = try SilentListener()
        defer { silent.close() }
        let fillers = ProcessSockets.connected(toPort: blackhole.port)
        let requests = [HTTPRequest(.get, blackhole.url.appendingPathComponent("connect").absoluteString),
                        HTTPRequest(.post, silent.url.appendingPathComponent("upload").absoluteString,
                                    body: .data(Data(count: 64 << 20))),
                        HTTPRequest(.get, "/fault/stall-body")]
        let clock = ContinuousClock()
        let start = clock.now
        let outcomes = try await runCase(transport, on: server, requests, timeout: .seconds(60), during: { context, ids in
            context.leaks.watch(port: blackhole.port, baseline: fillers)
            context.leaks.watch(port: silent.port)
            #expect(await eventually { server.requestCount(path: "/fault/stall-body") == 1 && ProcessSockets.connected(toPort: silent.port) == 1 })
            try await Task.sleep(for: .milliseconds(300))  // the upload fills the socket buffers and waits
            for id in ids { context.connection.cancel(id) }
            silent.close()
        })
        for outcome in outcomes {
            #expect(outcome.error == .cancelled, "\(outcome.result)")
        }
        #expect(clock.now - start < .seconds(40))  // a hang guard below the 60 s timeout
    }

    @Test("I3 cancel from inside the request's own callbacks", arguments: TransportUnderTest.allCases)
    func fromOwnCallback(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        final class CancellingDelegate: HTTPConnectionDelegate {
            func connection(_ connection: HTTPConnection, didStart id: RequestID) { connection.cancel(id) }
        }
        try await withLeakCheck { leaks in
            let connection = leaks.connection(server, transport)
            let recorder = leaks.track(EventRecorder())
            let delegate = leaks.track(CancellingDelegate())
            connection.delegate = delegate
            // From its own didStart (delegate) …
            let first = connection.get("/delay/300", onSuccess: recorder.onSuccess, onError: recorder.onError)
            // … and from its own onDidStart closure.
            let second = connection.get("/delay/300", onDidStart: { [weak connection] in connection?.cancel($0) },
                                        onSuccess: recorder.onSuccess, onError: recorder.onError)
            #expect(await eventually { recorder.closureTerminalCount == 2 })
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.events == [.closureError("cancelled"), .closureError("cancelled")])
            #expect(first != second)
            connection.delegate = nil  // it would cancel the next request too
            #expect(try await connection.get("/echo").status == .ok)
        }
    }

    @Test("I4 cancel() called 100 times at once from many threads: one terminal callback", arguments: TransportUnderTest.allCases)
    func concurrentCancels(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // Half of them have their response on the way already, so cancel races with delivery.
        let requests = (0..<20).map { HTTPRequest(.get, $0.isMultiple(of: 2) ? "/echo" : "/delay/5") }
        let outcomes = try await runCase(transport, on: server, requests, during: { context, ids in
            for id in ids {
                DispatchQueue.concurrentPerform(iterations: 100) { _ in context.connection.cancel(id) }
            }
        })
        for outcome in outcomes {
            #expect(outcome.error == .cancelled || outcome.status == 200, "\(outcome.result)")
        }
    }

    @Test("I5 cancel after the response was delivered: no second terminal callback", arguments: TransportUnderTest.allCases)
    func afterDelivery(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/echo"), during: { context, ids in
            #expect(await eventually { context.recorder.closureTerminalCount == 1 })
            for _ in 0..<10 { context.connection.cancel(ids[0]) }
            context.connection.cancelAll()
        })
        #expect(outcome.status == 200, "\(outcome.result)")
    }

    @Test("I6 an unmanaged request is cancelled silently when its connection is released; a managed one completes alone", arguments: TransportUnderTest.allCases)
    func lifetimes(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let recorder = EventRecorder()
        await withLeakCheck { leaks in
            var connection: HTTPConnection? = leaks.connection(server, transport, timeout: .seconds(30))
            _ = connection?.get("/fault/stall", lifetime: .unmanaged, onSuccess: recorder.onSuccess, onError: recorder.onError)
            #expect(await eventually { server.requestCount(path: "/fault/stall") == 1 })
            connection = nil  // the stalled request is cancelled, its socket closed, and no callback fires
            #expect(await eventually { server.connectionsOpen == 0 })
        }
        #expect(recorder.events.isEmpty, "\(recorder.events)")

        await withLeakCheck { leaks in
            _ = leaks.connection(server, transport).get("/delay/150", onSuccess: recorder.onSuccess, onError: recorder.onError)
            #expect(await eventually { recorder.closureTerminalCount == 1 })
        }
        #expect(recorder.events == [.closureSuccess(200)])
    }
}

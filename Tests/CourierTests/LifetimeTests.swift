import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Managed and unmanaged requests (reliability case I6) and leak checks (K1).
@Suite("Lifetimes")
struct LifetimeTests {
    @Test("I6 an unmanaged request is cancelled when its connection is released: the server sees the socket close and no callback fires", arguments: TransportUnderTest.allCases)
    func unmanagedCancelledOnRelease(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let sharedTransport = leaks.transport(transport)  // outlives the connection, so only Courier's cancel can close the socket
            let recorder = leaks.track(EventRecorder())
            var connection: HTTPConnection? = leaks.track(HTTPConnection(baseURL: server.baseURL,
                                                                         configuration: .init(timeout: .seconds(30), transport: sharedTransport)))
            weak let weakConnection = connection
            connection?.delegate = recorder
            connection?.get("/fault/stall", lifetime: .unmanaged, onDidStart: recorder.onDidStart,
                            onSuccess: recorder.onSuccess, onError: recorder.onError)
            #expect(await eventually { server.requestCount(path: "/fault/stall") == 1 })
            #expect(await eventually { !recorder.events.isEmpty })  // didStart arrived
            let before = recorder.events
            connection = nil
            #expect(weakConnection == nil)
            #expect(await eventually { server.connectionsOpen == 0 })
            try await Task.sleep(for: .milliseconds(200))
            #expect(recorder.events == before)
            #expect(recorder.terminalCount == 0 && recorder.closureTerminalCount == 0)
        }
    }

    @Test("I6 an unmanaged request streamed by an async caller: once the caller releases the connection, the body it is reading ends with cancelled, and the server sees the socket close", arguments: TransportUnderTest.allCases)
    func unmanagedStreamCancelledOnRelease(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/head-then-stall") { _ in
            .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nfirst"), .stall])
        }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let sharedTransport = leaks.transport(transport)  // outlives the connection, so only Courier's cancel can close the socket
            var connection: HTTPConnection? = leaks.track(HTTPConnection(baseURL: server.baseURL,
                                                                         configuration: .init(timeout: .seconds(30), transport: sharedTransport)))
            var request = HTTPRequest(.get, "/head-then-stall")
            request.lifetime = .unmanaged
            let response = try await connection!.stream(request)
            #expect(response.status.code == 200)
            connection = nil
            var received = Data()
            do {
                for try await chunk in response.body { received.append(chunk) }
                Issue.record("the body ended normally after \(received.count) bytes")
            } catch {
                #expect((error as? HTTPConnectionError) == .cancelled, "\(error)")
            }
            #expect(await eventually { server.connectionsOpen == 0 })
        }
    }

    @Test("I6 a managed request completes while no reference to its connection is held, then the connection is freed", arguments: TransportUnderTest.allCases)
    func managedCompletesWithoutReference(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            leaks.watch(server)
            let recorder = leaks.track(EventRecorder())
            let weakConnection = WeakReference<HTTPConnection>()
            do {
                let connection = leaks.connection(server, transport)
                weakConnection.value = connection
                connection.delegate = recorder
                connection.get("/delay/150", onSuccess: recorder.onSuccess, onError: recorder.onError)
            }
            #expect(await eventually { recorder.closureTerminalCount == 1 })
            #expect(recorder.events.contains(.closureSuccess(200)))
            #expect(recorder.terminalCount == 1)  // the delegate heard it too
            #expect(await eventually { weakConnection.value == nil })
        }
    }

    @Test("K1 connections and delegates do not outlive their last reference", arguments: TransportUnderTest.allCases)
    func noLeaks(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let weakConnection = WeakReference<HTTPConnection>()
            let weakDelegate = WeakReference<EventRecorder>()
            do {
                let connection = leaks.connection(server, transport)
                let delegate = leaks.track(EventRecorder())
                connection.delegate = delegate
                weakConnection.value = connection
                weakDelegate.value = delegate
                for _ in 0..<5 { _ = try await connection.get("/echo") }
                let id = connection.get("/delay/20", onSuccess: { _ in })
                connection.cancel(id)
                await #expect(throws: HTTPConnectionError.unacceptableStatus) { try await connection.get("/status/500") }
            }
            #expect(await eventually { weakConnection.value == nil })
            #expect(weakDelegate.value == nil)
        }
    }
}

import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The delegate, closures and async/await must report the same outcome for the same request.
@Suite("Callback styles")
struct CallbackStylesTests {
    /// A style-independent summary of how a request ended.
    struct Outcome: Equatable, Sendable, CustomStringConvertible {
        let kind: String
        let status: Int?
        let body: Data?

        init(_ result: Result<HTTPResponse, HTTPConnectionError>) {
            switch result {
            case .success(let response):
                kind = "success"; status = response.status.code; body = response.body
            case .failure(let error):
                kind = error.kindName; status = error.response?.status.code; body = error.response?.body
            }
        }

        var description: String { "\(kind) \(status.map(String.init) ?? "-") \(body?.count ?? -1) bytes" }
    }

    /// Collects the terminal outcome of each request through the delegate.
    final class OutcomeDelegate: HTTPConnectionDelegate {
        let outcomes = Mutex<[RequestID: Outcome]>([:])
        func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
            outcomes.withLock { $0[id] = Outcome(.success(response)) }
        }
        func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError) {
            outcomes.withLock { $0[id] = Outcome(.failure(error)) }
        }
    }

    static let targets = ["/bytes/300?x=1", "/status/404", "/status/503", "/bytes/5000"]

    @Test("delegate, closures and async give identical results", arguments: TransportUnderTest.allCases, targets)
    func identicalResults(transport: TransportUnderTest, target: String) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let delegate = leaks.track(OutcomeDelegate())
            connection.delegate = delegate

            // async/await
            let viaAsync: Outcome
            do throws(HTTPConnectionError) { viaAsync = Outcome(.success(try await connection.get(target))) } catch { viaAsync = Outcome(.failure(error)) }

            // closures
            let viaClosures = Mutex<Outcome?>(nil)
            let closureID = connection.get(target, onSuccess: { response in
                viaClosures.withLock { $0 = Outcome(.success(response)) }
            }, onError: { error in
                viaClosures.withLock { $0 = Outcome(.failure(error)) }
            })
            #expect(await eventually { viaClosures.withLock { $0 != nil } })

            // delegate (the closure request above reported to it too)
            #expect(await eventually { delegate.outcomes.withLock { $0[closureID] != nil } })
            let viaDelegate = delegate.outcomes.withLock { $0[closureID] }

            #expect(viaClosures.withLock { $0 } == viaAsync)
            #expect(viaDelegate == viaAsync)
            // Responses differ only in the connection/request numbers the echo reports; the rest is equal.
            if target.hasPrefix("/status/") { #expect(viaAsync.kind == "unacceptableStatus") }
        }
    }

    @Test("a connection failure is the same error in every style", arguments: TransportUnderTest.allCases)
    func refusedInEveryStyle(transport: TransportUnderTest) async throws {
        try await withLeakCheck { leaks throws in
            leaks.watch(port: refusedURL().port ?? 1)
            let connection = leaks.track(HTTPConnection(baseURL: refusedURL(), configuration: .init(transport: leaks.transport(transport))))
            let delegate = leaks.track(OutcomeDelegate())
            connection.delegate = delegate
            let viaAsync: Outcome
            do throws(HTTPConnectionError) { viaAsync = Outcome(.success(try await connection.get("/x"))) } catch { viaAsync = Outcome(.failure(error)) }
            #expect(viaAsync.kind == "cannotConnect")

            let viaClosures = Mutex<Outcome?>(nil)
            let id = connection.get("/x", onSuccess: { response in viaClosures.withLock { $0 = Outcome(.success(response)) } },
                                    onError: { error in viaClosures.withLock { $0 = Outcome(.failure(error)) } })
            #expect(await eventually { viaClosures.withLock { $0 != nil } && delegate.outcomes.withLock { $0[id] != nil } })
            #expect(viaClosures.withLock { $0 } == viaAsync)
            #expect(delegate.outcomes.withLock { $0[id] } == viaAsync)
        }
    }

    @Test("delegate events arrive in order on the callback queue, and willSend can add headers", arguments: TransportUnderTest.allCases)
    func delegateOrder(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let queue = DispatchQueue(label: "test.callbacks")
            let connection = leaks.connection(server, transport) { $0.callbackQueue = queue }
            let recorder = leaks.track(EventRecorder(addedHeaders: ["X-Added-By-Delegate": "yes"]))
            recorder.expect(queue: queue)
            connection.delegate = recorder
            let id = connection.get("/echo", onDidStart: recorder.onDidStart, onSuccess: recorder.onSuccess, onError: recorder.onError)
            #expect(await eventually { recorder.closureTerminalCount == 1 })
            let events = recorder.events
            #expect(events.first == .willSend(id))
            #expect(events.dropFirst().prefix(2) == [.didStart(id), .closureStart(id)])
            #expect(events.contains(.head(id, 200)))
            let dataEvents = events.compactMap { if case .data(_, let soFar, _) = $0 { soFar } else { nil } }
            #expect(!dataEvents.isEmpty)
            #expect(dataEvents == dataEvents.sorted())
            #expect(Array(events.suffix(2)) == [.finish(id, 200), .closureSuccess(200)])
            #expect(recorder.terminalCount == 1)
            #expect(recorder.callbacksOffQueue == 0)
            let echo = try await connection.get("/echo").decode(Echo.self)
            #expect(echo.header("X-Added-By-Delegate") == "yes")
        }
    }

    @Test("a non-2xx status goes to the error path with the response attached, and validation is configurable", arguments: TransportUnderTest.allCases)
    func validation(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            do throws(HTTPConnectionError) {
                _ = try await connection.get("/status/404")
                Issue.record("a 404 must not succeed")
            } catch {
                #expect(error == .unacceptableStatus)
                #expect(error.response?.status == .notFound)
                #expect(error.response?.status.kind == .clientError)
                #expect(error.description.contains("404"))
            }
            connection.validation = .statusCodes([200, 404])
            #expect(try await connection.get("/status/404").status.code == 404)
            connection.validation = .acceptAll
            #expect(try await connection.get("/status/503").status.kind == .serverError)
        }
    }

    @Test("decode and text helpers", arguments: TransportUnderTest.allCases)
    func helpers(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let response = try await connection.get("/echo")
            #expect(response.text?.contains("\"method\"") == true)
            #expect(throws: HTTPConnectionError.decodingFailed) { try response.decode([Int].self) }
            do throws(HTTPConnectionError) {
                _ = try response.decode([Int].self)
            } catch {
                #expect(error.response?.status == .ok)
                #expect(error.underlying is DecodingError)
            }
        }
    }

    @Test("retry() re-fires the last request with the same closures", arguments: TransportUnderTest.allCases)
    func manualRetry(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            #expect(connection.retry() == nil)
            let successes = Atomic<Int>(0)
            let first = connection.get("/echo/retry", onSuccess: { _ in successes.add(1, ordering: .relaxed) })
            #expect(await eventually { successes.load(ordering: .relaxed) == 1 })
            let second = try #require(connection.retry())
            #expect(second != first)
            #expect(await eventually { successes.load(ordering: .relaxed) == 2 })
            #expect(server.requestCount(path: "/echo/retry") == 2)
        }
    }
}

import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Issue 21, part 3: encoding errors on the error path, the `Result` closure, failures that never
/// vanish, `retry(id)`, and a decoder per connection; each over real sockets to CourierTestServer.
@Suite("Request ergonomics")
struct RequestErgonomicsTests {
    /// A value JSONEncoder refuses (a NaN, with the default non-conforming-float strategy).
    struct Unencodable: Encodable {
        let value = Double.nan
    }

    @Test("a body .json cannot encode fails the request with invalidBody in every style, and nothing is sent",
          arguments: TransportUnderTest.allCases)
    func encodingErrorOnErrorPath(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, transport)
            let body = HTTPRequest.Body.json(Unencodable())   // no `try`
            #expect(body.encodingError == .invalidBody)

            // async
            do throws(HTTPConnectionError) {
                _ = try await connection.post("/echo", body: body)
                Issue.record("the request succeeded")
            } catch {
                #expect(error == .invalidBody)
                #expect(error.description.contains("JSON"))
            }

            // closures, with a delegate
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let closureError = Mutex<HTTPConnectionError?>(nil)
            let id = connection.post("/echo", body: body, onSuccess: { _ in }, onError: { error in closureError.withLock { $0 = error } })
            let failedInDelegate: @Sendable () -> Bool = {
                recorder.events.contains { if case .fail(id, let kind) = $0 { kind == HTTPConnectionError.invalidBody.kindName } else { false } }
            }
            #expect(await eventually { closureError.withLock { $0 } != nil && failedInDelegate() }, "\(recorder.events)")
            #expect(closureError.withLock { $0 } == .invalidBody)

            // completion
            let completed = Mutex<[Result<HTTPResponse, HTTPConnectionError>]>([])
            connection.start(HTTPRequest(.post, "/echo", body: body), completion: { result in completed.withLock { $0.append(result) } })
            #expect(await eventually { completed.withLock { $0.count } == 1 })
            if case .failure(let error) = completed.withLock({ $0.first }) { #expect(error == .invalidBody) } else { Issue.record("not a failure") }

            // A body that encodes still goes out, without `try`.
            let echo = try await connection.post("/echo", body: .json(["name": "Lobby"])).decode(Echo.self)
            #expect(echo.body == #"{"name":"Lobby"}"#)
            #expect(server.requestCount(path: "/echo") == 1)
        }
    }

    @Test("the completion closure is called exactly once: success, unacceptable status, connection failure, cancel",
          arguments: TransportUnderTest.allCases)
    func completionExactlyOnce(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, transport)
            let results = Mutex<[String: [Result<HTTPResponse, HTTPConnectionError>]]>([:])
            func start(_ name: String, _ target: String) -> RequestID {
                connection.start(HTTPRequest(.get, target), completion: { result in results.withLock { $0[name, default: []].append(result) } })
            }
            _ = start("ok", "/bytes/10")
            _ = start("teapot", "/status/418")
            _ = start("refused", "http://127.0.0.1:1/refused")
            let slow = start("cancelled", "/delay/5000")
            try await Task.sleep(for: .milliseconds(50))
            connection.cancel(slow)
            #expect(await eventually { results.withLock { $0.values.reduce(0) { $0 + $1.count } } == 4 })
            try await Task.sleep(for: .milliseconds(200))  // nothing more may arrive
            let all = results.withLock { $0 }
            #expect(all.count == 4 && all.values.allSatisfy { $0.count == 1 })
            if case .success(let response) = all["ok"]?.first { #expect(response.body.count == 10) } else { Issue.record("ok did not succeed") }
            if case .failure(let error) = all["teapot"]?.first {
                #expect(error == .unacceptableStatus)
                #expect(error.response?.status.code == 418)
            } else { Issue.record("teapot did not fail") }
            if case .failure(let error) = all["cancelled"]?.first { #expect(error == .cancelled) } else { Issue.record("not cancelled") }
            if case .failure(let error) = all["refused"]?.first { #expect(error == .cannotConnect) } else { Issue.record("not refused") }
        }
    }

    @Test("a failure with no error closure and no delegate is reported to the event monitor as unhandled, redacted",
          arguments: TransportUnderTest.allCases)
    func unhandledFailureReachesMonitor(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let events = Mutex<[EventMonitor.Event]>([])
            let connection = leaks.connection(server, transport) { configuration in
                configuration.eventMonitor = EventMonitor { event in events.withLock { $0.append(event) } }
                configuration.headers = ["Api-Key": "s3cret-key"]
            }
            let lost = connection.get("/status/500?token=s3cret-token", onSuccess: { _ in Issue.record("a 500 succeeded") })
            #expect(await eventually { events.withLock { $0.contains { if case .unhandledFailure(lost, _) = $0 { true } else { false } } } })
            let line = events.withLock { $0 }.compactMap { event -> String? in
                if case .unhandledFailure(lost, _) = event { event.description } else { nil }
            }.first ?? ""
            #expect(line.contains("500"))
            #expect(!line.contains("s3cret"))

            // With an error closure, or a delegate, or an async caller, or a cancel: nothing is unhandled.
            let heard = connection.get("/status/500", onSuccess: { _ in }, onError: { _ in })
            let slow = connection.get("/delay/5000", onSuccess: { _ in })
            connection.cancel(slow)
            _ = try? await connection.get("/status/503")
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let delegated = connection.get("/status/502", onSuccess: { _ in })
            // (The delegate may also hear the cancel above, depending on when it arrives.)
            #expect(await eventually { recorder.events.contains { if case .fail(delegated, _) = $0 { true } else { false } } })
            try await Task.sleep(for: .milliseconds(200))
            let unhandled = events.withLock { $0 }.compactMap { event -> RequestID? in
                if case .unhandledFailure(let id, _) = event { id } else { nil }
            }
            #expect(unhandled == [lost], "heard \(heard), cancelled \(slow), delegated \(delegated)")
        }
    }

    @Test("without an event monitor an unhandled failure goes to HTTPConnection.unhandledFailureLog, redacted")
    func unhandledFailureReachesLog() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let lines = Mutex<[String]>([])
        let previous = HTTPConnection.unhandledFailureLog
        HTTPConnection.unhandledFailureLog = { line in lines.withLock { $0.append(line) } }
        defer { HTTPConnection.unhandledFailureLog = previous }
        let connection = HTTPConnection(baseURL: server.baseURL, configuration: .init(headers: ["Authorization": "Bearer s3cret"]))
        let id = connection.get("/status/404?password=hunter2", onSuccess: { _ in })
        // Other suites may log their own lost failures meanwhile: look for this request's line.
        #expect(await eventually { lines.withLock { $0.contains { $0.hasPrefix("\(id) ") } } })
        let line = lines.withLock { $0.first { $0.hasPrefix("\(id) ") } } ?? ""
        #expect(line.contains("404"))
        #expect(!line.contains("hunter2") && !line.contains("s3cret"))
    }

    @Test("retry(id) starts the named request again with its closures, whichever started last; retry() the last",
          arguments: TransportUnderTest.allCases)
    func retryByID(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, transport)
            let paths = Mutex<[String]>([])
            let record: @Sendable (HTTPResponse) -> Void = { response in paths.withLock { $0.append(response.url.path) } }
            let first = connection.get("/echo/first", onSuccess: record)
            let second = connection.get("/echo/second", onSuccess: record)
            #expect(await eventually { paths.withLock { $0.count } == 2 })

            let again = try #require(connection.retry(first))
            #expect(again != first && again != second)
            #expect(await eventually { paths.withLock { $0.count } == 3 })
            #expect(paths.withLock { $0.last } == "/echo/first")
            #expect(server.requestCount(path: "/echo/first") == 2)

            // No argument: the most recent start, which is now the retry of the first one.
            #expect(connection.retry() != nil)
            #expect(await eventually { paths.withLock { $0.count } == 4 })
            #expect(server.requestCount(path: "/echo/first") == 3)
            #expect(server.requestCount(path: "/echo/second") == 1)

            // Completion requests too; async ones and unknown ids are not retryable.
            let outcomes = Mutex(0)
            let viaCompletion = connection.start(HTTPRequest(.get, "/echo/third"), completion: { _ in outcomes.withLock { $0 += 1 } })
            #expect(await eventually { outcomes.withLock { $0 } == 1 })
            #expect(connection.retry(viaCompletion) != nil)
            #expect(await eventually { outcomes.withLock { $0 } == 2 })
            #expect(connection.retry(RequestID(rawValue: .max)) == nil)

            // Only the most recent starts are kept.
            for index in 0..<HTTPConnection.retainedRequestCount {
                connection.get("/echo/n\(index)", onSuccess: record)
            }
            #expect(connection.retry(first) == nil)
            #expect(await eventually { paths.withLock { $0.count } == 4 + HTTPConnection.retainedRequestCount })
        }
    }

    @Test("decode uses the connection's decoder unless given one", arguments: TransportUnderTest.allCases)
    func decoderPerConnection(transport: TransportUnderTest) async throws {
        struct Room: Decodable, Equatable {
            let roomName: String
            let createdAt: Date
        }
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/room") { _ in .json(#"{"room_name": "Lobby", "created_at": "2026-11-23T19:00:00Z"}"#) }
        try await withLeakCheck { leaks throws in
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            decoder.dateDecodingStrategy = .iso8601
            let connection = leaks.connection(server, transport) { $0.decoder = decoder }
            let room = try await connection.get("/room").decode(Room.self)
            #expect(room == Room(roomName: "Lobby", createdAt: Date(timeIntervalSince1970: 1_795_460_400)))

            // An explicit decoder wins; a plain connection decodes with a plain JSONDecoder.
            let explicit = try await connection.get("/room")
            #expect(throws: HTTPConnectionError.decodingFailed) { _ = try explicit.decode(Room.self, decoder: JSONDecoder()) }
            let plain = leaks.connection(server, transport)
            let response = try await plain.get("/room")
            #expect(throws: HTTPConnectionError.decodingFailed) { _ = try response.decode(Room.self) }
            #expect(try response.decode(Room.self, decoder: decoder) == room)
        }
    }
}

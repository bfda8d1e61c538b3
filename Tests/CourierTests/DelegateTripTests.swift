@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// A delegate method left to the protocol's default costs no trip to the callback queue once the
/// connection has seen that, and every method a delegate implements is still called for every
/// request (``DelegateProfile``).
@Suite("Delegate trips to the callback queue", .timeLimit(.minutes(2)))
struct DelegateTripTests {
    /// Implements nothing.
    final class SilentDelegate: HTTPConnectionDelegate {}

    /// Adds a header to every request and counts the requests that finished.
    final class AskingDelegate: HTTPConnectionDelegate {
        let finished = Atomic<Int>(0)
        func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest {
            var request = request
            request.headers["X-Asked-By"] = "delegate"
            return request
        }
        func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
            finished.add(1, ordering: .relaxed)
        }
    }

    /// Implements `didFinishWith`, which calls the protocol's default `didCollect` on itself.
    final class DelegatingToDefault: HTTPConnectionDelegate {
        let finished = Atomic<Int>(0)
        func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
            connection.delegate?.connection(connection, request: id, didCollect: RequestMetrics())
            finished.add(1, ordering: .relaxed)
        }
    }

    /// Wraps another delegate: adds a header, counts the ends and refuses redirects, and forwards
    /// each of those calls to the delegate it wraps (which implements none of them).
    final class ForwardingDelegate: HTTPConnectionDelegate {
        let wrapped: any HTTPConnectionDelegate
        let finished = Atomic<Int>(0)
        init(_ wrapped: any HTTPConnectionDelegate) { self.wrapped = wrapped }
        func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest {
            var request = wrapped.connection(connection, willSend: request, id: id)
            request.headers["X-Forwarded-By"] = "wrapper"
            return request
        }
        func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
            wrapped.connection(connection, request: id, didFinishWith: response)
            finished.add(1, ordering: .relaxed)
        }
        func connection(_ connection: HTTPConnection, request id: RequestID, willRedirect hop: RedirectHop) -> RedirectAction {
            _ = wrapped.connection(connection, request: id, willRedirect: hop)
            return .refuse
        }
    }

    /// Hears only the body's bytes.
    final class BodyCountingDelegate: HTTPConnectionDelegate {
        let bytes = Atomic<Int>(0)
        func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveData data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
            bytes.add(data.count, ordering: .relaxed)
        }
    }

    /// Records the order of the calls it hears.
    final class RecordingDelegate: HTTPConnectionDelegate {
        let calls = Mutex<[String]>([])
        func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest {
            calls.withLock { $0.append("willSend") }
            return request
        }
        func connection(_ connection: HTTPConnection, didCancel id: RequestID) {
            calls.withLock { $0.append("didCancel") }
        }
        func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
            calls.withLock { $0.append("didFinish") }
        }
    }

    // MARK: - Without sockets

    @Test("a call that reaches the protocol's default is told apart from the delegate's own method")
    func defaultsAreDetected() {
        let connection = HTTPConnection()
        let request = HTTPRequest(.get, "http://127.0.0.1/")
        let silentDelegate = SilentDelegate(), askingDelegate = AskingDelegate()
        let silent = DefaultDelegateImplementation.call(.willSend, on: silentDelegate) {
            silentDelegate.connection(connection, willSend: request, id: RequestID.next())
        }
        let asking = DefaultDelegateImplementation.call(.willSend, on: askingDelegate) {
            askingDelegate.connection(connection, willSend: request, id: RequestID.next())
        }
        #expect(silent.ranDefault)
        #expect(!asking.ranDefault)
        #expect(asking.value.headers["X-Asked-By"] == "delegate")
    }

    @Test("a method of the delegate's own that calls another default is still its own")
    func ownMethodCallingADefault() {
        let connection = HTTPConnection()
        let delegate = DelegatingToDefault()
        connection.delegate = delegate
        let response = HTTPResponse(head: HTTPResponse.Head(status: .ok, headers: [:], url: URL(string: "http://127.0.0.1/")!), body: Data())
        let finish = DefaultDelegateImplementation.call(.didFinish, on: delegate) {
            delegate.connection(connection, request: RequestID.next(), didFinishWith: response)
        }
        #expect(!finish.ranDefault)
        #expect(delegate.finished.load(ordering: .relaxed) == 1)
        // The default it called marked its own method, not the one asked about.
        let collect = DefaultDelegateImplementation.call(.didCollect, on: delegate) {
            delegate.connection(connection, request: RequestID.next(), didFinishWith: response)
        }
        #expect(collect.ranDefault)
    }

    @Test("a delegate's own method that forwards to another delegate's default is still its own")
    func forwardingToAnotherDefault() {
        let connection = HTTPConnection()
        let request = HTTPRequest(.get, "http://127.0.0.1/")
        let inner = SilentDelegate()
        let forwarding = ForwardingDelegate(inner)
        let call = DefaultDelegateImplementation.call(.willSend, on: forwarding) {
            forwarding.connection(connection, willSend: request, id: RequestID.next())
        }
        #expect(!call.ranDefault)
        #expect(call.value.headers["X-Forwarded-By"] == "wrapper")
        let innerCall = DefaultDelegateImplementation.call(.willSend, on: inner) {
            inner.connection(connection, willSend: request, id: RequestID.next())
        }
        #expect(innerCall.ranDefault)
    }

    @Test("what is learned holds for the delegate's type, and another type starts from nothing")
    func profileIsPerType() {
        var profile = DelegateProfile()
        let silent = SilentDelegate()
        let asking = AskingDelegate()
        #expect(!profile.leavesToDefault(.willSend, silent))
        profile.learn(.willSend, isDefault: true, of: silent)
        #expect(profile.leavesToDefault(.willSend, silent))
        #expect(profile.leavesToDefault(.willSend, SilentDelegate()))
        #expect(!profile.leavesToDefault(.start, silent), "didStart has not been seen")
        #expect(!profile.leavesToDefault(.willSend, asking))
        profile.learn(.didStart, isDefault: true, of: silent)
        #expect(profile.leavesToDefault(.start, silent))
        profile.learn(.willSend, isDefault: false, of: asking)
        #expect(!profile.leavesToDefault(.willSend, asking))
        #expect(!profile.leavesToDefault(.didStart, silent), "learning about another type forgot the first")
    }

    // MARK: - Over sockets

    /// Runs `body` with a connection to a fresh ``TestServer`` whose delegate is the one `delegate`
    /// makes, under a ``LeakCheck`` that watches the server's port, the connection and the delegate.
    func withConnection<Delegate: HTTPConnectionDelegate>(
        _ transport: TransportUnderTest, delegate: @autoclosure () -> Delegate,
        _ body: (HTTPConnection, Delegate, TestServer) async throws -> Void
    ) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let delegate = leaks.track(delegate())
            connection.delegate = delegate
            try await body(connection, delegate, server)
        }
    }

    /// Sends one request with the closure style and waits for its success closure, which runs on
    /// the callback queue after every delegate call of the request.
    func sendAndSettle(_ connection: HTTPConnection, _ path: String) async {
        let done = Atomic<Bool>(false)
        connection.get(path, onSuccess: { _ in done.store(true, ordering: .releasing) },
                       onError: { error in Issue.record("request failed: \(error)") })
        #expect(await eventually { done.load(ordering: .acquiring) })
    }

    /// Sends three closure requests and checks that each one's `onDidStart` ran exactly once, once
    /// every call the callback queue had for them has run.
    func expectEachStartedOnce(_ connection: HTTPConnection) async {
        let starts = Mutex<[RequestID]>([])
        let done = Atomic<Int>(0)
        var ids: [RequestID] = []
        for _ in 0..<3 {
            ids.append(connection.get("/echo", onDidStart: { id in starts.withLock { $0.append(id) } },
                                      onSuccess: { _ in done.add(1, ordering: .releasing) },
                                      onError: { error in Issue.record("request failed: \(error)") }))
        }
        #expect(await eventually { done.load(ordering: .acquiring) == 3 })
        connection.callbackQueue.sync {}
        #expect(starts.withLock { $0.sorted() } == ids.sorted())
    }

    @Test("a delegate that implements nothing costs no trip after the first request", arguments: TransportUnderTest.allCases)
    func silentDelegateMakesNoTrip(transport: TransportUnderTest) async throws {
        try await withConnection(transport, delegate: SilentDelegate()) { connection, _, _ in
            await sendAndSettle(connection, "/bytes/300")
            let learned = connection.requestCallbackQueue.trips
            for _ in 0..<3 { _ = try await connection.get("/bytes/300") }
            connection.callbackQueue.sync {}
            #expect(connection.requestCallbackQueue.trips == learned)

            // With the callback queue held, a request still completes: nothing waits on it.
            connection.callbackQueue.suspend()
            let finished = Atomic<Bool>(false)
            let request = Task {
                _ = try await connection.get("/bytes/300")
                finished.store(true, ordering: .releasing)
            }
            #expect(await eventually { finished.load(ordering: .acquiring) })
            connection.callbackQueue.resume()
            try await request.value
        }
    }

    @Test("every method a delegate implements is called for every request, with one trip each way", arguments: TransportUnderTest.allCases)
    func implementedMethodsAreCalled(transport: TransportUnderTest) async throws {
        try await withConnection(transport, delegate: AskingDelegate()) { connection, delegate, _ in
            await sendAndSettle(connection, "/echo")
            let learned = connection.requestCallbackQueue.trips
            for round in 2...4 {
                let response = try await connection.get("/echo")
                #expect(String(decoding: response.body, as: UTF8.self).lowercased().contains("\"x-asked-by\", \"delegate\""))
                #expect(await eventually { delegate.finished.load(ordering: .relaxed) == round })
            }
            connection.callbackQueue.sync {}
            #expect(connection.requestCallbackQueue.trips - learned == 3 * 2, "willSend's trip and the end's, per request")
        }
    }

    @Test("a request cancelled before the delegate was asked for it is not offered to willSend", arguments: TransportUnderTest.allCases)
    func cancelledBeforeAsked(transport: TransportUnderTest) async throws {
        try await withConnection(transport, delegate: RecordingDelegate()) { connection, delegate, server in
            let errors = Mutex<[HTTPConnectionError]>([])
            connection.callbackQueue.suspend()
            let id = connection.get("/echo", onSuccess: { _ in Issue.record("a cancelled request succeeded") },
                                    onError: { error in errors.withLock { $0.append(error) } })
            connection.cancel(id)
            connection.callbackQueue.resume()
            #expect(await eventually { errors.withLock { $0.count } == 1 })
            connection.callbackQueue.sync {}
            #expect(delegate.calls.withLock { $0 } == ["didCancel"])
            #expect(errors.withLock { $0 } == [.cancelled])
            #expect(server.totalRequests == 0)

            // The next request is asked for and sent as usual.
            _ = try await connection.get("/echo")
            #expect(await eventually { delegate.calls.withLock { $0 } == ["didCancel", "willSend", "didFinish"] })
        }
    }

    @Test("a delegate that forwards to one that implements nothing is heard on every request", arguments: TransportUnderTest.allCases)
    func forwardingDelegateIsHeard(transport: TransportUnderTest) async throws {
        try await withConnection(transport, delegate: ForwardingDelegate(SilentDelegate())) { connection, delegate, server in
            for round in 1...3 {
                let response = try await connection.get("/echo")
                #expect(String(decoding: response.body, as: UTF8.self).lowercased().contains("\"x-forwarded-by\", \"wrapper\""))
                #expect(await eventually { delegate.finished.load(ordering: .relaxed) == round })
            }
            let target = "\(server.baseURL.absoluteString)/echo".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            for _ in 1...3 {
                do throws(HTTPConnectionError) {
                    _ = try await connection.get("/redirect-to?url=\(target)")
                    Issue.record("the wrapper refused the redirect, yet the request succeeded")
                } catch {
                    #expect(error == .redirectRefused)
                }
            }
            #expect(server.requestCount(path: "/redirect-to") == 3)
            #expect(server.requestCount(path: "/echo") == 3)
        }
    }

    @Test("a delegate that hears only the body gets every byte of every request, from an async caller", arguments: TransportUnderTest.allCases)
    func bodyOnlyDelegateHearsEveryByte(transport: TransportUnderTest) async throws {
        try await withConnection(transport, delegate: BodyCountingDelegate()) { connection, delegate, _ in
            for round in 1...4 {
                let response = try await connection.get("/bytes/3000")
                #expect(response.body.count == 3000)
                #expect(await eventually { delegate.bytes.load(ordering: .relaxed) == round * 3000 })
            }
        }
    }

    @Test("a request started from a task keeps the task's priority and task-local values with a delegate to ask, awaited or with closures (a task of its own)", arguments: TransportUnderTest.allCases)
    func taskContextIsInherited(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let seen = Mutex<[String]>([])
            let monitor = EventMonitor { event in
                if case .started = event {
                    seen.withLock { $0.append("\(Self.trace ?? "none") \(Task.currentPriority)") }
                }
            }
            let connection = leaks.connection(server, transport) { $0.eventMonitor = monitor }
            let delegate = leaks.track(AskingDelegate())
            connection.delegate = delegate
            for round in 1...2 {
                try await Task(priority: .high) {
                    try await Self.$trace.withValue("trace-\(round)") {
                        _ = try await connection.get("/echo")
                        let status = await withCheckedContinuation { continuation in
                            connection.get("/echo", onSuccess: { continuation.resume(returning: $0.status.code) },
                                           onError: { _ in continuation.resume(returning: 0) })
                        }
                        #expect(status == 200)
                    }
                }.value
            }
            let high = TaskPriority.high
            #expect(seen.withLock { $0 } == ["trace-1 \(high)", "trace-1 \(high)", "trace-2 \(high)", "trace-2 \(high)"])
        }
    }

    /// A value the caller's task carries, that the request's pipeline must see, whether it runs
    /// in the caller's task or in a task of its own.
    @TaskLocal static var trace: String?

    @Test("an unmanaged request does not keep its released connection while its delegate is asked for it, and ends silently", arguments: TransportUnderTest.allCases)
    func unmanagedReleasedWhileAsked(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let sharedTransport = leaks.transport(transport)
            let delegate = leaks.track(RecordingDelegate())
            let queue = DispatchQueue(label: "DelegateTripTests.callbacks")
            var connection: HTTPConnection? = leaks.track(HTTPConnection(
                baseURL: server.baseURL, configuration: .init(callbackQueue: queue, transport: sharedTransport)))
            weak let weakConnection = connection
            connection?.delegate = delegate
            queue.suspend()
            let errors = Mutex<Int>(0)
            let started = Atomic<Bool>(false)
            Thread {
                weakConnection?.get("/echo", lifetime: .unmanaged, onSuccess: { _ in }, onError: { _ in errors.withLock { $0 += 1 } })
                started.store(true, ordering: .releasing)
            }.start()
            #expect(await eventually { started.load(ordering: .acquiring) })
            connection = nil
            #expect(await eventually { weakConnection == nil })
            queue.resume()
            try await Task.sleep(for: .milliseconds(200))
            #expect(delegate.calls.withLock { $0 } == [])
            #expect(errors.withLock { $0 } == 0)
            #expect(server.totalRequests == 0)
        }
    }

    @Test("beside a delegate that implements nothing, closures still hear everything: the start once, upload progress to the end, redirects followed")
    func closuresBesideASilentDelegate() async throws {
        try await withConnection(.native, delegate: SilentDelegate()) { connection, _, server in
            await sendAndSettle(connection, "/echo")
            let learned = connection.requestCallbackQueue.trips

            await expectEachStartedOnce(connection)
            #expect(connection.requestCallbackQueue.trips - learned == 3 * 2, "the start and the end, per request")

            let size = 200_000
            let file = try TemporaryFile(size: size)
            defer { file.remove() }
            // The first upload shows that the delegate leaves didSendBodyData to the default; the
            // second's closure must still hear every report.
            for _ in 1...2 {
                let progress = Mutex<[Int64]>([])
                var upload = HTTPRequest(.put, "/echo", body: try .file(file.url))
                upload.onUploadProgress = { sent, _ in progress.withLock { $0.append(sent) } }
                _ = try await connection.send(upload)
                #expect(await eventually { progress.withLock { $0.last } == Int64(size) })
                connection.callbackQueue.sync {}
            }

            let target = "\(server.baseURL.absoluteString)/echo".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            for _ in 1...2 {
                let response = try await connection.get("/redirect-to?url=\(target)")
                #expect(response.status.code == 200)
            }
            #expect(server.requestCount(path: "/redirect-to") == 2)
        }
    }

    @Test("a delegate asked for every request starts each once, for the closure too", arguments: TransportUnderTest.allCases)
    func askedDelegateStartsOnce(transport: TransportUnderTest) async throws {
        try await withConnection(transport, delegate: AskingDelegate()) { connection, _, _ in
            await expectEachStartedOnce(connection)
        }
    }

    @Test("a delegate of another type is asked again, and a method calling a default is still heard", arguments: TransportUnderTest.allCases)
    func anotherTypeIsAskedAgain(transport: TransportUnderTest) async throws {
        try await withConnection(transport, delegate: SilentDelegate()) { connection, _, _ in
            await sendAndSettle(connection, "/echo")

            let asking = AskingDelegate()
            connection.delegate = asking
            let response = try await connection.get("/echo")
            #expect(String(decoding: response.body, as: UTF8.self).lowercased().contains("\"x-asked-by\", \"delegate\""))
            #expect(await eventually { asking.finished.load(ordering: .relaxed) == 1 })

            let delegating = DelegatingToDefault()
            connection.delegate = delegating
            for round in 1...3 {
                _ = try await connection.get("/echo")
                #expect(await eventually { delegating.finished.load(ordering: .relaxed) == round })
            }
        }
    }
}

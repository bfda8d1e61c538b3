@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// `HTTPConnection.stream`: the pipeline up to the head, then the body as it arrives, and exactly
/// one terminal event per request when the body ends, breaks off or is abandoned.
@Suite("Streamed responses through HTTPConnection")
struct StreamingResponseTests {
    /// Every terminal event the delegate hears, in order, and the body bytes it was shown.
    final class TerminalLog: HTTPConnectionDelegate {
        let events = Mutex<[String]>([])
        let observedBytes = Atomic<Int>(0)

        func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
            events.withLock { $0.append("finished \(response.status.code) \(response.body.count) \(response.metrics != nil)") }
        }
        func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError) {
            events.withLock { $0.append("failed \(error.kindName)") }
        }
        func connection(_ connection: HTTPConnection, didCancel id: RequestID) {
            events.withLock { $0.append("cancelled") }
        }
        func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveData data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
            observedBytes.add(data.count, ordering: .relaxed)
        }
        var list: [String] { events.withLock { $0 } }
    }

    /// Reads a body to its end or to the error that breaks it.
    static func read(_ body: HTTPBodyStream, stopAfter limit: Int = .max,
                     counting progress: Locked<Int>? = nil) async -> (Data, HTTPConnectionError?) {
        var received = Data()
        do throws(HTTPConnectionError) {
            for try await chunk in body {
                received.append(chunk)
                progress?.withLock { $0 = received.count }
                if received.count >= limit { break }
            }
            return (received, nil)
        } catch {
            return (received, error)
        }
    }

    @Test("a 16 MiB body streams byte for byte past a 1 MiB body limit; the delegate hears one finish, after the body, with metrics")
    func wholeBody() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, .native) { $0.maxResponseBodySize = 1 << 20 }
            let log = leaks.track(TerminalLog())
            connection.delegate = log
            let size = 16 << 20
            let response = try await connection.stream(HTTPRequest(.get, "/bytes/\(size)"))
            #expect(response.status.code == 200)
            let (body, error) = await Self.read(response.body)
            #expect(error == nil)
            #expect(body == TestServer.bytesPattern(count: size))
            #expect(await eventually { log.list == ["finished 200 0 true"] })
            #expect(log.observedBytes.load(ordering: .relaxed) == size, "the delegate saw the chunks too")
        }
    }

    @Test("the pipeline runs on the head: a redirect is followed (its body abandoned) and the final body streams")
    func redirectThenStream() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/moved") { _ in .response(status: 302, headers: [("Location", "/bytes/300000")], body: Data(repeating: 1, count: 100_000)) }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, .native)
            let response = try await connection.stream(HTTPRequest(.get, "/moved"))
            let (body, error) = await Self.read(response.body)
            #expect(error == nil)
            #expect(body == TestServer.bytesPattern(count: 300_000))
            #expect(response.head.url.path == "/bytes/300000")
        }
    }

    @Test("an unacceptable status throws unacceptableStatus with the head and no body; the delegate hears one failure")
    func unacceptableStatus() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, .native)
            let log = leaks.track(TerminalLog())
            connection.delegate = log
            do throws(HTTPConnectionError) {
                _ = try await connection.stream(HTTPRequest(.get, "/status/404"))
                Issue.record("expected unacceptableStatus")
            } catch {
                #expect(error == .unacceptableStatus)
                #expect(error.response?.status.code == 404)
                #expect(error.response?.body.isEmpty == true)
            }
            #expect(await eventually { log.list == ["failed unacceptableStatus"] })
        }
    }

    @Test("breaking out of the loop ends the request once, as cancelled, and closes its connection")
    func breakOut() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, .native)
            let log = leaks.track(TerminalLog())
            connection.delegate = log
            do {
                let response = try await connection.stream(HTTPRequest(.get, "/bytes/\(8 << 20)"))
                let (body, error) = await Self.read(response.body, stopAfter: 1)
                #expect(!body.isEmpty)
                #expect(error == nil)
            }
            #expect(await eventually { log.list == ["cancelled"] })
            #expect(await eventually { server.connectionsOpen == 0 })
            try await Task.sleep(for: .milliseconds(100))
            #expect(log.list == ["cancelled"], "exactly one terminal event")
            _ = try await connection.get("/echo")
        }
    }

    @Test("cancelAll while the body is read: the reader's next chunk throws cancelled; one terminal event")
    func cancelWhileReading() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, .native)
            let log = leaks.track(TerminalLog())
            connection.delegate = log
            let response = try await connection.stream(HTTPRequest(.get, "/fault/stall-body"))
            let progress = Locked(0)
            let reader = Task { await Self.read(response.body, counting: progress) }
            #expect(await eventually { progress.withLock { $0 } == 10 })  // the reader has the bytes before the stall
            connection.cancelAll()
            let (body, error) = await reader.value
            #expect(body.count == 10)
            #expect(error == .cancelled)
            #expect(await eventually { log.list == ["cancelled"] })
        }
    }

    @Test("a deadline that passes while the body is read ends it with deadlineExceeded")
    func deadlineWhileReading() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            // Long enough for the head to come back on a slow machine (TSan); the trickle takes 50 s.
            let connection = leaks.connection(server, .native) { $0.deadline = .seconds(2) }
            let log = leaks.track(TerminalLog())
            connection.delegate = log
            let response = try await connection.stream(HTTPRequest(.get, "/fault/trickle?bytes=1000&interval=50"))
            let (body, error) = await Self.read(response.body)
            #expect(error == .deadlineExceeded)
            #expect(body.count > 0 && body.count < 1000)
            #expect(await eventually { log.list == ["failed deadlineExceeded"] })
        }
    }

    @Test("a streamed body within the cache's limit is stored as it passes; a fresh cached response is handed out as a body that has already arrived")
    func cache() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/fresh") { _ in .response(status: 200, headers: [("Cache-Control", "max-age=60")], body: Data("cached body".utf8)) }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, .native) { $0.cache = HTTPCache() }
            let streamedFirst = try await connection.stream(HTTPRequest(.get, "/fresh"))
            #expect(await Self.read(streamedFirst.body).0 == Data("cached body".utf8))
            #expect(await eventually { connection.cache?.statistics.stores == 1 })
            let collected = try await connection.get("/fresh")
            #expect(collected.text == "cached body")
            #expect(collected.source == .cache)
            let fromCache = try await connection.stream(HTTPRequest(.get, "/fresh"))
            #expect(await Self.read(fromCache.body).0 == Data("cached body".utf8))
            #expect(server.requestCount(path: "/fresh") == 1, "both later requests were served from the cache")
        }
    }

    @Test("URLSessionTransport streams too: a 16 MiB body past a 1 MiB limit arrives byte for byte, one finish for the delegate")
    func urlSession() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, .urlSession) { $0.maxResponseBodySize = 1 << 20 }
            let log = leaks.track(TerminalLog())
            connection.delegate = log
            let size = 16 << 20
            let response = try await connection.stream(HTTPRequest(.get, "/bytes/\(size)"))
            #expect(response.status.code == 200)
            let (body, error) = await Self.read(response.body)
            #expect(error == nil)
            #expect(body == TestServer.bytesPattern(count: size))
            #expect(await eventually { log.list == ["finished 200 0 true"] })
            connection.delegate = nil
        }
    }

    @Test("URLSessionTransport: a reader that stops early ends the request once, as cancelled, and the connection closes")
    func urlSessionStopEarly() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, .urlSession)
            let log = leaks.track(TerminalLog())
            connection.delegate = log
            // 10 of 100 bytes, then silence: the reader stops while the body is still open.
            let response = try await connection.stream(HTTPRequest(.get, "/fault/stall-body"))
            let (body, error) = await Self.read(response.body, stopAfter: 10)
            #expect(error == nil)
            #expect(body.count == 10)
            #expect(await eventually { log.list == ["cancelled"] }, "\(log.list)")
            connection.delegate = nil
        }
    }
}

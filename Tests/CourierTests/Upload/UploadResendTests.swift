import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Which bodies are sent again: retries, 307/308 redirects and 401 re-authentication resend
/// files (replayable) and end a consumed stream with bodyNotReplayable, never an empty resend.
@Suite("Uploads: resending")
struct UploadResendTests {
    static let size = 200_000

    func server() throws -> TestServer {
        let server = try TestServer(configuration: .init(maxBodyBytes: 16 << 20))
        server.addHashRoute()
        return server
    }

    func streamBody() -> HTTPRequest.Body {
        .stream(PatternChunks(total: Self.size, chunk: 10_000), length: Int64(Self.size))
    }

    var expectedHash: String { sha256Hex(PatternChunks.bytes(from: 0, count: Self.size)) }

    @Test("retry: a file is sent again whole; a consumed stream ends with bodyNotReplayable")
    func retry() async throws {
        let server = try server()
        defer { server.shutdown() }
        let file = try TemporaryFile(size: Self.size)
        defer { file.remove() }
        let attempts = Locked(0)
        server.route("/flaky") { request in
            let number = attempts.withLock { $0 += 1; return $0 }
            if number % 2 == 1 { return .text(status: 503, "again") }
            return .text("\(sha256Hex(request.body)) \(request.body.count)")
        }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30)) { configuration in
                configuration.retryPolicy = RetryPolicy.exponentialBackoff(maxAttempts: 3, base: .zero, cap: .seconds(1)).allowingNonIdempotentMethods()
            }
            let response = try await connection.send(HTTPRequest(.post, "/flaky", body: try .file(file.url)))
            #expect(response.text == "\(expectedHash) \(Self.size)")
            #expect(attempts.withLock { $0 } == 2)

            let error = await failure { () throws(HTTPConnectionError) in _ = try await connection.send(HTTPRequest(.post, "/flaky", body: streamBody())) }
            #expect(error == .bodyNotReplayable, "\(String(describing: error))")
            #expect(error?.response?.status.code == 503)
            #expect(attempts.withLock { $0 } == 3)  // the stream went out once, never empty a second time
        }
    }

    @Test("307 and 308: a file follows the redirect whole; a stream ends with bodyNotReplayable", arguments: [307, 308])
    func redirect(status: Int) async throws {
        let server = try server()
        defer { server.shutdown() }
        let file = try TemporaryFile(size: Self.size)
        defer { file.remove() }
        server.route("/moved") { _ in .response(status: status, headers: [("Location", "/sha"), ("Content-Length", "0")]) }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            let response = try await connection.send(HTTPRequest(.put, "/moved", body: try .file(file.url)))
            #expect(ReceivedBody(response.text ?? "").sha256 == expectedHash)

            await #expect(throws: HTTPConnectionError.bodyNotReplayable) {
                try await connection.send(HTTPRequest(.put, "/moved", body: streamBody()))
            }
            #expect(server.requestCount(path: "/sha") == 1)
            #expect(server.requestCount(path: "/moved") == 2)
        }
    }

    @Test("401 re-authentication: a file is sent again with the new token; a stream ends with bodyNotReplayable")
    func reauthentication() async throws {
        let auth = try AuthServer()
        defer { auth.shutdown() }
        let file = try TemporaryFile(size: 100_000)
        defer { file.remove() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(auth.server, .native, timeout: .seconds(30))
            connection.authenticate(matching: .everything, with: auth.bearer())
            let response = try await connection.send(HTTPRequest(.post, "/protected/file", body: try .file(file.url)))
            #expect(response.status == .ok)
            #expect(auth.server.requestCount(path: "/protected/file") == 2)

            auth.rotate()  // the next request's token is rejected
            let error = await failure { () throws(HTTPConnectionError) in _ = try await connection.send(HTTPRequest(.post, "/protected/stream", body: streamBody())) }
            #expect(error == .bodyNotReplayable, "\(String(describing: error))")
            #expect(error?.response?.status.code == 401)
            #expect(auth.server.requestCount(path: "/protected/stream") == 1)
        }
    }

    @Test("a stream is not consumed by an attempt that never connected: the retry sends it")
    func retryBeforeConsuming() async throws {
        let server = try server()
        defer { server.shutdown() }
        let refused = try TestServer()
        let port = refused.port
        refused.shutdown()
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30)) { configuration in
                configuration.retryPolicy = RetryPolicy.exponentialBackoff(maxAttempts: 2, base: .zero, cap: .seconds(1)).allowingNonIdempotentMethods()
            }
            await #expect(throws: HTTPConnectionError.cannotConnect) {
                try await connection.send(HTTPRequest(.post, "http://127.0.0.1:\(port)/sha", body: streamBody()))
            }
        }
    }
}

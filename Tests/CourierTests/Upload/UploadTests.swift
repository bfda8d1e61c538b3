import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Request bodies that are not in memory, over real sockets (issue 15, parts 1 and 6).
@Suite("Uploads: streams and files")
struct UploadTests {
    static let sizes = [0, 1, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 10 << 20]

    /// A server that accepts bodies up to 16 MiB and reports their SHA-256.
    func hashServer() throws -> TestServer {
        let server = try TestServer(configuration: .init(maxBodyBytes: 16 << 20))
        server.addHashRoute()
        return server
    }

    @Test("a stream with a length arrives byte for byte, sent with Content-Length", arguments: sizes)
    func streamWithLength(size: Int) async throws {
        let server = try hashServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            let chunks = PatternChunks(total: size, chunk: 7_000)
            let response = try await connection.send(HTTPRequest(.put, "/sha", body: .stream(chunks, length: Int64(size))))
            let received = ReceivedBody(response.text ?? "")
            #expect(received.sha256 == sha256Hex(PatternChunks.bytes(from: 0, count: size)))
            #expect(received.length == size)
            #expect(received.contentLength == "\(size)")
            #expect(received.transferEncoding == "-")
        }
    }

    @Test("a stream without a length arrives byte for byte, sent chunked", arguments: sizes)
    func streamWithoutLength(size: Int) async throws {
        let server = try hashServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            let chunks = PatternChunks(total: size, chunk: 100_000)
            let response = try await connection.send(HTTPRequest(.post, "/sha", body: .stream(chunks)))
            let received = ReceivedBody(response.text ?? "")
            #expect(received.sha256 == sha256Hex(PatternChunks.bytes(from: 0, count: size)))
            #expect(received.length == size)
            #expect(received.transferEncoding.lowercased() == "chunked")
        }
    }

    @Test("a file arrives byte for byte with its length; progress ends at its size", arguments: sizes)
    func file(size: Int) async throws {
        let server = try hashServer()
        defer { server.shutdown() }
        let file = try TemporaryFile(size: size)
        defer { file.remove() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            let progress = Locked<[Int64]>([])
            var request = HTTPRequest(.put, "/sha", body: try .file(file.url))
            request.onUploadProgress = { sent, total in
                #expect(total == Int64(size))
                progress.withLock { $0.append(sent) }
            }
            let response = try await connection.send(request)
            let received = ReceivedBody(response.text ?? "")
            #expect(received.sha256 == sha256Hex(PatternChunks.bytes(from: 0, count: size)))
            #expect(received.contentLength == "\(size)")
            #expect(await eventually { progress.withLock { $0.last } == Int64(size) || size == 0 })
            let reports = progress.withLock { $0 }
            #expect(reports == reports.sorted())
            // Throttled: a 10 MiB body in 64 KiB chunks is 160 chunks, reported far fewer times
            // than that only when the loop is slow, so the check is the bound, not a count.
            #expect(reports.count <= max(1, size / (64 * 1024)) + 1)
        }
    }

    @Test("the delegate hears the upload's progress, throttled, ending at the body's size")
    func delegateProgress() async throws {
        final class ProgressListener: HTTPConnectionDelegate {
            let reports = Locked<[(Int64, Int64?)]>([])
            func connection(_ connection: HTTPConnection, request id: RequestID, didSendBodyData bytesSent: Int64, expectedTotal: Int64?) {
                reports.withLock { $0.append((bytesSent, expectedTotal)) }
            }
        }
        let server = try hashServer()
        defer { server.shutdown() }
        let size = 5 << 20
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            let listener = leaks.track(ProgressListener())
            connection.delegate = listener
            _ = try await connection.send(HTTPRequest(.post, "/sha", body: .stream(PatternChunks(total: size, chunk: 32_768))))
            #expect(await eventually { listener.reports.withLock { $0.last?.0 } == Int64(size) })
            let reports = listener.reports.withLock { $0 }
            #expect(reports.allSatisfy { $0.1 == nil })  // no length was given
            #expect(reports.map(\.0) == reports.map(\.0).sorted())
            #expect(reports.count <= size / (64 * 1024) + 1)
            for (previous, next) in zip(reports, reports.dropFirst()) {
                #expect(next.0 - previous.0 > 0)
            }
            connection.delegate = nil
        }
    }

    @Test("a stream that yields more or fewer bytes than its length fails with invalidBody")
    func lengthMismatch() async throws {
        let server = try hashServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            for (declared, actual) in [(1_000, 999), (1_000, 1_001), (200_000, 300_000)] {
                let body = HTTPRequest.Body.stream(PatternChunks(total: actual, chunk: 4_096), length: Int64(declared))
                await #expect(throws: HTTPConnectionError.invalidBody) {
                    try await connection.send(HTTPRequest(.post, "/sha", body: body))
                }
            }
            #expect(try await connection.get("/echo").status == .ok)  // the pool still serves
        }
    }

    @Test("a file that changes size between the request and the upload fails with invalidBody")
    func fileChangedSize() async throws {
        let server = try hashServer()
        defer { server.shutdown() }
        let file = try TemporaryFile(size: 300_000)
        defer { file.remove() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            let body = try HTTPRequest.Body.file(file.url)
            try Data(count: 10).write(to: file.url)  // shrunk
            await #expect(throws: HTTPConnectionError.invalidBody) {
                try await connection.send(HTTPRequest(.post, "/sha", body: body))
            }
            try PatternChunks.bytes(from: 0, count: 400_000).write(to: file.url)  // grown
            await #expect(throws: HTTPConnectionError.invalidBody) {
                try await connection.send(HTTPRequest(.post, "/sha", body: body))
            }
            #expect(throws: HTTPConnectionError.invalidBody) {
                _ = try HTTPRequest.Body.file(file.url.appendingPathComponent("missing"))
            }
        }
    }

    @Test("a stream that throws fails the request with invalidBody and the error underneath")
    func throwingStream() async throws {
        struct Broken: Error {}
        let server = try hashServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
            continuation.yield(Data(count: 5_000))
            continuation.finish(throwing: Broken())
            let error = await failure { () throws(HTTPConnectionError) in _ = try await connection.send(HTTPRequest(.post, "/sha", body: .stream(stream))) }
            #expect(error == .invalidBody)
            #expect(error?.underlying is Broken)
        }
    }

    @Test("URLSessionTransport sends a file byte for byte", arguments: sizes)
    func urlSessionFile(size: Int) async throws {
        let server = try hashServer()
        defer { server.shutdown() }
        let file = try TemporaryFile(size: size)
        defer { file.remove() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .urlSession, timeout: .seconds(30))
            let response = try await connection.send(HTTPRequest(.put, "/sha", body: try .file(file.url)))
            let received = ReceivedBody(response.text ?? "")
            #expect(received.sha256 == sha256Hex(PatternChunks.bytes(from: 0, count: size)))
            #expect(received.length == size)
        }
    }

    @Test("URLSessionTransport refuses streams and multipart forms with unsupportedByTransport")
    func urlSessionRefuses() async throws {
        let server = try hashServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .urlSession)
            var form = MultipartForm()
            form.append(name: "a", value: "b")
            for body in [HTTPRequest.Body.stream(PatternChunks(total: 10, chunk: 10)), .multipart(form)] {
                await #expect(throws: HTTPConnectionError.unsupportedByTransport) {
                    try await connection.send(HTTPRequest(.post, "/sha", body: body))
                }
            }
            #expect(server.requestCount(path: "/sha") == 0)
        }
    }
}

import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Uploads that end early: the server answers before the body is done, or the caller cancels.
/// Each ends with one terminal callback and no leaked socket (``runCase``).
@Suite("Uploads: early answers and cancellation")
struct UploadFaultTests {
    @Test("a 413 at the start of a 10 MiB streamed upload stops the upload: the caller gets the 413, the stream left unread", arguments: [true, false])
    func earlyRejection(withLength: Bool) async throws {
        let server = try TestServer(configuration: .init(maxBodyBytes: 64 * 1024))
        defer { server.shutdown() }
        let size = 10 << 20
        let chunks = PatternChunks(total: size, chunk: 16 * 1024)
        let body = HTTPRequest.Body.stream(chunks, length: withLength ? Int64(size) : nil)
        let outcome = try await runCase(.native, on: server, HTTPRequest(.post, "/echo", body: body), timeout: .seconds(20))
        #expect(outcome.error == .unacceptableStatus && outcome.status == 413, "\(outcome.result)")
        // The producer stopped: it ran at most its buffer ahead of what the socket took before the answer.
        let yielded = chunks.yielded.withLock { $0 }
        #expect(yielded < size, "the whole stream was read (\(yielded) bytes) although the server had answered")
    }

    @Test("cancel mid-upload of a file and of a stream: cancelled once, no leaked socket")
    func cancelMidUpload() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let silent = try SilentListener()
        defer { silent.close() }
        let file = try TemporaryFile(size: 32 << 20)
        defer { file.remove() }
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self)
        continuation.yield(Data(count: 100_000))  // then nothing: the upload waits for the stream
        let requests = [HTTPRequest(.put, silent.url.appendingPathComponent("file").absoluteString, body: try .file(file.url)),
                        HTTPRequest(.put, silent.url.appendingPathComponent("stream").absoluteString, body: .stream(stream))]
        let outcomes = try await runCase(.native, on: server, requests, timeout: .seconds(60), during: { context, ids in
            context.leaks.watch(port: silent.port)
            #expect(await eventually { ProcessSockets.connected(toPort: silent.port) == 2 })
            try await Task.sleep(for: .milliseconds(300))  // the file fills the socket buffers; the stream waits
            for id in ids { context.connection.cancel(id) }
        })
        for outcome in outcomes {
            #expect(outcome.error == .cancelled, "\(outcome.result)")
        }
        continuation.finish()
    }
}

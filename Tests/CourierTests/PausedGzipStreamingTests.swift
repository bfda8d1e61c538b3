@testable import Courier
import CourierHTTP2
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// A reader that pauses on a streamed gzip body holds a bounded number of decoded octets, however
/// well the body compresses: the transport decodes one step at a time while the reader takes the
/// steps, over real sockets to CourierTestServer (HTTP/1.1) and to a scripted HTTP/2 peer. Every
/// octet arrives in order, the observer sees the decoded octets, truncated or corrupt compressed
/// data and a body past the ratio limit end it with `decompressionFailed`, and the HTTP/1.1
/// connection serves the next request.
@Suite("A paused reader of a streamed gzip body holds a bounded number of decoded octets", .timeLimit(.minutes(2)))
struct PausedGzipStreamingTests {
    /// A request for `url`'s body.
    static func request(_ url: URL) -> TransportRequest {
        TransportRequest(method: .get, url: url, timeout: .seconds(20))
    }

    /// Streams `url` with a reader that pauses at every full buffer, and checks what it got
    /// against the whole decoded body and what it held against the bound.
    static func streamWhole(_ transport: NativeTransport, _ url: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let observer = RecordingObserver()
        let streamed = try await transport.stream(Self.request(url), observer: observer)
        #expect(streamed.headers["Content-Encoding"] == nil, sourceLocation: sourceLocation)
        let plain = PausedGzipBody.plain
        let reading = await PausedGzipBody.readPausing(streamed.body, expected: plain.count)
        #expect(reading.error == nil && reading.ended, "the body ended with \(String(describing: reading.error))", sourceLocation: sourceLocation)
        #expect(reading.received.count == plain.count, sourceLocation: sourceLocation)
        let same = reading.received == plain  // not in #expect: no diff of megabytes
        #expect(same, "every octet, in order", sourceLocation: sourceLocation)
        #expect(reading.pauses >= 16, "the reader paused \(reading.pauses) times", sourceLocation: sourceLocation)
        let buffer = streamed.body.buffer
        #expect(buffer.peakBuffered >= buffer.highWaterMark, sourceLocation: sourceLocation)
        #expect(buffer.peakBuffered <= PausedGzipBody.bound(buffer),
                "a paused reader held \(buffer.peakBuffered) decoded octets (the bound is \(PausedGzipBody.bound(buffer)))",
                sourceLocation: sourceLocation)
        let observed = observer.progress
        #expect(observed.reduce(0) { $0 + $1.count } == plain.count, "the observer saw the decoded octets", sourceLocation: sourceLocation)
        #expect(observed.last?.soFar == Int64(PausedGzipBody.gzip.count), "the wire position of the last octets", sourceLocation: sourceLocation)
    }

    /// Streams `url`, whose body cannot be decoded whole, with a pausing reader: it must end with
    /// `decompressionFailed`, never cleanly, after at least `atLeast` decoded octets, the first
    /// `matching` of which (or all, if fewer) are `plain`'s (corrupt data may decode to wrong
    /// octets before zlib sees it is corrupt), holding no more than the bound meanwhile.
    static func streamFailing(_ transport: NativeTransport, _ url: URL, plain: Data, atLeast: Int, matching: Int = .max,
                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let streamed = try await transport.stream(Self.request(url), observer: IgnoringTransportObserver())
        let reading = await PausedGzipBody.readPausing(streamed.body, expected: plain.count)
        #expect(!reading.ended, "\(url.path): a body that cannot be decoded ended cleanly", sourceLocation: sourceLocation)
        #expect(reading.error == .decompressionFailed, "\(url.path) ended with \(String(describing: reading.error))",
                sourceLocation: sourceLocation)
        #expect(reading.received.count >= atLeast, "\(url.path): \(reading.received.count) octets", sourceLocation: sourceLocation)
        let checked = min(reading.received.count, matching)
        let same = reading.received.prefix(checked) == plain.prefix(checked)  // not in #expect: no diff of megabytes
        #expect(same, "\(url.path): the octets before the failure", sourceLocation: sourceLocation)
        #expect(streamed.body.buffer.peakBuffered <= PausedGzipBody.bound(streamed.body.buffer), sourceLocation: sourceLocation)
    }

    /// Streams the truncated, corrupt and bomb bodies of `base`, each of which must end with
    /// `decompressionFailed`.
    static func streamBroken(_ transport: NativeTransport, _ url: (String) -> URL,
                             sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let plain = PausedGzipBody.plain
        try await Self.streamFailing(transport, url("/truncated"), plain: plain, atLeast: plain.count / 2, sourceLocation: sourceLocation)
        try await Self.streamFailing(transport, url("/corrupt"), plain: plain, atLeast: 1 << 20, matching: 1 << 20, sourceLocation: sourceLocation)
        try await Self.streamFailing(transport, url("/bomb"), plain: Data(count: 8 << 20), atLeast: 0, sourceLocation: sourceLocation)
    }

    /// The body the servers send for `path`.
    static func body(for path: String) -> Data {
        switch path {
        case "/truncated": PausedGzipBody.truncated
        case "/corrupt": PausedGzipBody.corrupt
        case "/bomb": PausedGzipBody.bomb
        default: PausedGzipBody.gzip
        }
    }

    @Test("HTTP/1.1: an 8 MiB gzip body (ratio 20) read by a reader that pauses at every full buffer: at most its buffer plus one 32 KiB step held, every octet right, the observer sees decoded octets, the connection serves the next request; truncated, corrupt and bomb gzip bodies end with decompressionFailed")
    func http1() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        for path in ["/gzip", "/truncated", "/corrupt", "/bomb"] {
            server.route(path) { _ in
                .response(status: 200, headers: [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")], body: Self.body(for: path))
            }
        }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native()
            defer { transport.shutdown() }
            try await Self.streamWhole(transport, server.url("/gzip"))
            try await Self.streamFailing(transport, server.url("/truncated"), plain: PausedGzipBody.plain, atLeast: PausedGzipBody.plain.count / 2)
            #expect(server.connectionsAccepted == 1, "the streamed responses' connection was reused (a truncated coding is no framing error)")
            try await Self.streamBroken(transport) { server.url($0) }
        }
    }

    @Test("HTTP/2: an 8 MiB gzip body (ratio 20) sent at once within the stream window, read by a reader that pauses at every full buffer: at most its buffer plus one 32 KiB step held, every octet right; truncated, corrupt and bomb gzip bodies end with decompressionFailed")
    func http2() async throws {
        let peer = try HTTP2ScriptedPeer { _, connection in
            try connection.start()
            while let request = try connection.nextRequest() {
                let body = Self.body(for: request.path)
                connection.respond(request.streamID, headers: [("content-encoding", "gzip"), ("content-length", "\(body.count)")],
                                   body: Array(body))
            }
        }
        defer { peer.close() }
        try await withLeakCheck { leaks throws in
            leaks.watch(port: peer.port)
            let transport = leaks.native(NativeTransport.Configuration().speakingH2C())
            defer { transport.shutdown() }
            try await Self.streamWhole(transport, peer.url("/gzip"))
            try await Self.streamBroken(transport) { peer.url($0) }
        }
        #expect(peer.connectionsAccepted == 1)
    }
}

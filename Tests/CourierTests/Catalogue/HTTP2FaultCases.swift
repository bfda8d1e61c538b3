import Courier
import CourierHTTP2
import Foundation
import Testing

/// Reliability catalogue, HTTP/2 faults: a scripted HTTP/2 peer (``HTTP2ScriptedPeer``, h2c by
/// prior knowledge) sends GOAWAY, RST_STREAM, a stream limit of 1, a window that never opens,
/// a bad HPACK index, an oversized frame, floods of CONTINUATION, PING and SETTINGS, a close in
/// the middle of DATA, and never acknowledges SETTINGS. Each case ends in one clear error or
/// success, with exactly one terminal callback, a connection that still serves (the follow-up
/// `GET /echo`) and no leak (``runCase(_:on:_:timeout:configure:prepare:during:sourceLocation:)``).
@Suite("Catalogue Q: HTTP/2 faults")
struct HTTP2FaultCases {
    /// Serves every connection after the first normally.
    private static func laterConnectionsServe(_ index: Int, _ connection: HTTP2PeerConnection) throws -> Bool {
        guard index > 0 else { return false }
        try connection.start()
        try connection.serve()
        return true
    }

    @Test("Q1 GOAWAY with streams in flight: the stream at the last stream id completes, the one above it is retried on a new connection")
    func goAwayInFlight() async throws {
        let (outcomes, peer) = try await runHTTP2Case([HTTPRequest(.get, "/a"), HTTPRequest(.get, "/b")]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard let first = try connection.nextRequest(), let second = try connection.nextRequest() else { return }
            let (low, _) = first.streamID < second.streamID ? (first, second) : (second, first)
            connection.send(.goAway(lastStreamID: low.streamID, code: .noError, debugData: []))
            connection.respond(low.streamID, body: Array(low.path.utf8))
            while try connection.nextFrame() != nil {}
        }
        #expect(outcomes.map { $0.response?.text } == ["/a", "/b"], "\(outcomes.map(\.result))")
        #expect(peer.connectionsAccepted == 2)
    }

    @Test("Q2 GOAWAY with no stream in flight: the next request goes out on a new connection")
    func goAwayIdle() async throws {
        let (outcomes, peer) = try await runHTTP2Case([HTTPRequest(.get, "/a")]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard let request = try connection.nextRequest() else { return }
            connection.respond(request.streamID, body: Array(request.path.utf8))
            connection.send(.goAway(lastStreamID: request.streamID, code: .noError, debugData: []))
            while try connection.nextFrame() != nil {}
        }
        #expect(outcomes[0].response?.text == "/a", "\(outcomes[0].result)")
        #expect(peer.connectionsAccepted == 2, "the follow-up must not use the connection that sent GOAWAY")
    }

    @Test("Q3 RST_STREAM with a common code fails the request with connectionLost naming the code; the connection serves on",
          arguments: [HTTP2ErrorCode.protocolError, .internalError, .cancel, .enhanceYourCalm, .streamClosed])
    func resetStream(code: HTTP2ErrorCode) async throws {
        let (outcomes, peer) = try await runHTTP2Case([HTTPRequest(.get, "/a")]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard let request = try connection.nextRequest() else { return }
            connection.send(.rstStream(streamID: request.streamID, code: code))
            try connection.serve()
        }
        #expect(outcomes[0].error == .connectionLost, "\(outcomes[0].result)")
        #expect(outcomes[0].error?.detail?.contains("\(code)") == true, "\(outcomes[0].result)")
        #expect(peer.connectionsAccepted == 1)
    }

    @Test("Q4 RST_STREAM(REFUSED_STREAM): the server did not process it, so it goes out again and succeeds")
    func refusedStream() async throws {
        let (outcomes, _) = try await runHTTP2Case([HTTPRequest(.post, "/a", body: .text("once"))]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard let request = try connection.nextRequest() else { return }
            connection.send(.rstStream(streamID: request.streamID, code: .refusedStream))
            try connection.serve()
        }
        #expect(outcomes[0].response?.text == "/a", "\(outcomes[0].result)")
    }

    @Test("Q5 SETTINGS_MAX_CONCURRENT_STREAMS = 1 with 100 requests: all succeed, one at a time, on one connection")
    func oneStreamAtATime() async throws {
        let requests = (0..<100).map { HTTPRequest(.get, "/r\($0)") }
        let (outcomes, peer) = try await runHTTP2Case(requests) { _, connection in
            try connection.start(settings: [HTTP2Setting(.maxConcurrentStreams, 1)])
            try connection.serve()
        }
        #expect(outcomes.enumerated().allSatisfy { $0.element.response?.text == "/r\($0.offset)" })
        #expect(peer.mostOpenStreams == 1)
        #expect(peer.connectionsAccepted == 1)
    }

    @Test("Q6 a stream window that never opens: the upload stalls and the request's timeout ends it")
    func zeroWindow() async throws {
        var upload = HTTPRequest(.post, "/upload", body: .data(Data(count: 100_000), contentType: "application/octet-stream"))
        upload.timeout = .seconds(1)
        let started = ContinuousClock.now
        let (outcomes, peer) = try await runHTTP2Case([upload]) { _, connection in
            try connection.start(settings: [HTTP2Setting(.initialWindowSize, 0)])
            try connection.serve()
        }
        #expect(outcomes[0].error == .timedOut, "\(outcomes[0].result)")
        #expect(ContinuousClock.now - started < .seconds(8))
        #expect(peer.connectionsAccepted == 1, "a stream timeout keeps the connection")
    }

    @Test("Q7 a bad HPACK index: COMPRESSION_ERROR ends the connection, the request fails with badResponse")
    func badHPACKIndex() async throws {
        let (outcomes, _) = try await runHTTP2Case([HTTPRequest(.get, "/a")]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard let request = try connection.nextRequest() else { return }
            // Indexed field 70: beyond the static table, and the dynamic table is empty.
            connection.send(.headers(streamID: request.streamID, fieldBlock: [0x80 | 70], endStream: true, endHeaders: true))
            while try connection.nextFrame() != nil {}
        }
        #expect(outcomes[0].error == .badResponse, "\(outcomes[0].result)")
        #expect(outcomes[0].error?.detail?.contains("COMPRESSION_ERROR") == true, "\(outcomes[0].result)")
    }

    @Test("Q8 a frame larger than SETTINGS_MAX_FRAME_SIZE: FRAME_SIZE_ERROR, badResponse")
    func oversizedFrame() async throws {
        let (outcomes, _) = try await runHTTP2Case([HTTPRequest(.get, "/a")]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard let request = try connection.nextRequest() else { return }
            connection.respond(request.streamID, end: false)
            let length = 20_000
            let id = request.streamID
            connection.sendRaw([UInt8(length >> 16), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length), 0x0, 0x0,
                                UInt8(id >> 24), UInt8(truncatingIfNeeded: id >> 16), UInt8(truncatingIfNeeded: id >> 8), UInt8(truncatingIfNeeded: id)]
                               + [UInt8](repeating: 0x61, count: length))
            while try connection.nextFrame() != nil {}
        }
        #expect(outcomes[0].error == .badResponse, "\(outcomes[0].result)")
        #expect(outcomes[0].error?.detail?.contains("FRAME_SIZE_ERROR") == true, "\(outcomes[0].result)")
    }

    @Test("Q9 a CONTINUATION flood: ENHANCE_YOUR_CALM before the block grows, badResponse")
    func continuationFlood() async throws {
        let (outcomes, _) = try await runHTTP2Case([HTTPRequest(.get, "/a")]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard let request = try connection.nextRequest() else { return }
            var frames = HTTP2Frame.headers(streamID: request.streamID, fieldBlock: [0x88], endStream: false, endHeaders: false).serialized
            for _ in 0..<1000 {
                HTTP2Frame.continuation(streamID: request.streamID, fieldBlock: [], endHeaders: false).serialize(into: &frames)
            }
            connection.sendRaw(frames)
            while try connection.nextFrame() != nil {}
        }
        #expect(outcomes[0].error == .badResponse, "\(outcomes[0].result)")
        #expect(outcomes[0].error?.detail?.contains("ENHANCE_YOUR_CALM") == true, "\(outcomes[0].result)")
    }

    @Test("Q10 a PING flood and a SETTINGS flood: ENHANCE_YOUR_CALM, badResponse naming the flood",
          arguments: ["PING", "SETTINGS"])
    func flood(kind: String) async throws {
        let (outcomes, _) = try await runHTTP2Case([HTTPRequest(.get, "/a")]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard try connection.nextRequest() != nil else { return }
            var frames: [UInt8] = []
            for i in 0..<1000 {
                (kind == "PING" ? HTTP2Frame.ping(opaque: UInt64(i), ack: false) : .settings([])).serialize(into: &frames)
            }
            connection.sendRaw(frames)
            while try connection.nextFrame() != nil {}
        }
        #expect(outcomes[0].error == .badResponse, "\(outcomes[0].result)")
        #expect(outcomes[0].error?.detail?.contains("\(kind) flood") == true, "\(outcomes[0].result)")
    }

    @Test("Q11 the server closes in the middle of DATA: connectionLost")
    func closeMidData() async throws {
        let (outcomes, _) = try await runHTTP2Case([HTTPRequest(.get, "/a")]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard let request = try connection.nextRequest() else { return }
            connection.respond(request.streamID, headers: [("content-length", "100000")], end: false)
            connection.send(.data(streamID: request.streamID, data: [UInt8](repeating: 1, count: 1000), endStream: false))
            connection.close()
        }
        #expect(outcomes[0].error == .connectionLost, "\(outcomes[0].result)")
    }

    @Test("Q12 SETTINGS never acknowledged: the connection fails with SETTINGS_TIMEOUT at the connect timeout, timedOut")
    func settingsNeverAcknowledged() async throws {
        let started = ContinuousClock.now
        let (outcomes, _) = try await runHTTP2Case([HTTPRequest(.get, "/a")], connectTimeout: .seconds(1)) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start(acknowledge: false)
            while try connection.nextFrame() != nil {}
        }
        #expect(outcomes[0].error == .timedOut, "\(outcomes[0].result)")
        #expect(outcomes[0].error?.detail?.contains("acknowledge") == true, "\(outcomes[0].result)")
        #expect(ContinuousClock.now - started < .seconds(8))
    }

    @Test("Q14 the server closes a pooled connection under a new request: a GET goes out once more on a new connection, a POST fails with connectionLost",
          arguments: [HTTPRequest.Method.get, .post])
    func staleConnection(method: HTTPRequest.Method) async throws {
        let (outcomes, peer) = try await runHTTP2Case([HTTPRequest(method, "/second")], prepare: { connection in
            // Makes the connection a pooled one that has carried a response.
            _ = try await connection.get("/first")
        }) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard let first = try connection.nextRequest() else { return }
            connection.respond(first.streamID, body: Array(first.path.utf8))
            // The next request arrives; the connection closes without a word.
            _ = try connection.nextRequest()
            connection.close()
        }
        if method == .get {
            #expect(outcomes[0].response?.text == "/second", "\(outcomes[0].result)")
        } else {
            #expect(outcomes[0].error == .connectionLost, "\(outcomes[0].result)")
        }
        #expect(peer.connectionsAccepted == 2)
    }

    @Test("Q15 the server drops a connection that allows one stream, with a request waiting for it: the one in flight fails with connectionLost, the waiting one goes out on a new connection")
    func dropWithRequestWaiting() async throws {
        // Found by the pool's random conversations: the end of the lost connection's stream freed
        // room, the pool placed the waiting request there, the closed connection sent it back as
        // refused, and after three such rounds it failed unsent.
        let (outcomes, peer) = try await runHTTP2Case([HTTPRequest(.get, "/a"), HTTPRequest(.get, "/b")]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start(settings: [HTTP2Setting(.maxConcurrentStreams, 1)])
            _ = try connection.nextRequest()
            connection.close()
        }
        let failed = outcomes.filter { $0.error == .connectionLost }
        let served = outcomes.compactMap { $0.response?.text }
        #expect(failed.count == 1 && served.count == 1, "\(outcomes.map(\.result))")
        #expect(served.allSatisfy { $0 == "/a" || $0 == "/b" })
        #expect(peer.connectionsAccepted == 2)
    }

    @Test("Q13 a response head over the header list limit: headTooLarge for that request; the connection serves on")
    func headerListTooLarge() async throws {
        let (outcomes, peer) = try await runHTTP2Case([HTTPRequest(.get, "/a")]) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            try connection.start()
            guard let request = try connection.nextRequest() else { return }
            let big = String(repeating: "x", count: 20_000)
            let fields = [(":status", "200")] + (0..<5).map { ("x-big-\($0)", big) }
            let block = connection.fieldBlock(fields)
            var frames: [UInt8] = []
            for frame in HTTP2Frame.headerFrames(streamID: request.streamID, fieldBlock: block, endStream: true, maxFrameSize: 16_384) {
                frame.serialize(into: &frames)
            }
            connection.sendRaw(frames)
            try connection.serve()
        }
        #expect(outcomes[0].error == .headTooLarge, "\(outcomes[0].result)")
        #expect(peer.connectionsAccepted == 1)
    }

    @Test("Q16 the server answers one upload, then drops the connection while another's 16 MiB body is still arriving, which resets it: the first gets its answer (read after the failed write), the second connectionLost (4 rounds: the reset races the answer)",
          arguments: 0..<4)
    func resetAfterAnswer(round: Int) async throws {
        let large = Data(repeating: 0x61, count: 16 << 20)
        let requests = [HTTPRequest(.post, "/small", body: .data(Data("hi".utf8))), HTTPRequest(.post, "/large", body: .data(large))]
        let (outcomes, _) = try await runHTTP2Case(requests) { index, connection in
            if try Self.laterConnectionsServe(index, connection) { return }
            // Windows wide open, so that the client is still writing the large body at the reset.
            try connection.start(settings: [HTTP2Setting(.initialWindowSize, 1 << 30)])
            connection.send(.windowUpdate(streamID: 0, increment: 1 << 30))
            var paths: [UInt32: String] = [:]
            var small: UInt32?
            var largeReceived = 0
            while let frame = try connection.nextFrame() {
                switch frame {
                case .headers(let id, let block, _, _, _, _):
                    paths[id] = connection.decodeFields(block).first { $0.name == ":path" }?.value
                case .data(let id, _, let endStream, _) where paths[id] == "/small" && endStream:
                    small = id
                case .data(let id, let data, _, _) where paths[id] == "/large":
                    largeReceived += data.count
                    // Deep into the large body, while the client writes as fast as it can: the
                    // answer, and at once the reset (the rest of the body lies unread).
                    guard let small, largeReceived >= 1 << 20 else { break }
                    connection.respond(small, body: Array("small stored".utf8))
                    connection.close()
                    return
                default:
                    break
                }
            }
        }
        #expect(outcomes[0].response?.text == "small stored", "\(outcomes[0].result)")
        #expect(outcomes[1].error == .connectionLost, "\(outcomes[1].result)")
    }
}

@testable import CourierHTTP2
import Testing

@Suite("HTTP/2 connection state machine")
struct HTTP2ConnectionStateMachineTests {
    @Test("start writes the preface, SETTINGS with push disabled, and the connection WINDOW_UPDATE")
    func preface() throws {
        var machine = HTTP2ConnectionStateMachine()
        let actions = machine.start()
        guard case .write(let bytes) = actions.first, actions.count == 1 else { Issue.record("\(actions)"); return }
        #expect(Array(bytes.prefix(24)) == Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8))
        var parser = HTTP2FrameParser(role: .server)
        parser.append(bytes)
        guard case .settings(let settings) = try parser.nextFrame() else { Issue.record("no SETTINGS"); return }
        #expect(settings.contains(HTTP2Setting(.enablePush, 0)))
        #expect(settings.contains(HTTP2Setting(.initialWindowSize, 1 << 20)))
        #expect(try parser.nextFrame() == .windowUpdate(streamID: 0, increment: UInt32(8 << 20) - 65_535))
        #expect(try parser.nextFrame() == nil)
    }

    @Test("the server's SETTINGS are acknowledged; an unexpected SETTINGS ACK is a connection error")
    func settingsExchange() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let actions = peer.machine.receive(HTTP2Frame.settingsAck.serialized)
        #expect(try peer.frames(actions) == [.goAway(lastStreamID: 0, code: .protocolError, debugData: [])])
        #expect(peer.events(actions) == [.closeConnection(error: .connection(.protocolError, "a SETTINGS acknowledgement came without SETTINGS"))])
        #expect(peer.machine.isClosed)
        #expect(peer.machine.receive(HTTP2Frame.ping(opaque: 1, ack: false).serialized).isEmpty)
    }

    @Test("streams open up to the peer's MAX_CONCURRENT_STREAMS; a finished stream frees a slot")
    func streamLimit() throws {
        var peer = try HTTP2ConnectionTestPeer(serverSettings: [HTTP2Setting(.maxConcurrentStreams, 2)])
        #expect(peer.machine.availableStreamCount == 2)
        #expect(try peer.get() == 1)
        #expect(try peer.get() == 3)
        #expect(peer.machine.availableStreamCount == 0)
        #expect(peer.machine.openStream(headers: [field(":method", "GET")], endStream: true) == nil)
        let finished = peer.machine.receive(peer.headers(1, [field(":status", "204")], endStream: true))
        #expect(peer.events(finished) == [.responseHead(streamID: 1, status: 204, fields: []), .streamFinished(streamID: 1)])
        #expect(peer.machine.availableStreamCount == 1)
        #expect(try peer.get() == 5)
    }

    @Test("a response in HEADERS + CONTINUATION, DATA and trailers, fed one byte at a time")
    func fullResponse() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let id = try peer.get()
        let block = peer.fieldBlock([field(":status", "200"), field("content-type", "text/plain"), field("x-long", String(repeating: "v", count: 40))])
        var input = HTTP2Frame.headers(streamID: id, fieldBlock: Array(block.prefix(10)), endStream: false, endHeaders: false).serialized
        input += HTTP2Frame.continuation(streamID: id, fieldBlock: Array(block[10..<20]), endHeaders: false).serialized
        input += HTTP2Frame.continuation(streamID: id, fieldBlock: Array(block[20...]), endHeaders: true).serialized
        input += HTTP2Frame.data(streamID: id, data: Array("hello ".utf8), endStream: false, padding: 3).serialized
        input += HTTP2Frame.data(streamID: id, data: Array("world".utf8), endStream: false).serialized
        input += peer.headers(id, [field("grpc-status", "0")], endStream: true)
        var events: [HTTP2ConnectionAction] = []
        for byte in input { events += peer.events(peer.machine.receive([byte])) }
        #expect(events == [
            .responseHead(streamID: id, status: 200, fields: [field("content-type", "text/plain"), field("x-long", String(repeating: "v", count: 40))]),
            .responseData(streamID: id, Array("hello ".utf8)),
            .responseData(streamID: id, Array("world".utf8)),
            .responseTrailers(streamID: id, [field("grpc-status", "0")]),
            .streamFinished(streamID: id),
        ])
        #expect(peer.machine.openStreamCount == 0)
    }

    @Test("interim 1xx heads are skipped; a malformed head resets the stream with PROTOCOL_ERROR")
    func heads() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let first = try peer.get()
        var actions = peer.machine.receive(peer.headers(first, [field(":status", "103"), field("link", "</a>")]))
        #expect(actions.isEmpty)
        actions = peer.machine.receive(peer.headers(first, [field(":status", "200")], endStream: true))
        #expect(peer.events(actions) == [.responseHead(streamID: first, status: 200, fields: []), .streamFinished(streamID: first)])
        for bad in [[field("content-type", "x")], [field(":status", "2000")], [field(":status", "200"), field(":path", "/")]] {
            let id = try peer.get()
            actions = peer.machine.receive(peer.headers(id, bad))
            #expect(try peer.frames(actions) == [.rstStream(streamID: id, code: .protocolError)])
            #expect(peer.events(actions) == [.streamFailed(streamID: id, HTTP2StreamFailure(
                code: .protocolError, retryable: false, reason: "the response head is malformed"))])
        }
        #expect(!peer.machine.isClosed)
    }

    @Test("DATA before the head, and trailers without END_STREAM, reset the stream")
    func misplacedFrames() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let id = try peer.get()
        var actions = peer.machine.receive(HTTP2Frame.data(streamID: id, data: [1], endStream: false).serialized)
        #expect(try peer.frames(actions) == [.rstStream(streamID: id, code: .protocolError)])
        let second = try peer.get()
        _ = peer.machine.receive(peer.headers(second, [field(":status", "200")]))
        actions = peer.machine.receive(peer.headers(second, [field("x-trailer", "1")]))
        #expect(try peer.frames(actions) == [.rstStream(streamID: second, code: .protocolError)])
    }

    @Test("received DATA is given back with WINDOW_UPDATE at half the window; overrunning a window is an error")
    func receiveFlowControl() throws {
        var configuration = HTTP2ConnectionStateMachine.Configuration()
        configuration.initialWindowSize = 100
        configuration.connectionWindowSize = 1000
        configuration.maxFrameSize = 100_000
        var peer = try HTTP2ConnectionTestPeer(configuration: configuration)
        let id = try peer.get()
        _ = peer.machine.receive(peer.headers(id, [field(":status", "200")]))
        var actions = peer.machine.receive(HTTP2Frame.data(streamID: id, data: [UInt8](repeating: 1, count: 40), endStream: false).serialized)
        #expect(try peer.frames(actions).isEmpty)
        actions = peer.machine.receive(HTTP2Frame.data(streamID: id, data: [UInt8](repeating: 1, count: 9), endStream: false, padding: 0).serialized)
        #expect(try peer.frames(actions) == [.windowUpdate(streamID: id, increment: 50)])
        // 50 left after the update gave 50 back: 51 octets overrun the stream window.
        actions = peer.machine.receive(HTTP2Frame.data(streamID: id, data: [UInt8](repeating: 1, count: 101), endStream: false).serialized)
        #expect(try peer.frames(actions) == [.rstStream(streamID: id, code: .flowControlError)])
        #expect(peer.events(actions).count == 1)
        // The connection window (65,535 with 151 used) is overrun by one large DATA on any stream.
        let other = try peer.get()
        _ = peer.machine.receive(peer.headers(other, [field(":status", "200")]))
        actions = peer.machine.receive(HTTP2Frame.data(streamID: other, data: [UInt8](repeating: 0, count: 65_400), endStream: false).serialized)
        #expect(try peer.frames(actions) == [.goAway(lastStreamID: 0, code: .flowControlError, debugData: [])])
        #expect(peer.events(actions) == [
            .streamFailed(streamID: other, HTTP2StreamFailure(code: .flowControlError, retryable: false, reason: "DATA exceeds the connection window")),
            .closeConnection(error: .connection(.flowControlError, "DATA exceeds the connection window")),
        ])
    }

    @Test("a request body waits for the peer's stream and connection windows; DATA a larger SETTINGS_INITIAL_WINDOW_SIZE releases follows the SETTINGS ACK")
    func sendFlowControl() throws {
        var peer = try HTTP2ConnectionTestPeer(serverSettings: [HTTP2Setting(.initialWindowSize, 20_000)])
        let id = try peer.get(endStream: false)
        var sent = try peer.frames(peer.machine.sendBody(streamID: id, [UInt8](repeating: 7, count: 70_000), endStream: true))
        #expect(sent.map(\.flowControlledLength) == [16_384, 3_616])
        // The stream window opens; the connection window (65,535) then limits.
        sent = try peer.frames(peer.machine.receive(HTTP2Frame.windowUpdate(streamID: id, increment: 100_000).serialized))
        #expect(sent.map(\.flowControlledLength).reduce(0, +) == 65_535 - 20_000)
        #expect(sent.allSatisfy { $0.flowControlledLength <= 16_384 })
        sent = try peer.frames(peer.machine.receive(HTTP2Frame.windowUpdate(streamID: 0, increment: 10_000).serialized))
        #expect(sent.map(\.flowControlledLength).reduce(0, +) == 70_000 - 65_535)
        guard case .data(_, _, true, _) = sent.last else { Issue.record("no END_STREAM: \(sent)"); return }
        // SETTINGS_INITIAL_WINDOW_SIZE changes apply to open streams (and may make them negative).
        let second = try peer.get(endStream: false)
        _ = peer.machine.receive(HTTP2Frame.windowUpdate(streamID: 0, increment: 100_000).serialized)
        sent = try peer.frames(peer.machine.receive(HTTP2Frame.settings([HTTP2Setting(.initialWindowSize, 0)]).serialized))
        #expect(sent == [.settingsAck])
        #expect(try peer.frames(peer.machine.sendBody(streamID: second, [1, 2, 3], endStream: true)).isEmpty)
        // The ACK comes before the DATA the larger window released: the server applies the new
        // window to what it receives once it reads the ACK (§6.5.3), as nghttp2 does.
        sent = try peer.frames(peer.machine.receive(HTTP2Frame.settings([HTTP2Setting(.initialWindowSize, 2)]).serialized))
        #expect(sent == [.settingsAck, .data(streamID: second, data: [1, 2], endStream: false)])
        sent = try peer.frames(peer.machine.receive(HTTP2Frame.windowUpdate(streamID: second, increment: 1).serialized))
        #expect(sent == [.data(streamID: second, data: [3], endStream: true)])
    }

    @Test("a WINDOW_UPDATE past 2^31 - 1 resets the stream, or ends the connection on stream 0")
    func windowOverflow() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let id = try peer.get(endStream: false)
        var actions = peer.machine.receive(HTTP2Frame.windowUpdate(streamID: id, increment: 0x7fff_ffff).serialized)
        #expect(try peer.frames(actions) == [.rstStream(streamID: id, code: .flowControlError)])
        actions = peer.machine.receive(HTTP2Frame.windowUpdate(streamID: 0, increment: 0x7fff_ffff).serialized)
        #expect(try peer.frames(actions) == [.goAway(lastStreamID: 0, code: .flowControlError, debugData: [])])
    }

    @Test("a WINDOW_UPDATE of 0 resets an open stream, is ignored on a closed one, and ends the connection on stream 0")
    func zeroWindowIncrement() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let open = try peer.get(endStream: false)
        let other = try peer.get(endStream: false)
        let zero = { (id: UInt32) in rawFrame(type: HTTP2Wire.windowUpdate, streamID: id, payload: [0, 0, 0, 0]) }
        var actions = peer.machine.receive(zero(open))
        #expect(try peer.frames(actions) == [.rstStream(streamID: open, code: .protocolError)])
        #expect(actions.contains { if case .streamFailed(open, let failure) = $0 { !failure.retryable } else { false } })
        #expect(!peer.machine.isOpen(open) && peer.machine.isOpen(other))
        // Stream `open` is closed now: a late WINDOW_UPDATE is ignored (§5.1, §6.9).
        actions = peer.machine.receive(zero(open))
        #expect(actions.isEmpty)
        actions = peer.machine.receive(zero(0))
        #expect(try peer.frames(actions) == [.goAway(lastStreamID: 0, code: .protocolError, debugData: [])])
        #expect(peer.machine.isClosed && !peer.machine.isOpen(other))
    }

    @Test("RST_STREAM from the server: REFUSED_STREAM is retryable, other codes are not")
    func peerReset() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let refused = try peer.get()
        let cancelled = try peer.get()
        let actions = peer.machine.receive(HTTP2Frame.rstStream(streamID: refused, code: .refusedStream).serialized
                                           + HTTP2Frame.rstStream(streamID: cancelled, code: .cancel).serialized)
        #expect(peer.events(actions) == [
            .streamFailed(streamID: refused, HTTP2StreamFailure(code: .refusedStream, retryable: true, reason: "the server reset the stream")),
            .streamFailed(streamID: cancelled, HTTP2StreamFailure(code: .cancel, retryable: false, reason: "the server reset the stream")),
        ])
        // An RST_STREAM on a stream never opened is a connection error.
        let idle = peer.machine.receive(HTTP2Frame.rstStream(streamID: 99, code: .cancel).serialized)
        #expect(try peer.frames(idle) == [.goAway(lastStreamID: 0, code: .protocolError, debugData: [])])
    }

    @Test("race: the client cancels while the server's END_STREAM is in flight; nothing is reported twice, HPACK stays in step")
    func cancelRace() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let id = try peer.get()
        let cancel = peer.machine.cancelStream(id)
        #expect(try peer.frames(cancel) == [.rstStream(streamID: id, code: .cancel)])
        #expect(peer.events(cancel).isEmpty)
        #expect(peer.machine.cancelStream(id).isEmpty)
        // The server had already answered, adding "x-new" to its HPACK table.
        let late = peer.headers(id, [field(":status", "200"), field("x-new", "value")])
            + HTTP2Frame.data(streamID: id, data: [1, 2, 3], endStream: true).serialized
            + HTTP2Frame.rstStream(streamID: id, code: .noError).serialized
        #expect(peer.machine.receive(late).isEmpty)
        // The next response refers to that table entry.
        let next = try peer.get()
        let actions = peer.machine.receive(peer.headers(next, [field(":status", "200"), field("x-new", "value")], endStream: true))
        #expect(peer.events(actions) == [.responseHead(streamID: next, status: 200, fields: [field("x-new", "value")]), .streamFinished(streamID: next)])
    }

    @Test("race: RST_STREAM from the server after the response ended is ignored")
    func resetAfterEnd() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let id = try peer.get()
        let actions = peer.machine.receive(peer.headers(id, [field(":status", "200")], endStream: true)
                                           + HTTP2Frame.rstStream(streamID: id, code: .internalError).serialized)
        #expect(peer.events(actions) == [.responseHead(streamID: id, status: 200, fields: []), .streamFinished(streamID: id)])
    }

    @Test("a response that ends before the request body is sent resets the stream with NO_ERROR")
    func earlyResponse() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let id = try peer.get(endStream: false)
        let actions = peer.machine.receive(peer.headers(id, [field(":status", "413")], endStream: true))
        #expect(try peer.frames(actions) == [.rstStream(streamID: id, code: .noError)])
        #expect(peer.events(actions) == [.responseHead(streamID: id, status: 413, fields: []), .streamFinished(streamID: id)])
        #expect(peer.machine.sendBody(streamID: id, [1], endStream: true).isEmpty)
    }

    @Test("PING is acknowledged with the same payload; a PING ACK needs no answer")
    func ping() throws {
        var peer = try HTTP2ConnectionTestPeer()
        #expect(try peer.frames(peer.machine.receive(HTTP2Frame.ping(opaque: 0xfeed, ack: false).serialized)) == [.ping(opaque: 0xfeed, ack: true)])
        #expect(peer.machine.receive(HTTP2Frame.ping(opaque: 1, ack: true).serialized).isEmpty)
    }

    @Test("GOAWAY with streams in flight: those above the last stream id fail as retryable, the others finish, then the connection closes")
    func goAwayInFlight() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let ids = try (0..<3).map { _ in try peer.get() }
        var actions = peer.machine.receive(HTTP2Frame.goAway(lastStreamID: ids[1], code: .noError, debugData: []).serialized)
        #expect(peer.events(actions) == [.streamFailed(streamID: ids[2], HTTP2StreamFailure(
            code: .noError, retryable: true, reason: "the server's GOAWAY says it did not process the stream"))])
        #expect(peer.machine.availableStreamCount == 0)
        #expect(peer.machine.openStream(headers: [field(":method", "GET")], endStream: true) == nil)
        actions = peer.machine.receive(peer.headers(ids[0], [field(":status", "200")], endStream: true))
        #expect(peer.events(actions) == [.responseHead(streamID: ids[0], status: 200, fields: []), .streamFinished(streamID: ids[0])])
        actions = peer.machine.receive(HTTP2Frame.rstStream(streamID: ids[1], code: .cancel).serialized)
        #expect(peer.events(actions) == [
            .streamFailed(streamID: ids[1], HTTP2StreamFailure(code: .cancel, retryable: false, reason: "the server reset the stream")),
            .closeConnection(error: nil),
        ])
        #expect(peer.machine.isClosed)
    }

    @Test("GOAWAY with no stream in flight closes at once; a cancel can be the last stream")
    func goAwayIdle() throws {
        var peer = try HTTP2ConnectionTestPeer()
        #expect(peer.events(peer.machine.receive(HTTP2Frame.goAway(lastStreamID: 0, code: .noError, debugData: []).serialized))
                == [.closeConnection(error: nil)])
        var second = try HTTP2ConnectionTestPeer()
        let id = try second.get()
        #expect(second.machine.receive(HTTP2Frame.goAway(lastStreamID: id, code: .noError, debugData: []).serialized).isEmpty)
        #expect(second.events(second.machine.cancelStream(id)) == [.closeConnection(error: nil)])
    }

    @Test("connection errors: an oversized frame, a bad HPACK index, HEADERS on a stream never opened or server-initiated")
    func connectionErrors() throws {
        let cases: [([UInt8], HTTP2ErrorCode)] = [
            (rawFrame(type: 0, streamID: 1, payload: [], length: 16_385), .frameSizeError),
            (HTTP2Frame.headers(streamID: 1, fieldBlock: [0xff, 0x00], endStream: true, endHeaders: true).serialized, .compressionError),
            (HTTP2Frame.headers(streamID: 7, fieldBlock: [0x88], endStream: true, endHeaders: true).serialized, .protocolError),
            (HTTP2Frame.headers(streamID: 2, fieldBlock: [0x88], endStream: true, endHeaders: true).serialized, .protocolError),
        ]
        for (input, code) in cases {
            var peer = try HTTP2ConnectionTestPeer()
            let id = try peer.get()
            let actions = peer.machine.receive(input)
            #expect(try peer.frames(actions) == [.goAway(lastStreamID: 0, code: code, debugData: [])])
            let events = peer.events(actions)
            #expect(events.count == 2)
            guard case .streamFailed(id, let failure) = events.first, case .closeConnection(let error?) = events.last else {
                Issue.record("\(events)")
                continue
            }
            #expect(failure.code == code && !failure.retryable)
            #expect(error.code == code)
            #expect(peer.machine.isClosed)
        }
    }
}

@Suite("HTTP/2 connection state machine, edges")
struct HTTP2ConnectionStateMachineEdgeTests {
    @Test("a bad PRIORITY frame on a stream never opened is ignored, not answered with RST_STREAM")
    func priorityOnIdleStream() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let actions = peer.machine.receive(rawFrame(type: HTTP2Wire.priority, streamID: 41, payload: [0, 0, 0, 1]))
        #expect(actions.isEmpty)
        #expect(!peer.machine.isClosed)
    }

    @Test("HTTP2ConnectionFuzzer a frame on an even stream id, a WINDOW_UPDATE of 0 too, ends the connection and writes no RST_STREAM")
    func evenStreamIDs() throws {
        // Found by the fuzzer: a WINDOW_UPDATE of 0 on stream 4, below the next id to open, was
        // answered with RST_STREAM on a stream that never existed, which a server must treat
        // as a connection error. Push is disabled, so an even id is always idle (§5.1).
        // Any frame but HEADERS or PRIORITY there ends the connection, a WINDOW_UPDATE of 0 too.
        let frames: [[UInt8]] = [
            rawFrame(type: HTTP2Wire.windowUpdate, streamID: 2, payload: [0, 0, 0, 0]),
            HTTP2Frame.windowUpdate(streamID: 2, increment: 10).serialized,
            HTTP2Frame.data(streamID: 2, data: [1], endStream: false).serialized,
            HTTP2Frame.rstStream(streamID: 2, code: .cancel).serialized,
        ]
        for frame in frames {
            var peer = try HTTP2ConnectionTestPeer()
            let id = try peer.get()
            _ = try peer.get()
            let actions = peer.machine.receive(frame)
            #expect(try peer.frames(actions) == [.goAway(lastStreamID: 0, code: .protocolError, debugData: [])])
            #expect(peer.machine.isClosed && !peer.machine.isOpen(id))
        }
    }

    @Test("a large request body is written in frames of the peer's maximum size as windows open, every octet once")
    func largeBody() throws {
        var peer = try HTTP2ConnectionTestPeer(serverSettings: [HTTP2Setting(.initialWindowSize, 0x7fff_ffff)])
        _ = peer.machine.receive(HTTP2Frame.windowUpdate(streamID: 0, increment: 0x7fff_ffff - 65_535).serialized)
        let id = try peer.get(endStream: false)
        let body = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var sent = try peer.frames(peer.machine.sendBody(streamID: id, Array(body[..<400_000]), endStream: false))
        sent += try peer.frames(peer.machine.sendBody(streamID: id, Array(body[400_000...]), endStream: true))
        var received: [UInt8] = []
        for case .data(_, let data, _, _) in sent { received += data }
        #expect(received == body)
        #expect(sent.allSatisfy { $0.flowControlledLength <= 16_384 })
        guard case .data(_, _, true, _) = sent.last else { Issue.record("no END_STREAM"); return }
    }
}

@Suite("HTTP/2 malformed responses (RFC 9113 §8.2)")
struct HTTP2MalformedResponseTests {
    @Test("uppercase names, connection-specific fields, CR/LF/NUL or padded values, and a bad te reset the stream")
    func malformedHeads() throws {
        let cases: [(HPACKHeaderField, String)] = [
            (field("Content-Type", "x"), "a field name is not a lowercase token"),
            (field("bad name", "x"), "a field name is not a lowercase token"),
            (field("x-a", "one\r\nset-cookie: injected"), "a field value contains NUL, CR or LF, or surrounding whitespace"),
            (field("x-a", "nul\u{0}"), "a field value contains NUL, CR or LF, or surrounding whitespace"),
            (field("x-a", " padded"), "a field value contains NUL, CR or LF, or surrounding whitespace"),
            (field("connection", "keep-alive"), "a connection-specific field is present"),
            (field("transfer-encoding", "chunked"), "a connection-specific field is present"),
            (field("te", "gzip"), "a te field is not \"trailers\""),
        ]
        var peer = try HTTP2ConnectionTestPeer()
        for (bad, reason) in cases {
            let id = try peer.get()
            let actions = peer.machine.receive(peer.headers(id, [field(":status", "200"), bad]))
            #expect(try peer.frames(actions) == [.rstStream(streamID: id, code: .protocolError)])
            #expect(peer.events(actions) == [.streamFailed(streamID: id, HTTP2StreamFailure(
                code: .protocolError, retryable: false, reason: "the response head is malformed: " + reason))])
        }
        let id = try peer.get()
        let good = peer.machine.receive(peer.headers(id, [field(":status", "200"), field("te", "trailers"), field("x-a", "in ner")], endStream: true))
        #expect(peer.events(good) == [.responseHead(streamID: id, status: 200, fields: [field("te", "trailers"), field("x-a", "in ner")]),
                                      .streamFinished(streamID: id)])
    }

    @Test("trailers with a pseudo-header field or an uppercase name reset the stream")
    func malformedTrailers() throws {
        var peer = try HTTP2ConnectionTestPeer()
        for bad in [field(":status", "200"), field("X-Trailer", "1")] {
            let id = try peer.get()
            _ = peer.machine.receive(peer.headers(id, [field(":status", "200")]))
            let actions = peer.machine.receive(peer.headers(id, [bad], endStream: true))
            #expect(try peer.frames(actions) == [.rstStream(streamID: id, code: .protocolError)])
            guard case .streamFailed(id, let failure) = peer.events(actions).first else { Issue.record("no failure"); continue }
            #expect(failure.reason.hasPrefix("the trailers are malformed"))
        }
    }
}

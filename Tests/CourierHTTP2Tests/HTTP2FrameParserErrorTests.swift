@testable import CourierHTTP2
import Testing

@Suite("HTTP/2 frame parser errors")
struct HTTP2FrameParserErrorTests {
    /// Expects `bytes` (after the peer's initial SETTINGS) to fail with a connection error with `code`.
    private func expectConnectionError(_ bytes: [UInt8], _ code: HTTP2ErrorCode, role: HTTP2FrameParser.Role = .client,
                                       afterSettings: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) {
        for chunk in [1, bytes.count + 9] {
            let result = parseAll(bytes, role: role, chunk: chunk, afterSettings: afterSettings)
            #expect(result.error?.code == code, sourceLocation: sourceLocation)
            #expect(result.error?.isConnectionError == true, sourceLocation: sourceLocation)
        }
    }

    /// Expects a stream error with `code` on `streamID`, after which a PING still parses.
    private func expectStreamError(_ bytes: [UInt8], _ code: HTTP2ErrorCode, streamID: UInt32,
                                   sourceLocation: SourceLocation = #_sourceLocation) {
        var parser = HTTP2FrameParser(role: .client)
        parser.append(initialSettings + bytes + HTTP2Frame.ping(opaque: 1, ack: false).serialized)
        #expect((try? parser.nextFrame()) == .settings([]), sourceLocation: sourceLocation)
        do {
            _ = try parser.nextFrame()
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, sourceLocation: sourceLocation)
            #expect(error.streamID == streamID, sourceLocation: sourceLocation)
        }
        #expect((try? parser.nextFrame()) == .ping(opaque: 1, ack: false), sourceLocation: sourceLocation)
    }

    @Test("a frame over SETTINGS_MAX_FRAME_SIZE is FRAME_SIZE_ERROR as soon as its header arrives")
    func oversizedFrame() {
        let header = rawFrame(type: HTTP2Wire.data, streamID: 1, payload: [], length: 16_385)
        expectConnectionError(header, .frameSizeError)
        // A larger advertised size accepts it.
        let frame = rawFrame(type: HTTP2Wire.data, streamID: 1, payload: [UInt8](repeating: 0, count: 16_385))
        #expect(parseAll(frame, maxFrameSize: 20_000).error == nil)
        // The limit applies to every type, unknown ones too.
        expectConnectionError(rawFrame(type: 0xee, streamID: 0, payload: [], length: 1 << 24 - 1), .frameSizeError)
    }

    @Test("the peer's first frame must be SETTINGS without ACK; a server needs the client preface")
    func prefaceOrder() {
        expectConnectionError(HTTP2Frame.ping(opaque: 0, ack: false).serialized, .protocolError, afterSettings: false)
        expectConnectionError(HTTP2Frame.settingsAck.serialized, .protocolError, afterSettings: false)
        expectConnectionError(Array("GET / HTTP/1.1\r\n\r\n".utf8), .protocolError, role: .server, afterSettings: false)
        expectConnectionError(HTTP2Wire.clientPreface + HTTP2Frame.windowUpdate(streamID: 0, increment: 1).serialized,
                              .protocolError, role: .server, afterSettings: false)
    }

    @Test("DATA: stream 0, padding as long as the payload, a padded frame with no pad length")
    func dataErrors() {
        expectConnectionError(rawFrame(type: HTTP2Wire.data, streamID: 0, payload: [1]), .protocolError)
        expectConnectionError(rawFrame(type: HTTP2Wire.data, flags: HTTP2Wire.padded, streamID: 1, payload: [3, 0, 0]), .protocolError)
        expectConnectionError(rawFrame(type: HTTP2Wire.data, flags: HTTP2Wire.padded, streamID: 1, payload: []), .frameSizeError)
    }

    @Test("HEADERS: stream 0, priority fields cut short, padding too long, a self-dependency")
    func headersErrors() {
        expectConnectionError(rawFrame(type: HTTP2Wire.headers, flags: HTTP2Wire.endHeaders, streamID: 0, payload: [0x82]), .protocolError)
        expectConnectionError(rawFrame(type: HTTP2Wire.headers, flags: HTTP2Wire.priorityFlag | HTTP2Wire.endHeaders,
                                       streamID: 1, payload: [0, 0, 0, 0]), .frameSizeError)
        expectConnectionError(rawFrame(type: HTTP2Wire.headers, flags: HTTP2Wire.padded | HTTP2Wire.priorityFlag | HTTP2Wire.endHeaders,
                                       streamID: 1, payload: [1, 0, 0, 0, 0, 15]), .protocolError)
        expectConnectionError(rawFrame(type: HTTP2Wire.headers, flags: HTTP2Wire.priorityFlag | HTTP2Wire.endHeaders,
                                       streamID: 3, payload: [0, 0, 0, 3, 15, 0x82]), .protocolError)
    }

    @Test("PRIORITY: stream 0 ends the connection; a wrong length or a self-dependency resets the stream")
    func priorityErrors() {
        expectConnectionError(rawFrame(type: HTTP2Wire.priority, streamID: 0, payload: [0, 0, 0, 1, 15]), .protocolError)
        expectStreamError(rawFrame(type: HTTP2Wire.priority, streamID: 5, payload: [0, 0, 0, 1]), .frameSizeError, streamID: 5)
        expectStreamError(rawFrame(type: HTTP2Wire.priority, streamID: 5, payload: [0, 0, 0, 5, 15]), .protocolError, streamID: 5)
    }

    @Test("RST_STREAM: stream 0, length other than 4")
    func rstStreamErrors() {
        expectConnectionError(rawFrame(type: HTTP2Wire.rstStream, streamID: 0, payload: [0, 0, 0, 8]), .protocolError)
        expectConnectionError(rawFrame(type: HTTP2Wire.rstStream, streamID: 1, payload: [0, 0, 8]), .frameSizeError)
    }

    @Test("SETTINGS: on a stream, an ACK with a payload, a length not a multiple of 6")
    func settingsFraming() {
        expectConnectionError(rawFrame(type: HTTP2Wire.settings, streamID: 1, payload: []), .protocolError)
        expectConnectionError(rawFrame(type: HTTP2Wire.settings, flags: HTTP2Wire.ack, streamID: 0, payload: [0, 0, 0, 0, 0, 0]), .frameSizeError)
        expectConnectionError(rawFrame(type: HTTP2Wire.settings, streamID: 0, payload: [0, 2, 0, 0, 0, 0, 0]), .frameSizeError)
    }

    @Test("SETTINGS values are checked as §6.5.2 says, and unknown identifiers pass")
    func settingsValues() {
        func settings(_ id: HTTP2Setting.Identifier, _ value: UInt32) -> [UInt8] {
            HTTP2Frame.settings([HTTP2Setting(id, value)]).serialized
        }
        expectConnectionError(settings(.enablePush, 2), .protocolError)
        expectConnectionError(settings(.enablePush, 1), .protocolError)
        expectConnectionError(settings(.initialWindowSize, 0x8000_0000), .flowControlError)
        expectConnectionError(settings(.maxFrameSize, 16_383), .protocolError)
        expectConnectionError(settings(.maxFrameSize, 16_777_216), .protocolError)
        for valid in [settings(.initialWindowSize, 0x7fff_ffff), settings(.maxFrameSize, 16_384), settings(.enablePush, 0),
                      settings(.maxConcurrentStreams, 0), settings(HTTP2Setting.Identifier(rawValue: 0xabcd), .max)] {
            #expect(parseAll(valid).error == nil)
        }
    }

    @Test("PUSH_PROMISE is a connection error: push is disabled")
    func pushPromise() {
        let frame = HTTP2Frame.pushPromise(streamID: 1, promisedStreamID: 2, fieldBlock: [0x82], endHeaders: true)
        expectConnectionError(frame.serialized, .protocolError)
        expectConnectionError(HTTP2Wire.clientPreface + initialSettings + frame.serialized, .protocolError, role: .server, afterSettings: false)
    }

    @Test("PING and GOAWAY: on a stream, wrong lengths")
    func pingAndGoAway() {
        expectConnectionError(rawFrame(type: HTTP2Wire.ping, streamID: 1, payload: [UInt8](repeating: 0, count: 8)), .protocolError)
        expectConnectionError(rawFrame(type: HTTP2Wire.ping, streamID: 0, payload: [UInt8](repeating: 0, count: 7)), .frameSizeError)
        expectConnectionError(rawFrame(type: HTTP2Wire.ping, streamID: 0, payload: [UInt8](repeating: 0, count: 9)), .frameSizeError)
        expectConnectionError(rawFrame(type: HTTP2Wire.goAway, streamID: 1, payload: [UInt8](repeating: 0, count: 8)), .protocolError)
        expectConnectionError(rawFrame(type: HTTP2Wire.goAway, streamID: 0, payload: [UInt8](repeating: 0, count: 7)), .frameSizeError)
    }

    @Test("WINDOW_UPDATE: a wrong length ends the connection; a zero increment is left to the state machine, which knows the stream")
    func windowUpdate() throws {
        expectConnectionError(rawFrame(type: HTTP2Wire.windowUpdate, streamID: 1, payload: [0, 0, 1]), .frameSizeError)
        var parser = HTTP2FrameParser(role: .client)
        parser.append(initialSettings + rawFrame(type: HTTP2Wire.windowUpdate, streamID: 0, payload: [0, 0, 0, 0])
                      + rawFrame(type: HTTP2Wire.windowUpdate, streamID: 7, payload: [0x80, 0, 0, 0]))
        #expect(try parser.nextFrame() == .settings([]))
        #expect(try parser.nextFrame() == .windowUpdate(streamID: 0, increment: 0))
        #expect(try parser.nextFrame() == .windowUpdate(streamID: 7, increment: 0))  // the reserved bit is dropped
    }

    @Test("CONTINUATION: on stream 0, with no open block, on another stream, or a block interrupted by any frame")
    func continuationOrder() {
        let open = HTTP2Frame.headers(streamID: 1, fieldBlock: [0x82], endStream: false, endHeaders: false).serialized
        expectConnectionError(rawFrame(type: HTTP2Wire.continuation, flags: HTTP2Wire.endHeaders, streamID: 0, payload: []), .protocolError)
        expectConnectionError(HTTP2Frame.continuation(streamID: 1, fieldBlock: [], endHeaders: true).serialized, .protocolError)
        expectConnectionError(open + HTTP2Frame.continuation(streamID: 3, fieldBlock: [], endHeaders: true).serialized, .protocolError)
        expectConnectionError(open + HTTP2Frame.ping(opaque: 0, ack: false).serialized, .protocolError)
        expectConnectionError(open + rawFrame(type: 0xfa, streamID: 1, payload: []), .protocolError)
        // After END_HEADERS, a CONTINUATION has nothing to continue.
        let closed = open + HTTP2Frame.continuation(streamID: 1, fieldBlock: [], endHeaders: true).serialized
        expectConnectionError(closed + HTTP2Frame.continuation(streamID: 1, fieldBlock: [], endHeaders: true).serialized, .protocolError)
    }

    @Test("a CONTINUATION flood (too many frames, or too many octets) is ENHANCE_YOUR_CALM")
    func continuationFlood() {
        let open = HTTP2Frame.headers(streamID: 1, fieldBlock: [0x82], endStream: false, endHeaders: false).serialized
        let empty = HTTP2Frame.continuation(streamID: 1, fieldBlock: [], endHeaders: false).serialized
        expectConnectionError(open + Array([[UInt8]](repeating: empty, count: 65).joined()), .enhanceYourCalm)
        #expect(parseAll(open + Array([[UInt8]](repeating: empty, count: 64).joined())).error == nil)
        let big = HTTP2Frame.continuation(streamID: 1, fieldBlock: [UInt8](repeating: 0, count: 16_384), endHeaders: false).serialized
        expectConnectionError(open + Array([[UInt8]](repeating: big, count: 16).joined()), .enhanceYourCalm)
    }

    @Test("after a connection error every call throws it again")
    func sticky() {
        var parser = HTTP2FrameParser(role: .client)
        parser.append(HTTP2Frame.ping(opaque: 0, ack: false).serialized)
        #expect(throws: HTTP2ProtocolError.self) { try parser.nextFrame() }
        parser.append(initialSettings)
        #expect(throws: HTTP2ProtocolError.connection(.protocolError, "the peer's first frame is not SETTINGS")) { try parser.nextFrame() }
    }
}

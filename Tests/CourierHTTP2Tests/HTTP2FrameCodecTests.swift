@testable import CourierHTTP2
import Testing

@Suite("HTTP/2 frame codec")
struct HTTP2FrameCodecTests {
    static let samples: [HTTP2Frame] = [
        .data(streamID: 1, data: Array("hello".utf8), endStream: false),
        .data(streamID: 3, data: [], endStream: true),
        .data(streamID: 5, data: [1, 2, 3], endStream: true, padding: 7),
        .data(streamID: 7, data: [9], endStream: false, padding: 0),
        .headers(streamID: 1, fieldBlock: [0x82, 0x86], endStream: true, endHeaders: true),
        .headers(streamID: 3, fieldBlock: [0x88], endStream: false, endHeaders: false,
                 priority: HTTP2Priority(exclusive: true, dependency: 1, weight: 200), padding: 4),
        .headers(streamID: 5, fieldBlock: [], endStream: false, endHeaders: true, priority: HTTP2Priority()),
        .priority(streamID: 9, HTTP2Priority(exclusive: false, dependency: 3, weight: 0)),
        .rstStream(streamID: 3, code: .cancel),
        .rstStream(streamID: 5, code: HTTP2ErrorCode(rawValue: 0xdead)),
        .settings([HTTP2Setting(.enablePush, 0), HTTP2Setting(.maxConcurrentStreams, 100),
                   HTTP2Setting(.initialWindowSize, 0x7fff_ffff), HTTP2Setting(.maxFrameSize, 16_777_215),
                   HTTP2Setting(.headerTableSize, 0), HTTP2Setting(.maxHeaderListSize, 65_536),
                   HTTP2Setting(HTTP2Setting.Identifier(rawValue: 0x99), 12345)]),
        .settingsAck,
        .ping(opaque: 0x0102_0304_0506_0708, ack: false),
        .ping(opaque: .max, ack: true),
        .goAway(lastStreamID: 7, code: .enhanceYourCalm, debugData: Array("calm down".utf8)),
        .goAway(lastStreamID: 0x7fff_ffff, code: .noError, debugData: []),
        .windowUpdate(streamID: 0, increment: 1),
        .windowUpdate(streamID: 3, increment: 0x7fff_ffff),
    ]

    @Test("the frame header encodes and decodes, dropping the reserved bit")
    func header() {
        let header = HTTP2FrameHeader(length: 0x01_02_03, type: 0x9, flags: 0x24, streamID: 0x7fff_fffe)
        var bytes: [UInt8] = []
        header.encode(into: &bytes)
        #expect(bytes == [0x01, 0x02, 0x03, 0x09, 0x24, 0x7f, 0xff, 0xff, 0xfe])
        #expect(HTTP2FrameHeader(decoding: bytes, at: 0) == header)
        bytes[5] |= 0x80
        #expect(HTTP2FrameHeader(decoding: bytes, at: 0).streamID == 0x7fff_fffe)
    }

    @Test("every frame round-trips through serialize and parse")
    func roundTrips() {
        for frame in Self.samples {
            var input = frame.serialized
            // A HEADERS without END_HEADERS needs its CONTINUATION before another frame.
            var expected = [frame]
            if case .headers(let id, _, _, false, _, _) = frame {
                let last = HTTP2Frame.continuation(streamID: id, fieldBlock: [0x01], endHeaders: true)
                input += last.serialized
                expected.append(last)
            }
            let result = parseAll(input)
            #expect(result.error == nil, "\(frame)")
            #expect(result.frames == expected)
        }
    }

    @Test("known wire forms: SETTINGS ACK, PING, WINDOW_UPDATE, RST_STREAM, padded DATA")
    func wireForms() {
        #expect(HTTP2Frame.settingsAck.serialized == [0, 0, 0, 4, 1, 0, 0, 0, 0])
        #expect(HTTP2Frame.ping(opaque: 1, ack: true).serialized == [0, 0, 8, 6, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
        #expect(HTTP2Frame.windowUpdate(streamID: 1, increment: 1000).serialized == [0, 0, 4, 8, 0, 0, 0, 0, 1, 0, 0, 0x03, 0xe8])
        #expect(HTTP2Frame.rstStream(streamID: 3, code: .refusedStream).serialized == [0, 0, 4, 3, 0, 0, 0, 0, 3, 0, 0, 0, 7])
        #expect(HTTP2Frame.data(streamID: 1, data: [0xaa], endStream: true, padding: 2).serialized
                == [0, 0, 4, 0, 0x09, 0, 0, 0, 1, 2, 0xaa, 0, 0])
        #expect(HTTP2Frame.data(streamID: 1, data: [0xaa], endStream: true, padding: 2).flowControlledLength == 4)
        #expect(HTTP2Frame.settings([HTTP2Setting(.enablePush, 0)]).serialized == [0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0])
    }

    @Test("parsing gives the same frames however the input is split, byte by byte included")
    func splitsAreInvisible() {
        var input: [UInt8] = []
        var expected: [HTTP2Frame] = []
        for frame in Self.samples {
            input += frame.serialized
            expected.append(frame)
            if case .headers(let id, _, _, false, _, _) = frame {
                let last = HTTP2Frame.continuation(streamID: id, fieldBlock: [0x01, 0x02], endHeaders: true)
                input += last.serialized
                expected.append(last)
            }
        }
        // An unknown frame type in between is skipped wherever the split falls.
        input += rawFrame(type: 0xfa, flags: 0xff, streamID: 5, payload: [1, 2, 3, 4])
        input += HTTP2Frame.ping(opaque: 42, ack: false).serialized
        expected.append(.ping(opaque: 42, ack: false))
        for chunk in [1, 2, 3, 7, 9, 10, 64, input.count] {
            let result = parseAll(input, chunk: chunk)
            #expect(result.error == nil, "chunk \(chunk)")
            #expect(result.frames == expected, "chunk \(chunk)")
        }
    }

    @Test("a field block is split into HEADERS and CONTINUATION frames at the peer's frame size")
    func headerFrames() {
        let block = (0..<40).map { UInt8($0) }
        let frames = HTTP2Frame.headerFrames(streamID: 3, fieldBlock: block, endStream: true, maxFrameSize: 16)
        #expect(frames == [
            .headers(streamID: 3, fieldBlock: Array(block[0..<16]), endStream: true, endHeaders: false),
            .continuation(streamID: 3, fieldBlock: Array(block[16..<32]), endHeaders: false),
            .continuation(streamID: 3, fieldBlock: Array(block[32..<40]), endHeaders: true),
        ])
        #expect(HTTP2Frame.headerFrames(streamID: 1, fieldBlock: [], endStream: false, maxFrameSize: 16)
                == [.headers(streamID: 1, fieldBlock: [], endStream: false, endHeaders: true)])
        let parsed = parseAll(frames.flatMap(\.serialized), chunk: 5)
        #expect(parsed.error == nil)
        #expect(parsed.frames == frames)
    }

    @Test("a server-role parser reads the client preface first, split anywhere")
    func clientPreface() {
        let input = HTTP2Wire.clientPreface + initialSettings + HTTP2Frame.ping(opaque: 5, ack: false).serialized
        for chunk in [1, 5, 24, input.count] {
            let result = parseAll(input, role: .server, chunk: chunk, afterSettings: false)
            #expect(result.error == nil)
            #expect(result.frames == [.settings([]), .ping(opaque: 5, ack: false)])
        }
    }

    @Test("a server-role parser accepts SETTINGS_ENABLE_PUSH = 1 from a client")
    func clientMayEnablePush() {
        let input = HTTP2Wire.clientPreface + HTTP2Frame.settings([HTTP2Setting(.enablePush, 1)]).serialized
        let result = parseAll(input, role: .server, afterSettings: false)
        #expect(result.error == nil)
        #expect(result.frames == [.settings([HTTP2Setting(.enablePush, 1)])])
    }

    @Test("error codes are named as in the RFC")
    func errorCodeNames() {
        #expect(HTTP2ErrorCode.refusedStream.description == "REFUSED_STREAM")
        #expect(HTTP2ErrorCode.http11Required.description == "HTTP_1_1_REQUIRED")
        #expect(HTTP2ErrorCode(rawValue: 0xff).description == "0xff")
        #expect(HTTP2ProtocolError.stream(.cancel, 3, "x").description == "Stream 3 error CANCEL: x")
        #expect(HTTP2ProtocolError.connection(.protocolError, "y").description == "Connection error PROTOCOL_ERROR: y")
    }
}

/// A typed HTTP/2 frame (RFC 9113 §6).
///
/// `padding` is the number of padding octets when the PADDED flag is set (`nil` when it is
/// not); padding is never delivered as data, but counts against flow control
/// (`flowControlledLength`). Priority fields are parsed and kept only so they round-trip:
/// RFC 9113 deprecates the scheme, and Courier ignores them.
public enum HTTP2Frame: Sendable, Equatable {
    /// DATA (§6.1): body octets of a stream.
    case data(streamID: UInt32, data: [UInt8], endStream: Bool, padding: UInt8? = nil)
    /// HEADERS (§6.2): the start of a field block; CONTINUATION frames follow unless
    /// `endHeaders` is set.
    case headers(streamID: UInt32, fieldBlock: [UInt8], endStream: Bool, endHeaders: Bool,
                 priority: HTTP2Priority? = nil, padding: UInt8? = nil)
    /// PRIORITY (§6.3): deprecated; parsed and ignored.
    case priority(streamID: UInt32, HTTP2Priority)
    /// RST_STREAM (§6.4): ends one stream with an error code.
    case rstStream(streamID: UInt32, code: HTTP2ErrorCode)
    /// SETTINGS (§6.5) with parameters, in the order sent.
    case settings([HTTP2Setting])
    /// SETTINGS with the ACK flag (§6.5): the peer applied our SETTINGS.
    case settingsAck
    /// PUSH_PROMISE (§6.6). Courier disables push, so its parser rejects this frame; the case
    /// exists so that a test peer can send one.
    case pushPromise(streamID: UInt32, promisedStreamID: UInt32, fieldBlock: [UInt8], endHeaders: Bool, padding: UInt8? = nil)
    /// PING (§6.7): 8 opaque octets, echoed with `ack` set.
    case ping(opaque: UInt64, ack: Bool)
    /// GOAWAY (§6.8): the connection ends; streams above `lastStreamID` were not processed.
    case goAway(lastStreamID: UInt32, code: HTTP2ErrorCode, debugData: [UInt8])
    /// WINDOW_UPDATE (§6.9): grows a stream's window, or the connection's for stream 0.
    case windowUpdate(streamID: UInt32, increment: UInt32)
    /// CONTINUATION (§6.10): more of a field block.
    case continuation(streamID: UInt32, fieldBlock: [UInt8], endHeaders: Bool)

    /// The stream the frame is on (0 for connection-level frames).
    public var streamID: UInt32 {
        switch self {
        case .data(let id, _, _, _), .headers(let id, _, _, _, _, _), .priority(let id, _),
             .rstStream(let id, _), .pushPromise(let id, _, _, _, _), .windowUpdate(let id, _),
             .continuation(let id, _, _):
            id
        case .settings, .settingsAck, .ping, .goAway:
            0
        }
    }

    /// The octets that count against flow-control windows: a DATA frame's whole payload
    /// (data, the pad length octet and the padding, §6.9.1); 0 for other frames.
    public var flowControlledLength: Int {
        guard case .data(_, let data, _, let padding) = self else { return 0 }
        return data.count + (padding.map { Int($0) + 1 } ?? 0)
    }

    /// Splits a field block into a HEADERS frame and as many CONTINUATION frames as
    /// `maxFrameSize` needs (§4.3: they are sent back to back, nothing in between).
    /// - Parameters:
    ///   - streamID: The stream.
    ///   - fieldBlock: The encoded field block.
    ///   - endStream: Whether the HEADERS frame ends the stream (no body follows).
    ///   - maxFrameSize: The peer's SETTINGS_MAX_FRAME_SIZE.
    /// - Returns: The frames to send in order.
    public static func headerFrames(streamID: UInt32, fieldBlock: [UInt8], endStream: Bool, maxFrameSize: Int) -> [HTTP2Frame] {
        precondition(maxFrameSize > 0)
        var frames: [HTTP2Frame] = []
        var start = 0
        repeat {
            let end = Swift.min(start + maxFrameSize, fieldBlock.count)
            let chunk = Array(fieldBlock[start..<end])
            let last = end == fieldBlock.count
            frames.append(start == 0
                ? .headers(streamID: streamID, fieldBlock: chunk, endStream: endStream, endHeaders: last)
                : .continuation(streamID: streamID, fieldBlock: chunk, endHeaders: last))
            start = end
        } while start < fieldBlock.count
        return frames
    }
}

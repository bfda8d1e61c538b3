/// Turns received octets, split anywhere, into typed frames (RFC 9113 §4, §6), checking every
/// size, flag and stream-identifier rule that does not need stream state.
///
/// Feed octets with `append(_:)`, then call `nextFrame()` until it returns `nil` (more octets
/// are needed). Frames of unknown types are skipped. Checks, each mapped to its RFC error code:
/// a frame longer than `maxFrameSize` (checked from the header, before the payload arrives);
/// the first frame from the peer not being SETTINGS (§3.4); wrong lengths for fixed-size frames;
/// padding as long as the payload; frames on stream 0 that need a stream and the reverse; any
/// frame other than a CONTINUATION on the same stream inside a field block (§6.10); invalid
/// SETTINGS values (§6.5.2); any PUSH_PROMISE (push is disabled); and a field block over
/// `maxFieldBlockSize` octets or `maxContinuationFrames` CONTINUATION frames (a CONTINUATION
/// flood, ENHANCE_YOUR_CALM). A WINDOW_UPDATE increment of 0 is returned as it came: whether it
/// ends the stream or the connection depends on the stream's state, which the connection's
/// state machine holds.
///
/// A connection error is thrown from then on. A stream error (`streamID` set) consumed its
/// frame: the caller resets that stream and may keep calling `nextFrame()`.
///
/// Octets are buffered until a frame is complete; the caller bounds what it appends (reading
/// again only after `nextFrame()` returned `nil` keeps the buffer under one frame plus one read).
public struct HTTP2FrameParser: Sendable {
    /// Which end of the connection this parser's owner is.
    public enum Role: Sendable, Equatable {
        /// Parsing a server's frames: SETTINGS_ENABLE_PUSH = 1 is an error.
        case client
        /// Parsing a client's frames: the client connection preface comes first.
        case server
    }

    /// The role of the parser's owner.
    public let role: Role
    /// The largest payload accepted: the SETTINGS_MAX_FRAME_SIZE this side advertised
    /// (16,384 until the peer acknowledges a larger value).
    public var maxFrameSize: Int
    /// The most octets one field block (HEADERS plus its CONTINUATIONs) may have.
    public let maxFieldBlockSize: Int
    /// The most CONTINUATION frames one field block may have.
    public let maxContinuationFrames: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var awaitingPreface: Bool
    private var awaitingSettings = true
    private var openFieldBlock: (streamID: UInt32, size: Int, continuations: Int)?
    private var failure: HTTP2ProtocolError?

    /// Creates a parser.
    /// - Parameters:
    ///   - role: `.client` to parse a server's frames, `.server` to parse a client's (the
    ///     connection preface is then expected first).
    ///   - maxFrameSize: See `maxFrameSize`.
    ///   - maxFieldBlockSize: See `maxFieldBlockSize` (256 KiB by default).
    ///   - maxContinuationFrames: See `maxContinuationFrames` (64 by default).
    public init(role: Role, maxFrameSize: Int = 16_384, maxFieldBlockSize: Int = 262_144, maxContinuationFrames: Int = 64) {
        self.role = role
        self.maxFrameSize = maxFrameSize
        self.maxFieldBlockSize = maxFieldBlockSize
        self.maxContinuationFrames = maxContinuationFrames
        self.awaitingPreface = role == .server
    }

    /// The octets received and not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds received octets.
    /// - Parameter bytes: The octets, in order.
    public mutating func append<S: Sequence<UInt8>>(_ bytes: S) {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, or `nil` when more octets are needed.
    /// - Returns: A frame, or `nil`.
    /// - Throws: `HTTP2ProtocolError`: a connection error (thrown again on every later call)
    ///   or a stream error (its frame is consumed; parsing can go on).
    public mutating func nextFrame() throws(HTTP2ProtocolError) -> HTTP2Frame? {
        if let failure { throw failure }
        do {
            return try parseNext()
        } catch {
            if error.isConnectionError { failure = error }
            throw error
        }
    }

    private mutating func parseNext() throws(HTTP2ProtocolError) -> HTTP2Frame? {
        if awaitingPreface {
            let preface = HTTP2Wire.clientPreface
            let available = Swift.min(bufferedByteCount, preface.count)
            guard buffer[readIndex..<(readIndex + available)].elementsEqual(preface[0..<available]) else {
                throw .connection(.protocolError, "the client connection preface is missing")
            }
            guard available == preface.count else { return nil }
            readIndex += preface.count
            awaitingPreface = false
        }
        while bufferedByteCount >= HTTP2FrameHeader.size {
            let header = HTTP2FrameHeader(decoding: buffer, at: readIndex)
            try checkHeader(header)
            guard bufferedByteCount >= HTTP2FrameHeader.size + header.length else { return nil }
            let start = readIndex + HTTP2FrameHeader.size
            let payload = Array(buffer[start..<(start + header.length)])
            readIndex = start + header.length
            compact()
            if let frame = try decodePayload(header, payload) {
                return frame
            }
        }
        return nil
    }

    /// The checks that need only the header, done before the payload is buffered.
    private mutating func checkHeader(_ header: HTTP2FrameHeader) throws(HTTP2ProtocolError) {
        if header.length > maxFrameSize {
            throw .connection(.frameSizeError, "a frame is longer than SETTINGS_MAX_FRAME_SIZE")
        }
        if let open = openFieldBlock, header.type != HTTP2Wire.continuation || header.streamID != open.streamID {
            throw .connection(.protocolError, "a field block is interrupted by another frame")
        }
        if awaitingSettings {
            guard header.type == HTTP2Wire.settings, header.flags & HTTP2Wire.ack == 0 else {
                throw .connection(.protocolError, "the peer's first frame is not SETTINGS")
            }
            awaitingSettings = false
        }
    }

    private mutating func compact() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            readIndex = 0
        } else if readIndex >= 65_536, readIndex * 2 >= buffer.count {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }

    private mutating func decodePayload(_ header: HTTP2FrameHeader, _ payload: [UInt8]) throws(HTTP2ProtocolError) -> HTTP2Frame? {
        let id = header.streamID
        let flags = header.flags
        switch header.type {
        case HTTP2Wire.data:
            guard id != 0 else { throw .connection(.protocolError, "a DATA frame is on stream 0") }
            let (range, padding) = try unpad(payload, flags: flags, fixedPrefix: 0)
            return .data(streamID: id, data: Array(payload[range]), endStream: flags & HTTP2Wire.endStream != 0, padding: padding)
        case HTTP2Wire.headers:
            guard id != 0 else { throw .connection(.protocolError, "a HEADERS frame is on stream 0") }
            let hasPriority = flags & HTTP2Wire.priorityFlag != 0
            let (range, padding) = try unpad(payload, flags: flags, fixedPrefix: hasPriority ? HTTP2Priority.size : 0)
            var priority: HTTP2Priority?
            if hasPriority {
                let fields = HTTP2Priority(decoding: payload, at: range.lowerBound - HTTP2Priority.size)
                // A stream error would drop the field block and desynchronise HPACK, so this
                // is a connection error (RFC 9113 §5.4.1 allows treating it as one).
                guard fields.dependency != id else { throw .connection(.protocolError, "a HEADERS frame's stream depends on itself") }
                priority = fields
            }
            let endHeaders = flags & HTTP2Wire.endHeaders != 0
            try openBlock(on: id, size: range.count, endHeaders: endHeaders)
            return .headers(streamID: id, fieldBlock: Array(payload[range]), endStream: flags & HTTP2Wire.endStream != 0,
                            endHeaders: endHeaders, priority: priority, padding: padding)
        case HTTP2Wire.priority:
            guard id != 0 else { throw .connection(.protocolError, "a PRIORITY frame is on stream 0") }
            guard payload.count == HTTP2Priority.size else { throw .stream(.frameSizeError, id, "a PRIORITY frame is not 5 octets") }
            let fields = HTTP2Priority(decoding: payload, at: 0)
            guard fields.dependency != id else { throw .stream(.protocolError, id, "a PRIORITY frame's stream depends on itself") }
            return .priority(streamID: id, fields)
        case HTTP2Wire.rstStream:
            guard id != 0 else { throw .connection(.protocolError, "an RST_STREAM frame is on stream 0") }
            guard payload.count == 4 else { throw .connection(.frameSizeError, "an RST_STREAM frame is not 4 octets") }
            return .rstStream(streamID: id, code: HTTP2ErrorCode(rawValue: HTTP2Wire.readUInt32(payload, at: 0)))
        case HTTP2Wire.settings:
            return try decodeSettings(header, payload)
        case HTTP2Wire.pushPromise:
            throw .connection(.protocolError, "a PUSH_PROMISE arrived, but push is disabled")
        case HTTP2Wire.ping:
            guard id == 0 else { throw .connection(.protocolError, "a PING frame is on a stream") }
            guard payload.count == 8 else { throw .connection(.frameSizeError, "a PING frame is not 8 octets") }
            let opaque = UInt64(HTTP2Wire.readUInt32(payload, at: 0)) << 32 | UInt64(HTTP2Wire.readUInt32(payload, at: 4))
            return .ping(opaque: opaque, ack: flags & HTTP2Wire.ack != 0)
        case HTTP2Wire.goAway:
            guard id == 0 else { throw .connection(.protocolError, "a GOAWAY frame is on a stream") }
            guard payload.count >= 8 else { throw .connection(.frameSizeError, "a GOAWAY frame is shorter than 8 octets") }
            return .goAway(lastStreamID: HTTP2Wire.readUInt32(payload, at: 0) & 0x7fff_ffff,
                           code: HTTP2ErrorCode(rawValue: HTTP2Wire.readUInt32(payload, at: 4)),
                           debugData: Array(payload[8...]))
        case HTTP2Wire.windowUpdate:
            guard payload.count == 4 else { throw .connection(.frameSizeError, "a WINDOW_UPDATE frame is not 4 octets") }
            // An increment of 0 is an error whose kind depends on the stream's state (§6.9): the
            // connection's state machine judges it.
            return .windowUpdate(streamID: id, increment: HTTP2Wire.readUInt32(payload, at: 0) & 0x7fff_ffff)
        case HTTP2Wire.continuation:
            guard id != 0 else { throw .connection(.protocolError, "a CONTINUATION frame is on stream 0") }
            guard var open = openFieldBlock else {
                throw .connection(.protocolError, "a CONTINUATION frame follows no open field block")
            }
            open.size += payload.count
            open.continuations += 1
            guard open.size <= maxFieldBlockSize else {
                throw .connection(.enhanceYourCalm, "a field block exceeds the size limit")
            }
            guard open.continuations <= maxContinuationFrames else {
                throw .connection(.enhanceYourCalm, "a field block has too many CONTINUATION frames")
            }
            let endHeaders = flags & HTTP2Wire.endHeaders != 0
            openFieldBlock = endHeaders ? nil : open
            return .continuation(streamID: id, fieldBlock: payload, endHeaders: endHeaders)
        default:
            return nil
        }
    }

    private mutating func decodeSettings(_ header: HTTP2FrameHeader, _ payload: [UInt8]) throws(HTTP2ProtocolError) -> HTTP2Frame {
        guard header.streamID == 0 else { throw .connection(.protocolError, "a SETTINGS frame is on a stream") }
        if header.flags & HTTP2Wire.ack != 0 {
            guard payload.isEmpty else { throw .connection(.frameSizeError, "a SETTINGS acknowledgement has a payload") }
            return .settingsAck
        }
        guard payload.count % 6 == 0 else { throw .connection(.frameSizeError, "a SETTINGS frame's length is not a multiple of 6") }
        var settings: [HTTP2Setting] = []
        settings.reserveCapacity(payload.count / 6)
        var offset = 0
        while offset < payload.count {
            let identifier = HTTP2Setting.Identifier(rawValue: UInt16(payload[offset]) << 8 | UInt16(payload[offset + 1]))
            let setting = HTTP2Setting(identifier, HTTP2Wire.readUInt32(payload, at: offset + 2))
            try setting.validate(pushForbidden: role == .client)
            settings.append(setting)
            offset += 6
        }
        return .settings(settings)
    }

    /// Records a HEADERS frame's field block, open until END_HEADERS.
    private mutating func openBlock(on streamID: UInt32, size: Int, endHeaders: Bool) throws(HTTP2ProtocolError) {
        guard size <= maxFieldBlockSize else { throw .connection(.enhanceYourCalm, "a field block exceeds the size limit") }
        openFieldBlock = endHeaders ? nil : (streamID, size, 0)
    }

    /// The range of a padded frame's content after `fixedPrefix` octets, and its padding.
    private func unpad(_ payload: [UInt8], flags: UInt8, fixedPrefix: Int) throws(HTTP2ProtocolError) -> (Range<Int>, UInt8?) {
        guard flags & HTTP2Wire.padded != 0 else {
            guard payload.count >= fixedPrefix else { throw .connection(.frameSizeError, "a frame is too short for its fields") }
            return (fixedPrefix..<payload.count, nil)
        }
        guard payload.count >= 1 + fixedPrefix else { throw .connection(.frameSizeError, "a frame is too short for its fields") }
        let padding = payload[0]
        guard Int(padding) <= payload.count - 1 - fixedPrefix else {
            throw .connection(.protocolError, "a frame's padding is as long as its payload")
        }
        return ((1 + fixedPrefix)..<(payload.count - Int(padding)), padding)
    }
}

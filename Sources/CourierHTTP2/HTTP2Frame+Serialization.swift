extension HTTP2Frame {
    /// Appends the frame's wire form: the 9-octet header and the payload (padding octets are
    /// zeros). The caller keeps payloads within the peer's SETTINGS_MAX_FRAME_SIZE.
    /// - Parameter output: The buffer to append to.
    public func serialize(into output: inout [UInt8]) {
        switch self {
        case .data(let streamID, let data, let endStream, let padding):
            appendPadded(HTTP2Wire.data, flags: endStream ? HTTP2Wire.endStream : 0, streamID: streamID,
                         padding: padding, prefix: [], body: data, into: &output)
        case .headers(let streamID, let block, let endStream, let endHeaders, let priority, let padding):
            var flags: UInt8 = 0
            if endStream { flags |= HTTP2Wire.endStream }
            if endHeaders { flags |= HTTP2Wire.endHeaders }
            var prefix: [UInt8] = []
            if let priority {
                flags |= HTTP2Wire.priorityFlag
                priority.encode(into: &prefix)
            }
            appendPadded(HTTP2Wire.headers, flags: flags, streamID: streamID, padding: padding,
                         prefix: prefix, body: block, into: &output)
        case .priority(let streamID, let priority):
            HTTP2FrameHeader(length: HTTP2Priority.size, type: HTTP2Wire.priority, flags: 0, streamID: streamID).encode(into: &output)
            priority.encode(into: &output)
        case .rstStream(let streamID, let code):
            HTTP2FrameHeader(length: 4, type: HTTP2Wire.rstStream, flags: 0, streamID: streamID).encode(into: &output)
            HTTP2Wire.appendUInt32(code.rawValue, to: &output)
        case .settings(let settings):
            HTTP2FrameHeader(length: settings.count * 6, type: HTTP2Wire.settings, flags: 0, streamID: 0).encode(into: &output)
            for setting in settings {
                output.append(UInt8(truncatingIfNeeded: setting.identifier.rawValue >> 8))
                output.append(UInt8(truncatingIfNeeded: setting.identifier.rawValue))
                HTTP2Wire.appendUInt32(setting.value, to: &output)
            }
        case .settingsAck:
            HTTP2FrameHeader(length: 0, type: HTTP2Wire.settings, flags: HTTP2Wire.ack, streamID: 0).encode(into: &output)
        case .pushPromise(let streamID, let promised, let block, let endHeaders, let padding):
            var prefix: [UInt8] = []
            HTTP2Wire.appendUInt32(promised & 0x7fff_ffff, to: &prefix)
            appendPadded(HTTP2Wire.pushPromise, flags: endHeaders ? HTTP2Wire.endHeaders : 0, streamID: streamID,
                         padding: padding, prefix: prefix, body: block, into: &output)
        case .ping(let opaque, let ack):
            HTTP2FrameHeader(length: 8, type: HTTP2Wire.ping, flags: ack ? HTTP2Wire.ack : 0, streamID: 0).encode(into: &output)
            HTTP2Wire.appendUInt32(UInt32(truncatingIfNeeded: opaque >> 32), to: &output)
            HTTP2Wire.appendUInt32(UInt32(truncatingIfNeeded: opaque), to: &output)
        case .goAway(let lastStreamID, let code, let debugData):
            HTTP2FrameHeader(length: 8 + debugData.count, type: HTTP2Wire.goAway, flags: 0, streamID: 0).encode(into: &output)
            HTTP2Wire.appendUInt32(lastStreamID & 0x7fff_ffff, to: &output)
            HTTP2Wire.appendUInt32(code.rawValue, to: &output)
            output.append(contentsOf: debugData)
        case .windowUpdate(let streamID, let increment):
            HTTP2FrameHeader(length: 4, type: HTTP2Wire.windowUpdate, flags: 0, streamID: streamID).encode(into: &output)
            HTTP2Wire.appendUInt32(increment & 0x7fff_ffff, to: &output)
        case .continuation(let streamID, let block, let endHeaders):
            HTTP2FrameHeader(length: block.count, type: HTTP2Wire.continuation,
                             flags: endHeaders ? HTTP2Wire.endHeaders : 0, streamID: streamID).encode(into: &output)
            output.append(contentsOf: block)
        }
    }

    /// The frame's wire form as a new array.
    public var serialized: [UInt8] {
        var output: [UInt8] = []
        serialize(into: &output)
        return output
    }

    /// Appends a frame whose payload is [pad length] prefix body [padding].
    private func appendPadded(_ type: UInt8, flags: UInt8, streamID: UInt32, padding: UInt8?,
                              prefix: [UInt8], body: [UInt8], into output: inout [UInt8]) {
        let padLength = padding.map { Int($0) + 1 } ?? 0
        let header = HTTP2FrameHeader(length: padLength + prefix.count + body.count, type: type,
                                      flags: flags | (padding == nil ? 0 : HTTP2Wire.padded), streamID: streamID)
        header.encode(into: &output)
        if let padding { output.append(padding) }
        output.append(contentsOf: prefix)
        output.append(contentsOf: body)
        if let padding { output.append(contentsOf: repeatElement(0, count: Int(padding))) }
    }
}

@testable import CourierHTTP2

/// An initial SETTINGS frame, which every peer must send first.
let initialSettings: [UInt8] = HTTP2Frame.settings([]).serialized

/// Raw frame bytes from a header's fields and a payload (to build invalid frames).
func rawFrame(type: UInt8, flags: UInt8 = 0, streamID: UInt32, payload: [UInt8], length: Int? = nil) -> [UInt8] {
    var output: [UInt8] = []
    HTTP2FrameHeader(length: length ?? payload.count, type: type, flags: flags, streamID: streamID).encode(into: &output)
    return output + payload
}

/// Parses `bytes` fed in chunks of `chunk` octets (all at once when `nil`), returning the
/// frames and the first error.
func parseAll(_ bytes: [UInt8], role: HTTP2FrameParser.Role = .client, chunk: Int? = nil,
              maxFrameSize: Int = 16_384, afterSettings: Bool = true) -> (frames: [HTTP2Frame], error: HTTP2ProtocolError?) {
    var parser = HTTP2FrameParser(role: role, maxFrameSize: maxFrameSize)
    var frames: [HTTP2Frame] = []
    let input = (afterSettings ? initialSettings : []) + bytes
    let size = chunk ?? Swift.max(input.count, 1)
    var offset = 0
    repeat {
        let end = Swift.min(offset + size, input.count)
        parser.append(input[offset..<end])
        offset = end
        do {
            while let frame = try parser.nextFrame() { frames.append(frame) }
        } catch {
            return (afterSettings ? Array(frames.dropFirst()) : frames, error)
        }
    } while offset < input.count
    return (afterSettings ? Array(frames.dropFirst()) : frames, nil)
}

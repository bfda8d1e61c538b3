// libFuzzer target: CourierHTTP2's HTTP2FrameParser and frame serialization (see Fuzz/README.md).
import CourierHTTP2

/// How parsing a byte stream ended.
struct FrameOutcome: Equatable {
    var frames: [HTTP2Frame] = []
    var error: HTTP2ProtocolError?
    /// Frames that followed a stream error, which parsing may continue past.
    var streamErrors = 0
}

/// Parses an initial empty SETTINGS frame and then `input` in the pieces given by `cuts`.
func parse(_ input: UnsafeRawBufferPointer, cuts: [Int], maxFrameSize: Int) -> FrameOutcome {
    var parser = HTTP2FrameParser(role: .client, maxFrameSize: maxFrameSize, maxFieldBlockSize: 4096, maxContinuationFrames: 8)
    parser.append(HTTP2Frame.settings([]).serialized)
    var outcome = FrameOutcome()
    for (_, piece) in pieces(input, cuts: cuts) {
        parser.append(piece)
        while true {
            do {
                guard let frame = try parser.nextFrame() else { break }
                outcome.frames.append(frame)
            } catch {
                if error.isConnectionError {
                    outcome.error = error
                    // The error sticks.
                    invariant((try? parser.nextFrame()) == nil, "a parser went on after a connection error")
                    return outcome
                }
                invariant(error.streamID != 0, "a stream error on stream 0")
                outcome.streamErrors += 1
            }
        }
        invariant(parser.bufferedByteCount < 9 + maxFrameSize + piece.count, "the parser buffers more than a frame")
    }
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let seed = inputHash(input)
    let maxFrameSize = seed & 1 == 0 ? 16_384 : 16_384 + Int(seed >> 40 & 0xffff)
    let reference = parse(input, cuts: [], maxFrameSize: maxFrameSize)
    for cuts in splits(count: size, seed: seed).dropFirst() {
        invariant(parse(input, cuts: cuts, maxFrameSize: maxFrameSize) == reference, "a split changed the outcome, cuts \(cuts)")
    }
    // Every frame parsed serializes back to octets that parse to the same frame.
    var open: UInt32?
    for frame in reference.frames.dropFirst() {
        var parser = HTTP2FrameParser(role: .client, maxFrameSize: maxFrameSize, maxFieldBlockSize: 4096, maxContinuationFrames: 8)
        parser.append(HTTP2Frame.settings([]).serialized)
        if let open { parser.append(HTTP2Frame.headers(streamID: open, fieldBlock: [], endStream: false, endHeaders: false).serialized) }
        parser.append(frame.serialized)
        _ = try? parser.nextFrame()
        if open != nil { _ = try? parser.nextFrame() }
        let again = try? parser.nextFrame()
        invariant(again == frame, "a frame did not round-trip: \(frame)")
        switch frame {
        case .headers(let id, _, _, let endHeaders, _, _): open = endHeaders ? nil : id
        case .continuation(_, _, let endHeaders): if endHeaders { open = nil }
        default: break
        }
    }
    return 0
}

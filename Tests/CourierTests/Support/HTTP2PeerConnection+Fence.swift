import CourierHTTP2
import Foundation

extension HTTP2PeerConnection {
    /// Sends a PING and reads the client's frames up to its acknowledgement: the frames returned
    /// are what the client wrote before it answered, so everything it wrote for the frames sent
    /// before the PING, except what it writes later in the same turn of its loop; a second fence
    /// takes that in too. A SETTINGS on the way is acknowledged.
    /// - Throws: ``PeerError`` when the client closed or stayed silent for 10 s.
    func fence() throws -> [HTTP2Frame] {
        let opaque = UInt64.random(in: 1...UInt64.max)
        send(.ping(opaque: opaque, ack: false))
        var seen: [HTTP2Frame] = []
        while let frame = try nextFrame() {
            if case .ping(opaque, true) = frame { return seen }
            if case .settings = frame { send(.settingsAck) }
            seen.append(frame)
        }
        throw PeerError("the client did not acknowledge a PING")
    }

    /// Sends `body[range]` on stream `streamID` in DATA frames of 16 KiB, all in one write; the
    /// last frame ends the stream when `end` is set.
    func sendData(_ streamID: UInt32, _ body: [UInt8], _ range: Range<Int>, end: Bool = false) {
        var bytes: [UInt8] = []
        var offset = range.lowerBound
        while offset < range.upperBound {
            let next = min(offset + 16_384, range.upperBound)
            HTTP2Frame.data(streamID: streamID, data: Array(body[offset..<next]), endStream: end && next == range.upperBound)
                .serialize(into: &bytes)
            offset = next
        }
        sendRaw(bytes)
    }

    /// Fences (``fence()``) until the client gives stream `streamID` window back, for at most
    /// `seconds`.
    /// - Returns: the WINDOW_UPDATE's increment, or `nil` when none came in time.
    func awaitWindowUpdate(_ streamID: UInt32, seconds: Double = 10) throws -> Int? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let increment = try fence().streamWindowUpdates(streamID).first { return increment }
            usleep(1_000)
        }
        return nil
    }
}

extension [HTTP2Frame] {
    /// The increments of the WINDOW_UPDATE frames for stream `streamID`, in order.
    func streamWindowUpdates(_ streamID: UInt32) -> [Int] {
        compactMap { frame in
            guard case .windowUpdate(streamID, let increment) = frame else { return nil }
            return Int(increment)
        }
    }
}

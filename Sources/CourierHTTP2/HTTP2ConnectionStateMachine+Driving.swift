/// Events a driver raises besides received octets: the consumer's back-pressure, the SETTINGS
/// acknowledgement timeout, and what it needs to know to schedule streams.
extension HTTP2ConnectionStateMachine {
    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS as last received (`Int.max` until it sets one).
    public var peerStreamLimit: Int { peerMaxConcurrentStreams }

    /// Whether a SETTINGS frame this side sent is still unacknowledged.
    public var awaitsSettingsAcknowledgement: Bool { unacknowledgedSettings > 0 }

    /// Whether the peer sent GOAWAY (no new streams; the connection closes once the rest end).
    public var isDraining: Bool { receivedGoAway }

    /// Whether the stream is open (its response has not ended).
    /// - Parameter streamID: The stream.
    public func isOpen(_ streamID: UInt32) -> Bool { streams[streamID] != nil }

    /// The request body octets of a stream still waiting for flow-control window, or `nil` when
    /// the stream is not open.
    /// - Parameter streamID: The stream.
    public func bufferedBodyCount(_ streamID: UInt32) -> Int? { streams[streamID]?.pendingCount }

    /// Event: the consumer of a stream's response stopped reading. Octets received on it are no
    /// longer given back with WINDOW_UPDATE, so the server stops once the stream window is used
    /// up: flow control is the back-pressure.
    /// - Parameter streamID: The stream.
    public mutating func pauseStream(_ streamID: UInt32) {
        streams[streamID]?.paused = true
    }

    /// Event: the consumer reads again. Gives back with WINDOW_UPDATE what was received since.
    /// - Parameter streamID: The stream.
    /// - Returns: The WINDOW_UPDATE to write, if any.
    public mutating func resumeStream(_ streamID: UInt32) -> [HTTP2ConnectionAction] {
        guard state == .open, var stream = streams[streamID], stream.paused else { return [] }
        stream.paused = false
        defer { streams[streamID] = stream }
        guard stream.receivedSinceUpdate > 0 else { return [] }
        let increment = stream.receivedSinceUpdate
        stream.receiveWindow += increment
        stream.receivedSinceUpdate = 0
        return [.write(HTTP2Frame.windowUpdate(streamID: streamID, increment: UInt32(increment)).serialized)]
    }

    /// Event: the driver delivered the DATA of the last ``receive(_:)`` to the streams'
    /// consumers (with ``Configuration/returnsStreamWindowsOnReceive`` off). Each stream that is
    /// not paused gives back what it received since its last WINDOW_UPDATE, once that is half
    /// its window; a stream paused while its DATA was delivered gives nothing back.
    /// - Returns: The WINDOW_UPDATE frames to write, if any.
    public mutating func returnStreamWindows() -> [HTTP2ConnectionAction] {
        guard !streamsOwedWindow.isEmpty else { return [] }
        defer { streamsOwedWindow.removeAll(keepingCapacity: true) }
        guard state == .open else { return [] }
        var output: [UInt8] = []
        for id in streamsOwedWindow {
            // A stream named twice, closed or paused since: nothing (more) to give back.
            guard var stream = streams[id], !stream.paused, stream.receivedSinceUpdate >= configuration.initialWindowSize / 2 else { continue }
            HTTP2Frame.windowUpdate(streamID: id, increment: UInt32(stream.receivedSinceUpdate)).serialize(into: &output)
            stream.receiveWindow += stream.receivedSinceUpdate
            stream.receivedSinceUpdate = 0
            streams[id] = stream
        }
        return output.isEmpty ? [] : [.write(output)]
    }

    /// Event: the time for the peer to acknowledge our SETTINGS passed. When it has not, the
    /// connection fails with SETTINGS_TIMEOUT (RFC 9113 §6.5.3).
    /// - Returns: GOAWAY, the open streams failed, and the close; nothing when acknowledged.
    public mutating func settingsTimedOut() -> [HTTP2ConnectionAction] {
        guard state == .open, unacknowledgedSettings > 0 else { return [] }
        var output: [UInt8] = []
        var actions: [HTTP2ConnectionAction] = []
        failConnection(.connection(.settingsTimeout, "the server did not acknowledge SETTINGS in time"),
                       output: &output, actions: &actions)
        actions.insert(.write(output), at: 0)
        return actions
    }

    /// Event: the transport closed (the peer closed, or a read or write failed). Every open
    /// stream fails; none is retryable, since the server may have processed it.
    /// - Parameter reason: What happened, e.g. "the server closed the connection".
    /// - Returns: The failed streams, in stream order.
    public mutating func transportClosed(reason: String) -> [HTTP2ConnectionAction] {
        guard state != .closed else { return [] }
        state = .closed
        let failed = streams.keys.sorted().map {
            HTTP2ConnectionAction.streamFailed(streamID: $0, HTTP2StreamFailure(code: .internalError, retryable: false, reason: reason))
        }
        streams.removeAll()
        return failed
    }
}

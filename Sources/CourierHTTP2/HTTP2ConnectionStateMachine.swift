/// The client side of one HTTP/2 connection as a value: events in, actions out, no I/O
/// (driven by the native transport's `HTTP2ClientConnection`).
///
/// Covered: the connection preface and SETTINGS exchange (with ACKs both ways), opening
/// streams up to the peer's SETTINGS_MAX_CONCURRENT_STREAMS, HEADERS + CONTINUATION assembly
/// into a response head or trailers through HPACK, DATA with connection- and stream-level flow
/// control in both directions (received windows are given back with WINDOW_UPDATE once half is
/// used; request bodies wait for the peer's windows), RST_STREAM both ways, PING
/// acknowledgement, and GOAWAY (streams above the last stream id fail as retryable).
///
/// Also: back-pressure from the consumer (`pauseStream`/`resumeStream`), the SETTINGS
/// acknowledgement timeout as an event (`settingsTimedOut()`), PING and SETTINGS flood limits.
///
/// Not yet: PING timeouts, content-length checks, STREAM_CLOSED for frames on streams the
/// server itself closed (they are ignored, like frames on streams this side reset), and sending
/// our own graceful GOAWAY.
public struct HTTP2ConnectionStateMachine: Sendable {
    /// What this side advertises and how large its receive windows are.
    public struct Configuration: Sendable {
        /// The stream receive window advertised with SETTINGS_INITIAL_WINDOW_SIZE.
        public var initialWindowSize = 1 << 20
        /// The connection receive window (raised from 65,535 with a WINDOW_UPDATE at start; a
        /// smaller value counts as 65,535, since HTTP/2 has no way to shrink it).
        public var connectionWindowSize = 8 << 20
        /// SETTINGS_MAX_FRAME_SIZE advertised (frames above it are FRAME_SIZE_ERROR).
        public var maxFrameSize = 16_384
        /// SETTINGS_MAX_HEADER_LIST_SIZE advertised and enforced by the HPACK decoder.
        public var maxHeaderListSize = 65_536
        /// SETTINGS_HEADER_TABLE_SIZE advertised (the peer encoder's table limit).
        public var headerTableSize = 4096
        /// The most PING frames (not acknowledgements) the peer may send without a HEADERS or
        /// DATA frame between them; one more is a PING flood (ENHANCE_YOUR_CALM).
        public var maxPingsWithoutData = 100
        /// The most SETTINGS frames (not acknowledgements) the peer may send without a HEADERS
        /// or DATA frame between them; one more is a SETTINGS flood (ENHANCE_YOUR_CALM).
        public var maxSettingsWithoutData = 100
        /// Whether ``HTTP2ConnectionStateMachine/receive(_:)`` gives a stream's window back
        /// itself, with WINDOW_UPDATE at half the window, as DATA arrives. A driver whose
        /// consumers pause streams (``HTTP2ConnectionStateMachine/pauseStream(_:)``) turns it off
        /// and calls ``HTTP2ConnectionStateMachine/returnStreamWindows()`` once it has delivered
        /// what `receive` returned: a stream paused while taking that DATA then gives none of it
        /// back. Such a driver must call it after every `receive`, as the streams owed a window
        /// are listed until then. Default: `true`.
        public var returnsStreamWindowsOnReceive = true

        /// The defaults above.
        public init() {}
    }

    enum State: Sendable, Equatable {
        case idle, open, closed
    }

    let configuration: Configuration
    var state = State.idle
    var parser: HTTP2FrameParser
    var decoder: HPACKDecoder
    var encoder = HPACKEncoder()
    var streams: [UInt32: HTTP2StreamState] = [:]
    /// The next stream id to open (odd, client-initiated).
    private var nextStreamID: UInt32 = 1
    /// Whether this client never opened `streamID`: an id at or above the next one to open, or
    /// an even id (the server's, and push is disabled, so it can never have opened one).
    func neverOpened(_ streamID: UInt32) -> Bool {
        streamID >= nextStreamID || streamID & 1 == 0
    }
    /// The peer's settings as last received.
    var peerMaxConcurrentStreams = Int.max
    var peerInitialWindowSize = 65_535
    var peerMaxFrameSize = 16_384
    /// Windows at the connection level.
    var connectionSendWindow = 65_535
    var connectionReceiveWindow: Int
    var connectionReceivedSinceUpdate = 0
    /// The field block being assembled: its stream, END_STREAM, and the octets so far.
    var pendingFieldBlock: (streamID: UInt32, endStream: Bool, bytes: [UInt8])?
    /// The streams whose received DATA reached half their window in the last ``receive(_:)``,
    /// in order of arrival, for ``returnStreamWindows()`` (with
    /// ``Configuration/returnsStreamWindowsOnReceive`` off).
    var streamsOwedWindow: [UInt32] = []
    /// Set once the peer sent GOAWAY: no new streams.
    var receivedGoAway = false
    /// SETTINGS frames sent and not yet acknowledged.
    var unacknowledgedSettings = 0
    /// PING and SETTINGS frames received since the last HEADERS or DATA frame (flood limits).
    var pingsWithoutData = 0
    var settingsWithoutData = 0
    /// Whether the peer's first SETTINGS frame arrived.
    public internal(set) var hasReceivedPeerSettings = false

    /// Creates a machine for a new connection.
    /// - Parameter configuration: What to advertise.
    public init(configuration: Configuration = Configuration()) {
        var configuration = configuration
        configuration.connectionWindowSize = Swift.max(configuration.connectionWindowSize, 65_535)
        self.configuration = configuration
        parser = HTTP2FrameParser(role: .client)
        decoder = HPACKDecoder(maxTableSize: configuration.headerTableSize,
                               maxHeaderListSize: configuration.maxHeaderListSize)
        connectionReceiveWindow = configuration.connectionWindowSize
    }

    /// The number of open streams.
    public var openStreamCount: Int { streams.count }

    /// How many more streams may be opened now (0 after GOAWAY or once closed).
    public var availableStreamCount: Int {
        guard state == .open, !receivedGoAway, nextStreamID <= 0x7fff_ffff else { return 0 }
        return Swift.max(0, peerMaxConcurrentStreams - streams.count)
    }

    /// Whether the connection is finished.
    public var isClosed: Bool { state == .closed }

    /// Event: the connection is established (TCP, or TLS with ALPN `h2`).
    /// - Returns: The client preface, our SETTINGS and the connection WINDOW_UPDATE to write.
    public mutating func start() -> [HTTP2ConnectionAction] {
        precondition(state == .idle, "start() called twice")
        state = .open
        var output = HTTP2Wire.clientPreface
        HTTP2Frame.settings([
            HTTP2Setting(.enablePush, 0),
            HTTP2Setting(.headerTableSize, UInt32(configuration.headerTableSize)),
            HTTP2Setting(.initialWindowSize, UInt32(configuration.initialWindowSize)),
            HTTP2Setting(.maxFrameSize, UInt32(configuration.maxFrameSize)),
            HTTP2Setting(.maxHeaderListSize, UInt32(configuration.maxHeaderListSize)),
        ]).serialize(into: &output)
        unacknowledgedSettings += 1
        let increment = configuration.connectionWindowSize - 65_535
        if increment > 0 {
            HTTP2Frame.windowUpdate(streamID: 0, increment: UInt32(increment)).serialize(into: &output)
        }
        return [.write(output)]
    }

    /// Event: the caller wants a new stream for a request.
    /// - Parameters:
    ///   - headers: The request's fields, pseudo-header fields first (`:method`, `:scheme`,
    ///     `:authority`, `:path`), names in lowercase.
    ///   - endStream: `true` when the request has no body.
    /// - Returns: The new stream's id and the HEADERS (+ CONTINUATION) to write, or `nil`
    ///   when no stream is available (see `availableStreamCount`).
    public mutating func openStream(headers: [HPACKHeaderField], endStream: Bool) -> (streamID: UInt32, actions: [HTTP2ConnectionAction])? {
        guard availableStreamCount > 0 else { return nil }
        let id = nextStreamID
        nextStreamID += 2
        var stream = HTTP2StreamState(receiveWindow: configuration.initialWindowSize, sendWindow: peerInitialWindowSize)
        stream.localClosed = endStream
        streams[id] = stream
        var block: [UInt8] = []
        encoder.encode(headers, into: &block)
        var output: [UInt8] = []
        for frame in HTTP2Frame.headerFrames(streamID: id, fieldBlock: block, endStream: endStream, maxFrameSize: peerMaxFrameSize) {
            frame.serialize(into: &output)
        }
        return (id, [.write(output)])
    }

    /// Event: request body octets for a stream. They are written as the peer's connection and
    /// stream windows allow; the rest waits for WINDOW_UPDATE.
    /// - Parameters:
    ///   - streamID: A stream opened without END_STREAM.
    ///   - bytes: The octets.
    ///   - endStream: `true` with the last octets.
    /// - Returns: The DATA frames that fit now (none when the stream is gone).
    public mutating func sendBody(streamID: UInt32, _ bytes: [UInt8], endStream: Bool) -> [HTTP2ConnectionAction] {
        guard var stream = streams[streamID], !stream.localClosed, !stream.pendingEnd else { return [] }
        stream.pendingBody.removeFirst(stream.pendingStart)
        stream.pendingStart = 0
        stream.pendingBody += bytes
        stream.pendingEnd = endStream
        streams[streamID] = stream
        var output: [UInt8] = []
        flush(streamID, into: &output)
        return output.isEmpty ? [] : [.write(output)]
    }

    /// Event: the caller cancels a stream. Sends RST_STREAM(CANCEL) and forgets the stream;
    /// frames that were already on their way for it are ignored.
    /// - Parameter streamID: The stream.
    /// - Returns: The RST_STREAM to write (none when the stream is already closed).
    public mutating func cancelStream(_ streamID: UInt32) -> [HTTP2ConnectionAction] {
        guard state == .open, streams.removeValue(forKey: streamID) != nil else { return [] }
        var actions: [HTTP2ConnectionAction] = [.write(HTTP2Frame.rstStream(streamID: streamID, code: .cancel).serialized)]
        closeIfDrained(&actions)
        return actions
    }

    /// Event: octets received from the peer.
    /// - Parameter bytes: The octets, split anywhere.
    /// - Returns: Everything to do, in order.
    public mutating func receive(_ bytes: [UInt8]) -> [HTTP2ConnectionAction] {
        guard state == .open else { return [] }
        parser.append(bytes)
        var actions: [HTTP2ConnectionAction] = []
        var output: [UInt8] = []
        while state == .open {
            do {
                guard let frame = try parser.nextFrame() else { break }
                try handle(frame, output: &output, actions: &actions)
            } catch {
                if let streamID = error.streamID {
                    resetStream(streamID, code: error.code, reason: error.reason, output: &output, actions: &actions)
                } else {
                    failConnection(error, output: &output, actions: &actions)
                }
            }
        }
        if !output.isEmpty { actions.insert(.write(output), at: 0) }
        if state == .open { closeIfDrained(&actions) }
        return actions
    }

    /// Ends a stream with RST_STREAM from this side and reports it failed.
    /// A stream never opened (a PRIORITY frame may name one, and an even id names the server's)
    /// gets no RST_STREAM: sending one on an idle stream would itself be a protocol error.
    mutating func resetStream(_ streamID: UInt32, code: HTTP2ErrorCode, reason: String,
                              output: inout [UInt8], actions: inout [HTTP2ConnectionAction]) {
        guard !neverOpened(streamID) else { return }
        HTTP2Frame.rstStream(streamID: streamID, code: code).serialize(into: &output)
        if streams.removeValue(forKey: streamID) != nil {
            actions.append(.streamFailed(streamID: streamID, HTTP2StreamFailure(code: code, retryable: false, reason: reason)))
        }
    }

    /// Writes GOAWAY, fails every open stream and closes.
    mutating func failConnection(_ error: HTTP2ProtocolError, output: inout [UInt8], actions: inout [HTTP2ConnectionAction]) {
        HTTP2Frame.goAway(lastStreamID: 0, code: error.code, debugData: []).serialize(into: &output)
        for id in streams.keys.sorted() {
            actions.append(.streamFailed(streamID: id, HTTP2StreamFailure(code: error.code, retryable: false, reason: error.reason)))
        }
        streams.removeAll()
        state = .closed
        actions.append(.closeConnection(error: error))
    }

    /// After GOAWAY, closes the connection once the last stream is done.
    mutating func closeIfDrained(_ actions: inout [HTTP2ConnectionAction]) {
        guard receivedGoAway, streams.isEmpty, state == .open else { return }
        state = .closed
        actions.append(.closeConnection(error: nil))
    }

    /// Writes as much of a stream's pending body as both send windows and the peer's frame
    /// size allow.
    mutating func flush(_ streamID: UInt32, into output: inout [UInt8]) {
        guard var stream = streams[streamID] else { return }
        while stream.pendingCount > 0 || (stream.pendingEnd && !stream.localClosed) {
            let allowed = Swift.min(stream.pendingCount, stream.sendWindow, connectionSendWindow, peerMaxFrameSize)
            if allowed <= 0, stream.pendingCount > 0 { break }
            let count = Swift.max(allowed, 0)
            let chunk = Array(stream.pendingBody[stream.pendingStart..<(stream.pendingStart + count)])
            stream.pendingStart += count
            stream.sendWindow -= count
            connectionSendWindow -= count
            let last = stream.pendingCount == 0 && stream.pendingEnd
            if last { stream.localClosed = true }
            HTTP2Frame.data(streamID: streamID, data: chunk, endStream: last).serialize(into: &output)
        }
        if stream.pendingCount == 0 {
            stream.pendingBody = []
            stream.pendingStart = 0
        }
        streams[streamID] = stream
    }
}

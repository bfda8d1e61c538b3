/// What an `HTTP2ConnectionStateMachine` knows about one open stream.
struct HTTP2StreamState: Sendable {
    /// Where the response is.
    enum ResponsePhase: Sendable, Equatable {
        /// No final head yet (1xx heads may come).
        case awaitingHead
        /// The final head arrived; DATA and then trailers may come.
        case receivingBody
    }

    /// Where the response is.
    var phase: ResponsePhase = .awaitingHead
    /// Whether this side sent END_STREAM (the request is complete on the wire).
    var localClosed = false
    /// How many more octets the peer may send on this stream.
    var receiveWindow: Int
    /// Octets received and not yet given back with a WINDOW_UPDATE.
    var receivedSinceUpdate = 0
    /// Whether the consumer stopped reading: received octets are not given back until it resumes.
    var paused = false
    /// How many more octets this side may send on this stream (may go negative, §6.9.2).
    var sendWindow: Int
    /// Request body octets waiting for flow-control window, from `pendingStart`.
    var pendingBody: [UInt8] = []
    /// The first octet of `pendingBody` not written yet.
    var pendingStart = 0
    /// The number of pending octets.
    var pendingCount: Int { pendingBody.count - pendingStart }
    /// Whether END_STREAM follows the pending body.
    var pendingEnd = false

    init(receiveWindow: Int, sendWindow: Int) {
        self.receiveWindow = receiveWindow
        self.sendWindow = sendWindow
    }
}

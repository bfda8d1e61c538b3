/// What the driver of an `HTTP2ConnectionStateMachine` must do after an event.
public enum HTTP2ConnectionAction: Sendable, Equatable {
    /// Write these octets to the connection, in order.
    case write([UInt8])
    /// A stream's final response head (1xx heads are not reported).
    case responseHead(streamID: UInt32, status: Int, fields: [HPACKHeaderField])
    /// Body octets of a stream's response.
    case responseData(streamID: UInt32, [UInt8])
    /// A stream's trailer fields.
    case responseTrailers(streamID: UInt32, [HPACKHeaderField])
    /// A stream's response is complete; the stream is closed.
    case streamFinished(streamID: UInt32)
    /// A stream ended without a complete response; the stream is closed.
    case streamFailed(streamID: UInt32, HTTP2StreamFailure)
    /// The connection is finished: close the socket. `error` is the connection error this side
    /// detected (its GOAWAY was written just before), or `nil` after a graceful GOAWAY.
    case closeConnection(error: HTTP2ProtocolError?)
}

/// Why a stream ended without a complete response.
public struct HTTP2StreamFailure: Sendable, Equatable {
    /// The error code: the peer's RST_STREAM or GOAWAY code, or the code this side sent.
    public var code: HTTP2ErrorCode
    /// Whether the server certainly did not process the request, so that it can be sent again
    /// on another connection: a REFUSED_STREAM reset, or a stream above a GOAWAY's last stream id.
    public var retryable: Bool
    /// What happened, e.g. "the peer reset the stream".
    public var reason: String

    /// The reason of a failure the server caused with RST_STREAM.
    public static let serverReset = "the server reset the stream"
    /// The reason of a failure because a response's field block exceeded the advertised
    /// SETTINGS_MAX_HEADER_LIST_SIZE.
    public static let headerListTooLarge = "the response's header list exceeds SETTINGS_MAX_HEADER_LIST_SIZE"

    /// Creates a failure.
    /// - Parameters:
    ///   - code: The error code.
    ///   - retryable: Whether the request may be sent again elsewhere.
    ///   - reason: A fixed sentence.
    public init(code: HTTP2ErrorCode, retryable: Bool, reason: String) {
        self.code = code
        self.retryable = retryable
        self.reason = reason
    }
}

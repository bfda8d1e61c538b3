/// A violation of RFC 9113 found in frames received from the peer: the error code to send,
/// whether it ends the connection or one stream, and a fixed sentence saying what was wrong.
///
/// A connection error means: send GOAWAY with `code` and close. A stream error (`streamID` is
/// set) means: send RST_STREAM with `code` on that stream; the connection continues. The
/// reason never contains bytes from the peer.
public struct HTTP2ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error code to send to the peer.
    public let code: HTTP2ErrorCode
    /// The stream of a stream error, or `nil` for a connection error.
    public let streamID: UInt32?
    /// What was wrong, e.g. "SETTINGS frame length is not a multiple of 6".
    public let reason: String

    /// Creates a connection error.
    /// - Parameters:
    ///   - code: The error code for GOAWAY.
    ///   - reason: A fixed sentence.
    public static func connection(_ code: HTTP2ErrorCode, _ reason: String) -> HTTP2ProtocolError {
        HTTP2ProtocolError(code: code, streamID: nil, reason: reason)
    }

    /// Creates a stream error.
    /// - Parameters:
    ///   - code: The error code for RST_STREAM.
    ///   - streamID: The stream.
    ///   - reason: A fixed sentence.
    public static func stream(_ code: HTTP2ErrorCode, _ streamID: UInt32, _ reason: String) -> HTTP2ProtocolError {
        HTTP2ProtocolError(code: code, streamID: streamID, reason: reason)
    }

    /// Whether the whole connection must end (`streamID` is `nil`).
    public var isConnectionError: Bool { streamID == nil }

    /// "Connection error PROTOCOL_ERROR: …" or "Stream 3 error FRAME_SIZE_ERROR: …".
    public var description: String {
        let scope = streamID.map { "Stream \($0) error" } ?? "Connection error"
        return "\(scope) \(code): \(reason)"
    }
}

/// An HTTP/2 error code (RFC 9113 §7), as carried by RST_STREAM and GOAWAY.
///
/// Codes this type does not name are kept as they are (`rawValue`); RFC 9113 says they must
/// not trigger special behaviour and may be treated as `internalError`.
public struct HTTP2ErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 32-bit code on the wire.
    public let rawValue: UInt32

    /// Wraps a code from the wire.
    /// - Parameter rawValue: The 32-bit code.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// NO_ERROR (0x0): a graceful shutdown, or a stream closed without error.
    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    /// PROTOCOL_ERROR (0x1): an unspecific protocol error.
    public static let protocolError = HTTP2ErrorCode(rawValue: 0x1)
    /// INTERNAL_ERROR (0x2): the endpoint hit an internal error.
    public static let internalError = HTTP2ErrorCode(rawValue: 0x2)
    /// FLOW_CONTROL_ERROR (0x3): the peer broke the flow-control protocol.
    public static let flowControlError = HTTP2ErrorCode(rawValue: 0x3)
    /// SETTINGS_TIMEOUT (0x4): a SETTINGS frame was not acknowledged in time.
    public static let settingsTimeout = HTTP2ErrorCode(rawValue: 0x4)
    /// STREAM_CLOSED (0x5): a frame arrived on a half-closed stream.
    public static let streamClosed = HTTP2ErrorCode(rawValue: 0x5)
    /// FRAME_SIZE_ERROR (0x6): a frame has an invalid size.
    public static let frameSizeError = HTTP2ErrorCode(rawValue: 0x6)
    /// REFUSED_STREAM (0x7): the stream was refused before any processing; it can be retried.
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    /// CANCEL (0x8): the stream is no longer needed.
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
    /// COMPRESSION_ERROR (0x9): the field compression context cannot be maintained.
    public static let compressionError = HTTP2ErrorCode(rawValue: 0x9)
    /// CONNECT_ERROR (0xa): the connection of a CONNECT request was reset or closed.
    public static let connectError = HTTP2ErrorCode(rawValue: 0xa)
    /// ENHANCE_YOUR_CALM (0xb): the peer is generating excessive load.
    public static let enhanceYourCalm = HTTP2ErrorCode(rawValue: 0xb)
    /// INADEQUATE_SECURITY (0xc): the transport does not meet minimum security requirements.
    public static let inadequateSecurity = HTTP2ErrorCode(rawValue: 0xc)
    /// HTTP_1_1_REQUIRED (0xd): the request must be retried over HTTP/1.1.
    public static let http11Required = HTTP2ErrorCode(rawValue: 0xd)

    private static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
        "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]

    /// The RFC's name (e.g. `REFUSED_STREAM`), or `0x…` for an unknown code.
    public var description: String {
        rawValue < UInt32(Self.names.count)
            ? Self.names[Int(rawValue)]
            : "0x" + String(rawValue, radix: 16)
    }
}

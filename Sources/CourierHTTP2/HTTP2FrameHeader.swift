/// The 9-octet header every HTTP/2 frame starts with (RFC 9113 §4.1).
public struct HTTP2FrameHeader: Sendable, Equatable {
    /// The size of the encoded header.
    public static let size = 9

    /// The payload length (24 bits).
    public var length: Int
    /// The frame type (0x0 DATA to 0x9 CONTINUATION; other values are extension types).
    public var type: UInt8
    /// The type-specific flags.
    public var flags: UInt8
    /// The stream identifier (31 bits; the reserved bit is dropped on decode and sent as 0).
    public var streamID: UInt32

    /// Creates a frame header.
    /// - Parameters:
    ///   - length: The payload length, below 2²⁴.
    ///   - type: The frame type.
    ///   - flags: The flags.
    ///   - streamID: The stream identifier, below 2³¹.
    public init(length: Int, type: UInt8, flags: UInt8, streamID: UInt32) {
        self.length = length
        self.type = type
        self.flags = flags
        self.streamID = streamID
    }

    /// Decodes a header from the first 9 octets of `bytes` starting at `offset`.
    /// - Parameters:
    ///   - bytes: A buffer holding at least 9 octets from `offset`.
    ///   - offset: Where the header starts.
    public init(decoding bytes: [UInt8], at offset: Int) {
        length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
        type = bytes[offset + 3]
        flags = bytes[offset + 4]
        streamID = UInt32(bytes[offset + 5] & 0x7f) << 24 | UInt32(bytes[offset + 6]) << 16
            | UInt32(bytes[offset + 7]) << 8 | UInt32(bytes[offset + 8])
    }

    /// Appends the 9 octets of this header.
    /// - Parameter output: The buffer to append to.
    public func encode(into output: inout [UInt8]) {
        precondition(length >= 0 && length < 1 << 24, "frame length out of range")
        output.append(UInt8(truncatingIfNeeded: length >> 16))
        output.append(UInt8(truncatingIfNeeded: length >> 8))
        output.append(UInt8(truncatingIfNeeded: length))
        output.append(type)
        output.append(flags)
        HTTP2Wire.appendUInt32(streamID & 0x7fff_ffff, to: &output)
    }
}

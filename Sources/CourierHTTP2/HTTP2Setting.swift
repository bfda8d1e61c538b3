/// One parameter of a SETTINGS frame (RFC 9113 §6.5.1): a 16-bit identifier and a 32-bit value.
public struct HTTP2Setting: Sendable, Equatable {
    /// A SETTINGS parameter identifier. Unknown identifiers are kept as they are and ignored.
    public struct Identifier: RawRepresentable, Sendable, Hashable {
        /// The 16-bit identifier on the wire.
        public let rawValue: UInt16
        /// Wraps an identifier from the wire.
        /// - Parameter rawValue: The 16-bit identifier.
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// SETTINGS_HEADER_TABLE_SIZE (0x1): the largest HPACK dynamic table the sender's
        /// decoder allows (initially 4,096).
        public static let headerTableSize = Identifier(rawValue: 0x1)
        /// SETTINGS_ENABLE_PUSH (0x2): 0 or 1; Courier always sends 0.
        public static let enablePush = Identifier(rawValue: 0x2)
        /// SETTINGS_MAX_CONCURRENT_STREAMS (0x3): the most streams the sender lets the peer open.
        public static let maxConcurrentStreams = Identifier(rawValue: 0x3)
        /// SETTINGS_INITIAL_WINDOW_SIZE (0x4): the initial stream flow-control window, at most
        /// 2³¹ − 1 (initially 65,535).
        public static let initialWindowSize = Identifier(rawValue: 0x4)
        /// SETTINGS_MAX_FRAME_SIZE (0x5): the largest frame payload the sender accepts,
        /// 16,384 to 16,777,215.
        public static let maxFrameSize = Identifier(rawValue: 0x5)
        /// SETTINGS_MAX_HEADER_LIST_SIZE (0x6): advisory bound on the field list the sender accepts.
        public static let maxHeaderListSize = Identifier(rawValue: 0x6)
    }

    /// The identifier.
    public var identifier: Identifier
    /// The value.
    public var value: UInt32

    /// Creates a parameter.
    /// - Parameters:
    ///   - identifier: The identifier.
    ///   - value: The value.
    public init(_ identifier: Identifier, _ value: UInt32) {
        self.identifier = identifier
        self.value = value
    }

    /// Checks the value against §6.5.2.
    /// - Throws: A connection error: PROTOCOL_ERROR for ENABLE_PUSH above 1 (or 1 when
    ///   `pushForbidden`, i.e. from a server), FLOW_CONTROL_ERROR for INITIAL_WINDOW_SIZE above
    ///   2³¹ − 1, PROTOCOL_ERROR for MAX_FRAME_SIZE outside 16,384…16,777,215.
    func validate(pushForbidden: Bool) throws(HTTP2ProtocolError) {
        switch identifier {
        case .enablePush where value > 1:
            throw .connection(.protocolError, "SETTINGS_ENABLE_PUSH is neither 0 nor 1")
        case .enablePush where value == 1 && pushForbidden:
            throw .connection(.protocolError, "the server sent SETTINGS_ENABLE_PUSH = 1")
        case .initialWindowSize where value > 0x7fff_ffff:
            throw .connection(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE exceeds 2^31 - 1")
        case .maxFrameSize where value < 16_384 || value > 16_777_215:
            throw .connection(.protocolError, "SETTINGS_MAX_FRAME_SIZE is outside 16384...16777215")
        default:
            return
        }
    }
}

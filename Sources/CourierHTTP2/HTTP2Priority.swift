/// The priority fields of a PRIORITY frame or a HEADERS frame with the PRIORITY flag
/// (RFC 9113 §5.3.2, §6.3). RFC 9113 deprecates this scheme: Courier parses and skips it.
public struct HTTP2Priority: Sendable, Equatable {
    /// Whether the dependency is exclusive (the E bit).
    public var exclusive: Bool
    /// The stream this one depends on (31 bits).
    public var dependency: UInt32
    /// The weight as sent on the wire (0–255, meaning 1–256).
    public var weight: UInt8

    /// Creates priority fields.
    /// - Parameters:
    ///   - exclusive: The E bit.
    ///   - dependency: The stream depended on, below 2³¹.
    ///   - weight: The wire weight (weight − 1).
    public init(exclusive: Bool = false, dependency: UInt32 = 0, weight: UInt8 = 15) {
        self.exclusive = exclusive
        self.dependency = dependency
        self.weight = weight
    }

    /// The encoded size (5 octets).
    static let size = 5

    /// Decodes the 5 octets at `offset`.
    init(decoding bytes: [UInt8], at offset: Int) {
        let word = HTTP2Wire.readUInt32(bytes, at: offset)
        exclusive = word & 0x8000_0000 != 0
        dependency = word & 0x7fff_ffff
        weight = bytes[offset + 4]
    }

    /// Appends the 5 octets.
    func encode(into output: inout [UInt8]) {
        HTTP2Wire.appendUInt32((exclusive ? 0x8000_0000 : 0) | (dependency & 0x7fff_ffff), to: &output)
        output.append(weight)
    }
}

/// Size limits that protect the parsers from hostile or broken peers.
public struct HTTP1Limits: Sendable, Equatable {
    /// The largest head (start line, fields and the final empty line) in bytes. Default: 65,536.
    public var maxHeadBytes: Int
    /// The most fields in a head, and separately in a trailer section. Default: 100.
    public var maxFieldCount: Int
    /// The longest chunk-size line (size, extensions and CRLF) in bytes. Default: 4,096.
    public var maxChunkLineBytes: Int
    /// The largest trailer section of a chunked body in bytes. Default: 16,384.
    public var maxTrailerBytes: Int

    /// Creates limits.
    /// - Parameters:
    ///   - maxHeadBytes: The largest head in bytes. Default: 65,536.
    ///   - maxFieldCount: The most fields in a head or trailer section. Default: 100.
    ///   - maxChunkLineBytes: The longest chunk-size line in bytes. Default: 4,096.
    ///   - maxTrailerBytes: The largest trailer section in bytes. Default: 16,384.
    public init(maxHeadBytes: Int = 65_536, maxFieldCount: Int = 100,
                maxChunkLineBytes: Int = 4096, maxTrailerBytes: Int = 16_384) {
        self.maxHeadBytes = maxHeadBytes
        self.maxFieldCount = maxFieldCount
        self.maxChunkLineBytes = maxChunkLineBytes
        self.maxTrailerBytes = maxTrailerBytes
    }
}

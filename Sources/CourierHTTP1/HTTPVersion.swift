/// An HTTP protocol version as written on the wire (`HTTP/1.1`).
public struct HTTPVersion: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The major version (the `1` of `HTTP/1.1`).
    public var major: Int
    /// The minor version (the second `1` of `HTTP/1.1`).
    public var minor: Int

    /// Creates a version.
    /// - Parameters:
    ///   - major: The major version, a single digit on the wire (0–9).
    ///   - minor: The minor version, a single digit on the wire (0–9).
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// `HTTP/1.0`: connections close after each message unless `Connection: keep-alive`.
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// `HTTP/1.1`: connections persist unless `Connection: close`.
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// The wire form, e.g. `HTTP/1.1`.
    public var description: String { "HTTP/\(major).\(minor)" }

    /// Whether connections persist by default (HTTP/1.1 and later).
    var persistsByDefault: Bool { major > 1 || (major == 1 && minor >= 1) }

    /// Writes `HTTP/x.y` (8 bytes); components outside 0–9 are clamped to one digit.
    func write(to writer: inout WireWriter) {
        for byte: UInt8 in [0x48, 0x54, 0x54, 0x50, 0x2F] { writer.write(byte) } // "HTTP/"
        writer.write(0x30 &+ UInt8(clamping: Swift.min(Swift.max(major, 0), 9)))
        writer.write(0x2E)
        writer.write(0x30 &+ UInt8(clamping: Swift.min(Swift.max(minor, 0), 9)))
    }
}

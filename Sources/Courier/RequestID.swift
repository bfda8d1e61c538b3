import Synchronization

/// Identifies one started request; unique within the process.
///
/// Every start returns one. Pass it to ``HTTPConnection/cancel(_:)``; it is also handed to
/// every delegate callback and to `onDidStart`.
public struct RequestID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number; increasing in the order requests were started.
    public let rawValue: UInt64

    /// Wraps a number. Normally you get IDs from Courier rather than making them.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// `"#42"`.
    public var description: String { "#\(rawValue)" }

    /// Orders by start order.
    public static func < (lhs: RequestID, rhs: RequestID) -> Bool { lhs.rawValue < rhs.rawValue }

    private static let counter = Atomic<UInt64>(0)

    static func next() -> RequestID {
        RequestID(rawValue: counter.add(1, ordering: .relaxed).newValue)
    }
}

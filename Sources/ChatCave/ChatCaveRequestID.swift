import Synchronization

/// Identifies one request started in the closure style; pass it to
/// ``ChatCaveService/cancelRequest(id:)``. Unique within the process.
public struct ChatCaveRequestID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number, increasing in start order.
    public let rawValue: UInt64

    /// Wraps a number; normally ids come from the service.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// `"chatcave#3"`.
    public var description: String { "chatcave#\(rawValue)" }

    /// Orders by start order.
    public static func < (lhs: ChatCaveRequestID, rhs: ChatCaveRequestID) -> Bool { lhs.rawValue < rhs.rawValue }

    private static let counter = Atomic<UInt64>(0)

    static func next() -> ChatCaveRequestID {
        ChatCaveRequestID(rawValue: counter.add(1, ordering: .relaxed).newValue)
    }
}

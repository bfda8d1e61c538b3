import Synchronization

/// A fixed set of ``EventLoop``s handed out round-robin.
///
/// Servers spread accepted connections over the group's loops with ``next()``;
/// clients do the same for new connections.
public final class EventLoopGroup: Sendable {
    /// The loops, in creation order.
    public let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)

    /// Creates and starts `count` loops.
    ///
    /// - Parameters:
    ///   - count: How many loops (at least 1; smaller values are raised to 1). Defaults to 1.
    ///   - name: The prefix of the loops' names: `"<name>-0"`, `"<name>-1"`, ...; defaults to `"courier-loop"`.
    /// - Throws: ``SocketError`` if a loop cannot be created; loops already started are shut down.
    public init(count: Int = 1, name: String = "courier-loop") throws(SocketError) {
        var loops: [EventLoop] = []
        for index in 0..<max(count, 1) {
            do {
                loops.append(try EventLoop(name: "\(name)-\(index)"))
            } catch {
                for loop in loops { loop.shutdown() }
                throw error
            }
        }
        self.loops = loops
    }

    /// The next loop, round-robin. Callable from any thread.
    ///
    /// - Returns: One of ``loops``.
    public func next() -> EventLoop {
        let index = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[Int(UInt(bitPattern: index) % UInt(loops.count))]
    }

    /// Shuts every loop down and waits for their threads. Idempotent.
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }
}

/// A value that may only be touched on one ``EventLoop``'s thread, but can be carried anywhere.
///
/// Use it to keep loop-confined mutable state (a connection's buffers and state
/// machine, for instance) inside `Sendable` types and `@Sendable` closures
/// without scattering `@unchecked Sendable`.
///
/// The invariant: the wrapped value is read and written only on ``loop``'s
/// thread. Every accessor checks ``EventLoop/inEventLoop`` and stops the process
/// when called elsewhere, so a violation is caught at its source instead of
/// becoming a data race. Copies of a `LoopBound` share the same storage.
///
/// ```swift
/// let counter = LoopBound(sending: 0, to: loop)
/// loop.execute { counter.value += 1 }
/// ```
public struct LoopBound<Value>: @unchecked Sendable {
    // @unchecked: `storage` is only reached through accessors that verify the loop thread.
    private final class Storage {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// The loop that owns the value.
    public let loop: EventLoop
    private let storage: Storage

    /// Wraps `value` for `loop`, on the loop's own thread.
    ///
    /// The value may be shared with other code running on the same thread (for
    /// example a connection object wrapping itself for a timer closure). Calling this
    /// elsewhere stops the process; from another thread use ``init(sending:to:)``.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - loop: The loop whose thread may access it; must be the calling thread's loop.
    public init(_ value: Value, on loop: EventLoop) {
        loop.preconditionInEventLoop()
        self.loop = loop
        self.storage = Storage(value)
    }

    /// Wraps `value` for `loop` from any thread. The value is handed over to the
    /// loop (`sending`), so the caller cannot keep using it.
    ///
    /// - Parameters:
    ///   - value: The initial value.
    ///   - loop: The loop whose thread may access it.
    public init(sending value: sending Value, to loop: EventLoop) {
        self.loop = loop
        self.storage = Storage(value)
    }

    /// The value. Loop thread only.
    public var value: Value {
        get {
            loop.preconditionInEventLoop()
            return storage.value
        }
        nonmutating _modify {
            loop.preconditionInEventLoop()
            yield &storage.value
        }
        nonmutating set {
            loop.preconditionInEventLoop()
            storage.value = newValue
        }
    }

    /// Runs `body` with in-place access to the value. Loop thread only.
    ///
    /// - Parameter body: Reads or changes the value.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        loop.preconditionInEventLoop()
        return try body(&storage.value)
    }

    /// Runs `body` with the value on the loop's thread: at once when already there,
    /// otherwise through ``EventLoop/execute(_:)``.
    ///
    /// - Parameter body: Reads or changes the value.
    /// - Returns: `false` if the loop refused the work because it is shutting down.
    @discardableResult
    public func run(_ body: @escaping @Sendable (inout Value) -> Void) -> Bool {
        if loop.inEventLoop {
            body(&storage.value)
            return true
        }
        return loop.execute { self.withValue(body) }
    }
}

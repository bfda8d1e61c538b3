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
/// let counter = LoopBound(0, on: loop)
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

    /// Wraps `value` for `loop`. Callable from any thread: the value is handed over
    /// to the loop, so the caller must not keep using it.
    ///
    /// - Parameters:
    ///   - value: The initial value.
    ///   - loop: The loop whose thread may access it.
    public init(_ value: sending Value, on loop: EventLoop) {
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

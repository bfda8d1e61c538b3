import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
@testable import CourierWire

/// A thread-safe box for values produced on loop threads and checked by tests.
final class Recorder<Value: Sendable>: Sendable {
    private let storage: Mutex<[Value]> = Mutex([])
    private let signal = DispatchSemaphore(value: 0)

    func append(_ value: Value) {
        storage.withLock { $0.append(value) }
        signal.signal()
    }

    var values: [Value] { storage.withLock { $0 } }

    /// Waits until `count` values arrived or `seconds` passed; returns whether they arrived.
    func wait(for count: Int, seconds: Double = 10) -> Bool {
        let deadline = DispatchTime.now() + seconds
        while storage.withLock({ $0.count }) < count {
            if signal.wait(timeout: deadline) == .timedOut { return storage.withLock { $0.count } >= count }
        }
        return true
    }
}

/// An object whose lifetime tests observe through a weak reference.
final class Canary: Sendable {}

/// Weak holder that can cross threads.
final class WeakBox: Sendable {
    private let weakReference = Mutex(WeakCanary())
    init(_ canary: Canary) {
        weakReference.withLock { $0.value = canary }
    }
    var isAlive: Bool { weakReference.withLock { $0.value != nil } }
}

struct WeakCanary {
    weak var value: Canary?
}

/// Runs `body` on `loop` and waits for its result.
func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = Recorder<Result<T, any Error>>()
    loop.execute { result.append(Result { try body() }) }
    guard result.wait(for: 1), let value = result.values.first else {
        throw SocketError(operation: "onLoop", message: "timed out")
    }
    return try value.get()
}

import CourierTestServer
import Synchronization
import Testing

/// The check an integration test ends with (reliability case K1): once the test's body
/// returned, every object it registered is freed, every count it registered is back to zero,
/// and no socket of this process is still connected to a watched port.
///
/// Use it through ``withLeakCheck(watching:timeout:sourceLocation:_:)``, which runs the body in
/// a scope of its own (so that the body's locals are gone when the check runs), then verifies.
/// A test target extends it for what only it can see: CourierTests counts a native transport's
/// pools and connection objects (through `@testable` internals) with ``watch(_:count:)``.
///
/// Sockets are counted per server port (``ProcessSockets/connected(toPort:)``) rather than in
/// total, so the count stays exact while other tests open and close their own sockets in parallel.
package final class LeakCheck: Sendable {
    /// A weak reference; `@unchecked` because it only ever points at a `Sendable` object.
    private struct Entry: @unchecked Sendable {
        weak var object: AnyObject?
        let name: String
    }

    /// A count that must be zero at the end, and what it counts.
    private struct Count: Sendable {
        let name: String
        let value: @Sendable () -> Int
    }

    private let objects = Mutex<[Entry]>([])
    private let counts = Mutex<[Count]>([])
    /// The watched ports, each with the sockets the test holds on purpose.
    private let ports: Mutex<[Int: Int]>

    /// Creates a check watching `ports` (no client socket may remain on them).
    package init(ports: [Int] = []) {
        self.ports = Mutex(Dictionary(ports.map { ($0, 0) }, uniquingKeysWith: { first, _ in first }))
    }

    /// Registers an object that must be freed by the end of the test.
    /// - Returns: `object`, so that the call can wrap an initializer.
    @discardableResult
    package func track<Object: AnyObject & Sendable>(_ object: Object) -> Object {
        trackObject(object)
        return object
    }

    /// Registers an object that must be freed by the end of the test, whatever its static type
    /// (for an extension whose own `track` overload takes the concrete type).
    package func trackObject(_ object: AnyObject) {
        objects.withLock { $0.append(Entry(object: object, name: String(describing: type(of: object)))) }
    }

    /// Registers a port that must have no more client sockets of this process at the end than
    /// `baseline` (sockets the test itself holds on purpose, such as a blackhole's fillers).
    package func watch(port: Int, baseline: Int = 0) {
        ports.withLock { $0[port] = baseline }
    }

    /// Registers a count that must be back to zero at the end, such as a transport's live pools.
    /// - Parameters:
    ///   - name: what it counts, for the issue recorded when it is not zero.
    ///   - count: reads the count; called from any thread.
    package func watch(_ name: String, count: @escaping @Sendable () -> Int) {
        counts.withLock { $0.append(Count(name: name, value: count)) }
    }

    /// The type names of the registered objects still alive.
    package var survivors: [String] {
        objects.withLock { $0.filter { $0.object != nil }.map(\.name) }
    }

    /// The registered counts that are not zero, as "name: value".
    package var nonZeroCounts: [String] {
        counts.withLock { $0 }.compactMap { count in
            let value = count.value()
            return value == 0 ? nil : "\(count.name): \(value)"
        }
    }

    /// Client sockets of this process still connected to a watched port, beyond its baseline.
    package var openSockets: Int {
        ports.withLock { $0 }.reduce(0) { $0 + max(ProcessSockets.connected(toPort: $1.key) - $1.value, 0) }
    }

    /// Waits (polling every 20 ms, for at most `timeout`) for everything to be released, then
    /// records an issue for whatever was not.
    package func verify(timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation) async {
        // Cheap checks first; the sockets only once every object is gone (a live object may
        // rightly hold one). Polled, not spun: many tests verify at once on a 2-core machine.
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var clean = false
        while !clean {
            clean = survivors.isEmpty && nonZeroCounts.isEmpty && openSockets == 0
            if clean || clock.now >= deadline { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard !clean else { return }
        #expect(survivors.isEmpty, "objects outlived their last reference: \(survivors)", sourceLocation: sourceLocation)
        #expect(nonZeroCounts.isEmpty, "still alive: \(nonZeroCounts)", sourceLocation: sourceLocation)
        #expect(openSockets == 0, "client sockets still open to the test's servers", sourceLocation: sourceLocation)
    }
}

/// Runs a test's body with a ``LeakCheck``, then verifies that the body left nothing behind
/// that it registered: objects, counts, sockets to `ports`.
///
/// The body runs in its own scope, so its locals are released before the check; keep no
/// reference to a tracked object outside it.
/// - Parameters:
///   - ports: server ports to watch from the start (the body may add more with
///     ``LeakCheck/watch(port:baseline:)``); create the servers before, and stop them after, this call.
///   - timeout: how long the check waits for the last releases; 20 s by default.
///   - body: the test, given the check to register what it makes.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws (the check is then skipped).
package func withLeakCheck<Result>(watching ports: [Int] = [], timeout: Duration = .seconds(20),
                                   sourceLocation: SourceLocation = #_sourceLocation,
                                   _ body: (LeakCheck) async throws -> Result) async rethrows -> Result {
    _ = StallWatchdog.started
    let check = LeakCheck(ports: ports)
    let result = try await body(check)
    await check.verify(timeout: timeout, sourceLocation: sourceLocation)
    return result
}

import CourierTestServer
import Synchronization
import Testing

/// The check every ChatCave integration test ends with (issue 9, leak checks): once the test's
/// body returned, every object it registered is freed and no socket of this process is still
/// connected to a watched port.
///
/// Sockets are counted per server port (``ProcessSockets/connected(toPort:)``), so the count
/// stays exact while other tests open and close their own sockets in parallel.
final class LeakCheck: Sendable {
    /// A weak reference; `@unchecked` because it only ever points at a `Sendable` object.
    private struct Entry: @unchecked Sendable {
        weak var object: AnyObject?
        let name: String
    }

    private let entries = Mutex<[Entry]>([])
    private let ports: Mutex<[Int]>

    /// Creates a check for the given server ports.
    init(ports: [Int]) {
        self.ports = Mutex(ports)
    }

    /// Registers an object that must be freed once the body ends.
    /// - Returns: `object`, so that the call can wrap an initializer.
    @discardableResult
    func track<Object: AnyObject & Sendable>(_ object: Object) -> Object {
        entries.withLock { $0.append(Entry(object: object, name: String(describing: type(of: object)))) }
        return object
    }

    /// Registers one more port that must have no client socket of this process at the end.
    func watch(port: Int) {
        ports.withLock { $0.append(port) }
    }

    /// What is still alive: the survivors' type names, then (only once no object survives, as
    /// a live object may rightly hold a socket) the watched ports that still have sockets.
    var leftovers: [String] {
        let survivors = entries.withLock { $0.filter { $0.object != nil }.map(\.name) }
        guard survivors.isEmpty else { return survivors }
        return ports.withLock { $0 }.compactMap { port in
            let open = ProcessSockets.connected(toPort: port)
            return open == 0 ? nil : "\(open) socket(s) connected to port \(port)"
        }
    }

    /// Polls every 20 ms, for at most `timeout`, until nothing is left; records an issue naming
    /// whatever still is.
    func verify(timeout: Duration, sourceLocation: SourceLocation) async {
        let deadline = ContinuousClock.now + timeout
        var left = leftovers
        while !left.isEmpty, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
            left = leftovers
        }
        #expect(left.isEmpty, "outlived the test: \(left)", sourceLocation: sourceLocation)
    }
}

/// Runs a test's body in a scope of its own, then checks with a ``LeakCheck`` that it left
/// nothing behind: no registered object alive, no socket connected to `ports`.
/// - Parameters:
///   - ports: the test's server ports; create the servers before, and stop them after, this call.
///   - timeout: how long the check waits for the last releases; 20 s by default.
///   - body: the test, given the check to register its objects with.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws (the check is then skipped).
func withLeakCheck<Result>(watching ports: [Int], timeout: Duration = .seconds(20),
                           sourceLocation: SourceLocation = #_sourceLocation,
                           _ body: (LeakCheck) async throws -> Result) async rethrows -> Result {
    let check = LeakCheck(ports: ports)
    let result = try await body(check)
    await check.verify(timeout: timeout, sourceLocation: sourceLocation)
    return result
}

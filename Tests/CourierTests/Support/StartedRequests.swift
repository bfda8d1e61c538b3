import Courier
import CourierTestSupport
import Synchronization

/// Counts the requests a connection has started, through its ``EventMonitor``, so that a test can
/// hold a server's answer (``TestServer/Gate``) until every request it sent is under way, instead
/// of betting that a fixed delay outlasts the start of them all, which a slow machine (TSan) can
/// make take seconds. What remains fixed is the grace in ``reach(_:)`` for the few calls a started
/// request makes before its first wait.
final class StartedRequests: Sendable {
    private let count = Atomic(0)

    /// The monitor to set on the connection: it hears of each request just before the request
    /// enters the pipeline.
    var monitor: EventMonitor {
        EventMonitor { [self] event in
            if case .started = event { count.add(1, ordering: .relaxed) }
        }
    }

    /// How many requests have started.
    var value: Int { count.load(ordering: .relaxed) }

    /// Waits until `expected` requests have started, then 200 ms more for the last of them to
    /// reach their first wait in the pipeline (a few calls with no wait in between).
    /// - Returns: `false` when they had not all started after 60 s.
    func reach(_ expected: Int) async -> Bool {
        guard await eventually(timeout: .seconds(60), { value >= expected }) else { return false }
        try? await Task.sleep(for: .milliseconds(200))
        return true
    }
}

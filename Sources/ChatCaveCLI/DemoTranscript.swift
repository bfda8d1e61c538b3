import ChatCave
import Synchronization

/// What each demo user's poller has delivered, and a bounded wait for a line to arrive.
final class DemoTranscript: Sendable {
    /// A line that did not arrive in time.
    struct Timeout: Error, CustomStringConvertible {
        let description: String
    }

    private let seen = Mutex<[String: [Message]]>([:])

    /// Records what `viewer`'s poller delivered.
    func record(_ messages: [Message], seenBy viewer: String) {
        seen.withLock { $0[viewer, default: []].append(contentsOf: messages) }
    }

    /// Everything `viewer` saw, in delivery order.
    func messages(seenBy viewer: String) -> [Message] {
        seen.withLock { $0[viewer] ?? [] }
    }

    /// Waits until `viewer` has seen a message matching `condition`.
    /// - Throws: ``Timeout`` after `timeout`.
    func waitUntil(_ viewer: String, sees what: String, timeout: Duration = .seconds(10),
                   _ condition: @escaping @Sendable (Message) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if messages(seenBy: viewer).contains(where: condition) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw Timeout(description: "\(viewer) did not see \(what) within \(timeout)")
    }
}

import Synchronization

/// Counts what a ``ChatCaveServer`` answered.
final class ServerStatistics: Sendable {
    private let counts = Mutex<[Int: Int]>([:])

    /// Counts one response.
    func record(status: Int) {
        counts.withLock { $0[status, default: 0] += 1 }
    }

    /// The number of responses per status code so far.
    var responsesByStatus: [Int: Int] {
        counts.withLock { $0 }
    }
}

import CourierWire
import Synchronization

/// What every loop of one ``HTTPServer`` shares: configuration, handler and counters.
final class ServerContext: Sendable {
    let configuration: HTTPServer.Configuration
    let handler: HTTPServer.Handler
    let statistics = Mutex(Statistics())
    let isShuttingDown = Atomic<Bool>(false)

    struct Statistics {
        var accepted = 0
        var open = 0
        var refused = 0
        var total = 0
        var perPath = PathCounts()
    }

    init(configuration: HTTPServer.Configuration, handler: @escaping HTTPServer.Handler) {
        self.configuration = configuration
        self.handler = handler
    }

    /// Admits an accepted connection under ``HTTPServer/Configuration/maxConnections``: counts it
    /// as open and returns its 1-based number, or counts it as refused and returns `nil` when
    /// the server already holds the maximum. An admitted connection ends with `connectionClosed()`.
    func admitConnection() -> Int? {
        statistics.withLock { stats in
            guard stats.open < configuration.maxConnections else {
                stats.refused += 1
                return nil
            }
            stats.open += 1
            stats.accepted += 1
            return stats.accepted
        }
    }

    /// Releases the place of an admitted connection.
    func connectionClosed() {
        statistics.withLock { $0.open -= 1 }
    }

    func requestReceived(path: String) {
        statistics.withLock { stats in
            stats.total += 1
            stats.perPath.record(path)
        }
    }
}

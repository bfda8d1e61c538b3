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
        var total = 0
        var perPath = PathCounts()
    }

    init(configuration: HTTPServer.Configuration, handler: @escaping HTTPServer.Handler) {
        self.configuration = configuration
        self.handler = handler
    }

    /// Counts an accepted connection and returns its 1-based number.
    func connectionAccepted() -> Int {
        statistics.withLock { stats in
            stats.accepted += 1
            return stats.accepted
        }
    }

    func connectionOpened() {
        statistics.withLock { $0.open += 1 }
    }

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

import Synchronization

/// Gathers the metrics of one request across its attempts and redirects.
final class MetricsCollector: Sendable {
    private let metrics = Mutex(RequestMetrics())
    private let start = ContinuousClock.now

    func recordAttempt() {
        metrics.withLock { $0.attempts += 1 }
    }

    func recordRedirect() {
        metrics.withLock { $0.redirects += 1 }
    }

    func recordCache(_ outcome: CacheOutcome) {
        metrics.withLock { $0.cache = outcome }
    }

    func record(_ transport: TransportMetrics) {
        metrics.withLock { metrics in
            metrics.lastAttempt = transport
            metrics.bytesSent += transport.bytesSent
            metrics.bytesReceived += transport.bytesReceived
        }
    }

    /// The metrics so far, with `complete` measured up to now.
    func snapshot() -> RequestMetrics {
        let elapsed = ContinuousClock.now - start
        return metrics.withLock { metrics in
            metrics.complete = elapsed
            return metrics
        }
    }
}

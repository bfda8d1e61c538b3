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
            metrics.queued = transport.queued
            metrics.dnsLookup = transport.dnsLookup
            metrics.connect = transport.connect
            metrics.tlsHandshake = transport.tlsHandshake
            metrics.requestSent = transport.requestSent
            metrics.firstByte = transport.firstByte
            metrics.reusedConnection = transport.reusedConnection
            metrics.httpVersion = transport.httpVersion
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

/// The innermost stage: counts each transport attempt. Transports report their own timings
/// through the observer.
struct MetricsStage: PipelineStage {
    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        context.metrics.recordAttempt()
        return try await next(request)
    }
}

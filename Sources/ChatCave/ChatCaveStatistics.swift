import Courier
import Synchronization

/// What a ``ChatCaveService`` has sent so far: requests, retries, re-authentications, latency.
public struct ChatCaveStatistics: Sendable, Equatable, CustomStringConvertible {
    /// Requests started (sign-ins made by the authentication handler not included).
    public var requests = 0
    /// Requests that ended, successfully or not (cancelled ones not included).
    public var completed = 0
    /// Requests that ended in a failure.
    public var failures = 0
    /// Requests that were cancelled.
    public var cancelled = 0
    /// Extra sends of requests: held and resent after a re-authentication, or retried.
    public var retries = 0
    /// Answers that refused a request's credentials; each such request was held and resent.
    public var heldForAuthentication = 0
    /// Successful sign-ins made through the authentication handler.
    public var reauthentications = 0
    /// The sum of every completed request's duration, from start to end (holds included).
    public var totalLatency: Duration = .zero

    /// Creates empty statistics.
    public init() {}

    /// Requests started that have not ended yet. While the authentication handler is being
    /// asked, these are the requests the re-authentication queue holds.
    public var inFlight: Int {
        max(0, requests - completed - cancelled)
    }

    /// The mean duration of completed requests; zero when none completed.
    public var meanLatency: Duration {
        completed == 0 ? .zero : totalLatency / completed
    }

    /// `"12 requests, 2 retries, 1 re-authentication, mean latency 3.2 ms"`.
    public var description: String {
        let millis = Double(meanLatency.components.attoseconds) / 1e15 + Double(meanLatency.components.seconds) * 1_000
        return "\(requests) requests, \(retries) retr\(retries == 1 ? "y" : "ies"), "
            + "\(reauthentications) re-authentication\(reauthentications == 1 ? "" : "s"), "
            + "mean latency \((millis * 10).rounded() / 10) ms"
    }
}

/// Gathers ``ChatCaveStatistics`` from Courier's event monitor and the authenticator.
final class StatisticsCollector: Sendable {
    private let statistics = Mutex(ChatCaveStatistics())

    /// The current figures.
    var snapshot: ChatCaveStatistics { statistics.withLock { $0 } }

    /// An event monitor that feeds this collector.
    var monitor: EventMonitor {
        EventMonitor { [self] event in record(event) }
    }

    private func record(_ event: EventMonitor.Event) {
        statistics.withLock { figures in
            switch event {
            case .started:
                figures.requests += 1
            case .finished(_, _, _, let metrics):
                figures.completed += 1
                figures.totalLatency += metrics.complete
                figures.retries += max(0, metrics.attempts - 1 - metrics.redirects)
            case .failed(_, _, let metrics):
                figures.completed += 1
                figures.failures += 1
                figures.totalLatency += metrics.complete
                figures.retries += max(0, metrics.attempts - 1 - metrics.redirects)
            case .cancelled:
                figures.cancelled += 1
            default:
                break
            }
        }
    }

    /// Counts an answer that refused a request's credentials.
    func recordChallenge() {
        statistics.withLock { $0.heldForAuthentication += 1 }
    }

    /// Counts a successful re-authentication.
    func recordReauthentication() {
        statistics.withLock { $0.reauthentications += 1 }
    }
}

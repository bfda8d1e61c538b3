/// What the pipeline's stages know about the request they are carrying.
///
/// A class, not a struct: every stage's frame holds it while the request waits on the network,
/// so it is one reference there instead of a copy of the whole plan per stage.
final class RequestContext: Sendable {
    /// The request's id.
    let id: RequestID
    /// The resolved request and its effective settings.
    let plan: RequestPlan
    /// Receives the transport's progress for the delegate.
    let observer: any TransportObserver
    /// Hears retries and redirects, and may steer redirects.
    let events: any RequestEvents
    /// Gathers timings and counts.
    let metrics: MetricsCollector
    /// When the whole request must be over, if it has a deadline.
    let deadline: ContinuousClock.Instant?
    /// Whether the transport streams the body (``HTTPResponse/bodyStream``) instead of collecting it.
    let streamsResponse: Bool
    /// Whether the cache may store the response (not for a download, whose body goes to a file).
    let mayStoreInCache: Bool
    /// Stops the pipeline's waits when the request ends, for a request that runs in its caller's
    /// task (which task cancellation cannot reach); `nil` for a request on a task of its own.
    let interruption: RequestInterruption?

    init(id: RequestID, plan: RequestPlan, observer: any TransportObserver, events: any RequestEvents,
         metrics: MetricsCollector, deadline: ContinuousClock.Instant?, streamsResponse: Bool = false,
         mayStoreInCache: Bool = true, interruption: RequestInterruption? = nil) {
        self.id = id
        self.plan = plan
        self.observer = observer
        self.events = events
        self.metrics = metrics
        self.deadline = deadline
        self.streamsResponse = streamsResponse
        self.mayStoreInCache = mayStoreInCache
        self.interruption = interruption
    }
}

/// The pipeline's reports to the request's owner.
protocol RequestEvents: Sendable {
    /// A retry will happen after `delay`.
    func willRetry(attempt: Int, after delay: Duration, reason: HTTPConnectionError)
    /// A redirect is about to be followed; the answer can change or stop it.
    func willRedirect(_ hop: RedirectHop) async -> RedirectAction
}

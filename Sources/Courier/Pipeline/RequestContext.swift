/// What the pipeline's stages know about the request they are carrying.
struct RequestContext: Sendable {
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
    var streamsResponse = false
    /// Whether the cache may store the response (not for a download, whose body goes to a file).
    var mayStoreInCache = true
}

/// The pipeline's reports to the request's owner.
protocol RequestEvents: Sendable {
    /// A retry will happen after `delay`.
    func willRetry(attempt: Int, after delay: Duration, reason: HTTPConnectionError)
    /// A redirect is about to be followed; the answer can change or stop it.
    func willRedirect(_ hop: RedirectHop) async -> RedirectAction
}

/// What the pipeline's stages know about the request they are carrying.
struct RequestContext: Sendable {
    /// The request's id.
    let id: RequestID
    /// The resolved request and its effective settings.
    let plan: RequestPlan
    /// Receives the transport's progress for the delegate.
    let observer: any TransportObserver
}

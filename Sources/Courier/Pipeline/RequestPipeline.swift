import Foundation

/// The stages between ``HTTPConnection`` and the ``Transport``.
///
/// Each stage is a small type with one job, in this order: ``AuthenticationStage``, the cookie
/// jar's (``CookieStage``, when a jar is configured), ``CacheStage``, ``CoalescingStage`` (when
/// requests are coalesced), ``RetryStage``, ``RedirectStage``, ``ExpectationStage``, the per-hop cookie stage and the HAR
/// recorder's (``HARStage``, when one is configured); ``HTTPConnection/init(baseURL:configuration:)``
/// builds the chain. A stage receives the request and a `next` to call for the rest of the
/// pipeline, and may call it several times (retry, redirects) or not at all (a cache hit); one
/// with nothing to do for a request is passed over. Below the last stage the pipeline counts the
/// attempt and calls the transport. No stage knows which transport is below it. The
/// whole-request deadline is not a stage: ``RequestTask`` runs it around the pipeline.
///
/// A class, so that a ``PipelineNext`` holds one reference to it rather than its fields: every
/// stage frame that waits for the rest of the pipeline holds one.
final class RequestPipeline: Sendable {
    let transport: any Transport
    let stages: [any PipelineStage]
    /// The transport, if a ``RequestInterruption`` can stop its waits.
    private let interruptible: (any InterruptibleTransport)?
    /// Whether a request can run in its `async` caller's task: every wait below answers its
    /// ``RequestInterruption`` (not with request coalescing, whose waits answer task cancellation only).
    let canRunInCallersTask: Bool

    init(transport: any Transport, stages: [any PipelineStage] = []) {
        self.transport = transport
        self.stages = stages
        self.interruptible = transport as? any InterruptibleTransport
        self.canRunInCallersTask = interruptible?.honoursInterruption == true && !stages.contains { $0 is CoalescingStage }
    }

    /// Sends the request through every stage, then the transport.
    func send(_ request: TransportRequest, context: RequestContext) async throws(HTTPConnectionError) -> HTTPResponse {
        try await send(request, context: context, from: stages.startIndex)
    }

    /// Sends the request through the stages from `start` on, then the transport.
    fileprivate func send(_ request: TransportRequest, context: RequestContext, from start: Int) async throws(HTTPConnectionError) -> HTTPResponse {
        var index = start
        while index < stages.endIndex, !stages[index].applies(to: context) { index += 1 }
        guard index < stages.endIndex else { return try await sendToTransport(request, context: context) }
        return try await stages[index].send(request, context: context, next: PipelineNext(self, context: context, from: index + 1))
    }

    /// One attempt on the transport, counted in the request's metrics: collected, or streamed
    /// when the caller reads the body as it arrives. Out of line, so that the frames of the
    /// stages above stay small.
    @inline(never)
    private func sendToTransport(_ request: TransportRequest, context: RequestContext) async throws(HTTPConnectionError) -> HTTPResponse {
        context.metrics.recordAttempt()
        // Only `send`'s collected requests run in their callers' tasks (RequestCallbacks); a
        // streamed one never has an interruption.
        assert(context.interruption == nil || !context.streamsResponse, "a streamed request has no interruption")
        if let interruption = context.interruption, let interruptible, !context.streamsResponse {
            return try await interruptible.send(request, observer: context.observer, interruption: interruption)
        }
        guard context.streamsResponse else { return try await transport.send(request, observer: context.observer) }
        let streamed = try await transport.stream(request, observer: context.observer)
        var response = HTTPResponse(head: streamed.head, body: Data())
        response.bodyStream = streamed.body
        return response
    }
}

/// One stage of the request pipeline.
protocol PipelineStage: Sendable {
    /// Whether the stage has anything to do for this request; the pipeline passes over a stage
    /// that has not (a retry stage under a policy that never retries), at no cost. `true` by default.
    func applies(to context: RequestContext) -> Bool

    /// Handles the request, calling `next` for the rest of the pipeline as often as needed.
    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse
}

extension PipelineStage {
    func applies(to context: RequestContext) -> Bool { true }
}

/// The rest of the pipeline, as seen from one stage: a value of three words (the pipeline, the
/// context and an index), so that passing it to a stage allocates nothing.
struct PipelineNext: Sendable {
    private enum Rest: Sendable {
        /// The pipeline's stages from an index on, then its transport.
        case stages(RequestPipeline, RequestContext, from: Int)
        /// A closure that stands in for the rest (a stage tested on its own).
        case closure(@Sendable (TransportRequest) async throws(HTTPConnectionError) -> HTTPResponse)
    }

    private let rest: Rest

    /// The stages of `pipeline` from `index` on, then its transport.
    fileprivate init(_ pipeline: RequestPipeline, context: RequestContext, from index: Int) {
        rest = .stages(pipeline, context, from: index)
    }

    /// A closure that stands in for the rest of the pipeline.
    init(_ send: @escaping @Sendable (TransportRequest) async throws(HTTPConnectionError) -> HTTPResponse) {
        rest = .closure(send)
    }

    /// Sends the request through the rest of the pipeline.
    func callAsFunction(_ request: TransportRequest) async throws(HTTPConnectionError) -> HTTPResponse {
        switch rest {
        case .stages(let pipeline, let context, let index): try await pipeline.send(request, context: context, from: index)
        case .closure(let send): try await send(request)
        }
    }
}

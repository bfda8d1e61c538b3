import Foundation

/// The stages between ``HTTPConnection`` and the ``Transport``.
///
/// Each stage is a small type with one job, in this order: ``AuthenticationStage``, the cookie
/// jar's (``CookieStage``, when a jar is configured), ``CacheStage``, ``RetryStage``,
/// ``RedirectStage``, the per-hop cookie stage, ``MetricsStage`` and the HAR recorder's
/// (``HARStage``, when one is configured); ``HTTPConnection/init(baseURL:configuration:)`` builds
/// the chain. A stage receives the request and a `next` to call for the rest of the pipeline, and
/// may call it several times (retry, redirects) or not at all (a cache hit). No stage knows which
/// transport is below it. The whole-request deadline is not a stage: ``RequestTask`` runs it
/// around the pipeline.
struct RequestPipeline: Sendable {
    let transport: any Transport
    let stages: [any PipelineStage]

    init(transport: any Transport, stages: [any PipelineStage] = []) {
        self.transport = transport
        self.stages = stages
    }

    /// Sends the request through every stage, then the transport.
    func send(_ request: TransportRequest, context: RequestContext) async throws(HTTPConnectionError) -> HTTPResponse {
        try await send(request, context: context, from: stages.startIndex)
    }

    private func send(_ request: TransportRequest, context: RequestContext, from index: Int) async throws(HTTPConnectionError) -> HTTPResponse {
        guard index < stages.endIndex else {
            guard context.streamsResponse else { return try await transport.send(request, observer: context.observer) }
            let streamed = try await transport.stream(request, observer: context.observer)
            var response = HTTPResponse(head: streamed.head, body: Data())
            response.bodyStream = streamed.body
            return response
        }
        let next = PipelineNext { request throws(HTTPConnectionError) in
            try await self.send(request, context: context, from: index + 1)
        }
        return try await stages[index].send(request, context: context, next: next)
    }
}

/// One stage of the request pipeline.
protocol PipelineStage: Sendable {
    /// Handles the request, calling `next` for the rest of the pipeline as often as needed.
    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse
}

/// The rest of the pipeline, as seen from one stage.
struct PipelineNext: Sendable {
    let send: @Sendable (TransportRequest) async throws(HTTPConnectionError) -> HTTPResponse

    func callAsFunction(_ request: TransportRequest) async throws(HTTPConnectionError) -> HTTPResponse {
        try await send(request)
    }
}

/// Repeats once, without the `100-continue` expectation (other expectations stay), a request
/// whose `Expect: 100-continue` was answered with `417 Expectation Failed`.
///
/// RFC 9110 §10.1.1: a 417 to a `100-continue` expectation says only that some server on the
/// way does not support expectations (an HTTP/1.0 hop, say), so a client should send the request
/// again without it, as curl does. The body goes again: data, files and forms of those always
/// can; a stream only when nothing of it was read yet (the usual case: its body was held back
/// for the `100 Continue`), else the request reports the 417.
/// Each hop (a redirect's, a retry's) is judged on its own, below ``RetryStage`` and
/// ``RedirectStage``: the stage applies to every request, since a redirect hook or the
/// delegate may add the field to a hop of a request that had none.
struct ExpectationStage: PipelineStage {
    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        let response = try await next(request)
        guard response.status.code == 417, request.expectsContinue, request.upload?.wasConsumed != true else { return response }
        // The 417's streamed body, if any, ends when the response is dropped.
        return try await next(request.withoutContinueExpectation)
    }
}

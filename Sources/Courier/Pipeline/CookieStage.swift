/// A ``CookieJar`` as a pipeline stage; only in a connection configured with a jar.
///
/// The connection has two: one above the cache, which adds the jar's `Cookie` field for the
/// request's URL so that the cache partitions by it, and one below the redirect stage, on
/// every hop, which replaces that field with the cookies for the hop's URL (a cross-origin hop
/// has lost it: the jar adds only the cookies that domain-match there) and stores the
/// `Set-Cookie` fields of every response, redirects included.
struct CookieStage: PipelineStage {
    let jar: CookieJar
    /// Whether this stage stores the responses' cookies (the per-hop stage) or only adds them.
    let storesCookies: Bool

    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        var request = request
        jar.attach(to: &request)
        let response = try await next(request)
        if storesCookies { jar.store(from: response.headers, for: request.url) }
        return response
    }
}

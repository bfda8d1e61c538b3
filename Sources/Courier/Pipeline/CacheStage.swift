import Foundation

/// The HTTP cache as a pipeline stage: answers from the cache, revalidates, stores, invalidates.
struct CacheStage: PipelineStage {
    let cache: HTTPCache?

    static let unsafeMethods: Set<HTTPRequest.Method> = [.post, .put, .patch, .delete]

    /// Only on a connection with a cache.
    func applies(to context: RequestContext) -> Bool { cache != nil }

    /// What the stage does with a request, decided before anything is awaited.
    private enum Plan {
        /// Not the cache's business: the rest of the pipeline answers.
        case pass
        /// An unsafe method: send it, then drop what is stored for its URL if it succeeded.
        case invalidate(HTTPCache)
        /// Answered from the cache.
        case answer(HTTPResponse)
        /// Ask the server whether the stored response is still good.
        case revalidate(CachedResponse, HTTPCache)
        /// Load from the network and store what the rules allow.
        case load(HTTPCache)
    }

    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        switch try plan(for: request, context: context) {
        case .pass:
            return try await next(request)
        case .answer(let response):
            return response
        case .invalidate(let cache):
            let response = try await next(request)
            if (200..<400).contains(response.status.code) { cache.invalidate(request.url) }
            return response
        case .revalidate(let stored, let cache):
            return try await revalidate(stored, request, cache, context, next)
        case .load(let cache):
            return try await load(request, cache, context, next)
        }
    }

    /// Looks the request up and decides, by its policy and RFC 9111, how it is answered. Not
    /// inlined into ``send(_:context:next:)``, so that its temporaries stay off the frame that a
    /// request holds while it waits on the network.
    @inline(never)
    private func plan(for request: TransportRequest, context: RequestContext) throws(HTTPConnectionError) -> Plan {
        guard let cache else { return .pass }
        if Self.unsafeMethods.contains(request.method) { return .invalidate(cache) }
        guard request.method == .get || request.method == .head else { return .pass }

        let policy = context.plan.cachePolicy
        let requestControl = CacheControl(request.headers)
        let stored = policy == .reloadIgnoringCache || requestControl.noStore ? nil : cache.lookup(request)
        switch policy {
        case .returnCacheDataDontLoad:
            guard let stored else {
                record(.miss, cache, context)
                throw .notCached.with(detail: "nothing is stored for \(Redaction.url(request.url))")
            }
            return .answer(hit(stored, request, cache, context))
        case .returnCacheDataElseLoad:
            if let stored { return .answer(hit(stored, request, cache, context)) }
        case .reloadRevalidatingCache:
            if let stored, stored.hasValidator { return .revalidate(stored, cache) }
        case .useProtocolCachePolicy:
            if let stored, !requestControl.noCache, requestControl.maxAge != 0, !stored.cacheControl.noCache,
               stored.isFresh(now: cache.now(), sharedCache: cache.scope == .shared) {
                return .answer(hit(stored, request, cache, context))
            }
            if let stored, stored.hasValidator { return .revalidate(stored, cache) }
        case .reloadIgnoringCache:
            break
        }
        record(.miss, cache, context)
        return .load(cache)
    }

    private func hit(_ stored: CachedResponse, _ request: TransportRequest, _ cache: HTTPCache, _ context: RequestContext) -> HTTPResponse {
        record(.hit, cache, context)
        return deliver(stored, source: .cache, for: request)
    }

    @inline(never)
    private func load(_ request: TransportRequest, _ cache: HTTPCache, _ context: RequestContext, _ next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        let requestTime = cache.now()
        let response = try await next(request)
        storeIfAllowed(response, request, cache, context, requestTime: requestTime)
        return response
    }

    @inline(never)
    private func revalidate(_ stored: CachedResponse, _ request: TransportRequest, _ cache: HTTPCache,
                            _ context: RequestContext, _ next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        var conditional = request
        if let tag = stored.entityTag { conditional.headers.set(tag, for: "If-None-Match") }
        if let modified = stored.lastModified { conditional.headers.set(modified, for: "If-Modified-Since") }
        let requestTime = cache.now()
        let response = try await next(conditional)
        guard response.status.code == 304 else {
            record(.miss, cache, context)
            storeIfAllowed(response, request, cache, context, requestTime: requestTime)
            return response
        }
        var updated = stored
        updated.update(with: response, requestTime: requestTime, responseTime: cache.now())
        // The 304's fields are now the entry's: if they forbid keeping it, it goes.
        if Self.mayKeep(updated.cacheControl, for: request, sharedCache: cache.scope == .shared) {
            cache.store(updated, for: request)
        } else {
            cache.remove(varyValues: updated.varyValues, for: request)
        }
        record(.revalidated, cache, context)
        return deliver(updated, source: .revalidatedCache, for: request)
    }

    /// Stores the response when RFC 9111 and the credential rules allow it (see ``HTTPCache``).
    /// A response that arrived after following redirects is not stored: it answers another URL.
    /// A streamed one is stored when its body has passed to its reader whole, within
    /// ``HTTPCache/maxStreamedBodySize`` (``StreamedCacheEntry``); never a `206` or the answer to
    /// a request with `Range`, whose body is a part of the resource.
    private func storeIfAllowed(_ response: HTTPResponse, _ request: TransportRequest, _ cache: HTTPCache,
                                _ context: RequestContext, requestTime: Date) {
        guard context.mayStoreInCache, request.method == .get, CachedResponse.heuristicallyCacheable.contains(response.status.code),
              CacheKey(url: response.url).url == CacheKey(url: request.url).url else { return }
        if response.bodyStream != nil, response.status.code == 206 || request.headers.contains("Range") { return }
        let shared = cache.scope == .shared
        guard Self.mayKeep(CacheControl(response.headers), for: request, sharedCache: shared) else { return }
        let responseTime = cache.now()
        let entry = CachedResponse(response, request: request, requestTime: requestTime, responseTime: responseTime)
        guard !CachedResponse.varyNames(response.headers).contains("*"),
              entry.freshnessLifetime(sharedCache: shared) > 0 || entry.hasValidator else { return }
        guard let stream = response.bodyStream else { return cache.store(entry, for: request) }
        let gathering = StreamedCacheEntry(limit: cache.maxStreamedBodySize) { body in
            var complete = response
            complete.bodyStream = nil
            complete.body = body
            cache.store(CachedResponse(complete, request: request, requestTime: requestTime, responseTime: responseTime), for: request)
        }
        stream.buffer.tap(gathering.tap)
    }

    /// Whether a response whose `Cache-Control` is `control` may be kept for `request` (see
    /// ``HTTPCache``): neither it nor the request says `no-store`, a shared cache keeps no
    /// `private` response, and a request with credentials needs the response's explicit
    /// permission. Judged for a new response, and again for a stored one a `304` updated.
    static func mayKeep(_ control: CacheControl, for request: TransportRequest, sharedCache: Bool) -> Bool {
        !control.noStore && !CacheControl(request.headers).noStore && !(sharedCache && control.isPrivate)
            && (!request.carriesCredentials || control.allowsStoringCredentialed(sharedCache: sharedCache))
    }

    private func deliver(_ stored: CachedResponse, source: HTTPResponse.Source, for request: TransportRequest) -> HTTPResponse {
        var response = stored.response(source: source)
        if request.method == .head { response.body = .init() }
        return response
    }

    private func record(_ outcome: CacheOutcome, _ cache: HTTPCache, _ context: RequestContext) {
        context.metrics.recordCache(outcome)
        cache.count { statistics in
            switch outcome {
            case .hit: statistics.hits += 1
            case .miss: statistics.misses += 1
            case .revalidated: statistics.revalidations += 1
            }
        }
    }
}

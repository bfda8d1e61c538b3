import Foundation

/// Follows redirects as the request's ``RedirectPolicy`` says.
struct RedirectStage: PipelineStage {
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        let response = try await next(request)
        guard context.plan.redirectPolicy.limit > 0, Self.redirectStatuses.contains(response.status.code) else { return response }
        return try await follow(from: request, answered: response, context: context, next: next)
    }

    /// Follows the redirect `response` answers `request` with, and any after it. Kept out of
    /// ``send(_:context:next:)`` so that a request that is not redirected, the usual case, holds
    /// only that function's small frame while it waits on the network.
    @inline(never)
    private func follow(from request: TransportRequest, answered first: HTTPResponse, context: RequestContext,
                        next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        let policy = context.plan.redirectPolicy
        var current = request
        var response = first
        var visited: Set<String> = [Self.key(request)]
        var count = 0
        while true {
            guard let (proposed, crossesOrigin) = try Self.nextHop(after: response, of: current, original: request, count: count,
                                                                   policy: policy) else {
                return response
            }
            var hop = proposed
            switch await context.events.willRedirect(RedirectHop(response: response, request: hop, count: count, crossesOrigin: crossesOrigin)) {
            case .follow: break
            case .followWith(let changed): hop = changed
            case .stop: return response
            case .refuse:
                throw .redirectRefused.with(detail: "the delegate refused \(Redaction.url(hop.url))", response: response)
            }
            try Self.check(hop, after: response, visited: &visited)
            count += 1
            context.metrics.recordRedirect()
            current = hop
            response = try await next(hop)
        }
    }

    /// The request for the redirect `response` answers `current` with, after the policy and its
    /// hook, and whether the `Location` leaves `current`'s origin; `nil` when the response is to
    /// be delivered as it is.
    @inline(never)
    static func nextHop(after response: HTTPResponse, of current: TransportRequest, original request: TransportRequest,
                        count: Int, policy: RedirectPolicy) throws(HTTPConnectionError) -> (TransportRequest, crossesOrigin: Bool)? {
        guard redirectStatuses.contains(response.status.code), let location = response.headers["Location"] else { return nil }
        guard count < policy.limit else {
            throw .tooManyRedirects.with(detail: "more than \(policy.limit) redirects from \(Redaction.url(request.url))",
                                         response: response)
        }
        guard let resolved = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: current.url)?.absoluteURL,
              case let target = inheritingFragment(resolved, from: current.url),
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
              target.host?.isEmpty == false, Self.isUsable(target) else {
            throw .redirectRefused.with(detail: "the Location '\(location.prefix(200))' is not a usable http(s) URL",
                                        response: response)
        }
        if current.url.scheme?.lowercased() == "https", scheme == "http", !policy.allowsInsecureDowngrade {
            throw .redirectRefused.with(detail: "a redirect from https to http (\(Redaction.url(target))) is refused by default",
                                        response: response)
        }
        let crossesOrigin = !URLOrigin.same(current.url, target)
        let hop = rewrite(current, status: response.status.code, to: target, crossesOrigin: crossesOrigin)
        switch policy.hook?(RedirectHop(response: response, request: hop, count: count, crossesOrigin: crossesOrigin)) ?? .follow {
        case .follow: return (hop, crossesOrigin)
        case .followWith(let changed): return (changed, crossesOrigin)
        case .stop: return nil
        case .refuse: throw .redirectRefused.with(detail: "the redirect hook refused \(Redaction.url(target))", response: response)
        }
    }

    /// `target`, with the fragment of `url` when it has none of its own: RFC 9110 §10.2.2 has a
    /// redirect inherit the fragment of the URL it answered (`/a#part` redirected to `/b` is
    /// `/b#part`). The fragment is never sent; it shows in the final response's URL.
    static func inheritingFragment(_ target: URL, from url: URL) -> URL {
        guard target.fragment == nil, let inherited = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedFragment,
              var components = URLComponents(url: target, resolvingAgainstBaseURL: true) else { return target }
        components.percentEncodedFragment = inherited
        return components.url ?? target
    }

    /// Whether `target` passes the check a request's own URL passes: http(s), a host and a port
    /// in 1...65535 (``RequestPlan/isHTTPWithHost(_:)``), so that a `Location` no transport
    /// could use is refused here, the same way on every transport, before anything is sent.
    private static func isUsable(_ target: URL) -> Bool {
        var text = target.absoluteString
        return RequestPlan.isHTTPWithHost(&text)
    }

    /// Refuses a hop that would resend a consumed stream, or that was already requested.
    @inline(never)
    static func check(_ hop: TransportRequest, after response: HTTPResponse, visited: inout Set<String>) throws(HTTPConnectionError) {
        if let upload = hop.upload, upload.wasConsumed {
            throw .bodyNotReplayable.with(
                detail: "the \(response.status.code) redirect to \(Redaction.url(hop.url)) needs the request body again, and it was a stream",
                response: response)
        }
        guard visited.insert(key(hop)).inserted else {
            throw .redirectCycle.with(detail: "\(hop.method) \(Redaction.url(hop.url)) was already requested", response: response)
        }
    }

    /// The request for the next hop, rewritten by RFC 9110's rules.
    static func rewrite(_ request: TransportRequest, status: Int, to url: URL, crossesOrigin: Bool) -> TransportRequest {
        var next = request
        next.url = url
        let becomesGet = status == 303 && request.method != .head
            || (status == 301 || status == 302) && request.method == .post
        if becomesGet {
            next.method = .get
            next.body = .init()
            next.upload = nil
            for name in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"] { next.headers.remove(name) }
        }
        if crossesOrigin {
            for field in next.headers where next.isCredential(field.name) { next.headers.remove(field.name) }
        }
        return next
    }

    /// What makes two hops the same request: the method and the URL as the server gets it, so
    /// scheme and host in any case, the port written or implied, and no fragment (it is never
    /// sent): `/a#top` and `HTTP://host/a` repeat `http://host:80/a`.
    private static func key(_ request: TransportRequest) -> String {
        let url = request.url
        guard let origin = URLOrigin(url), let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return "\(request.method.rawValue) \(url.absoluteString)"
        }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let query = components.percentEncodedQuery.map { "?\($0)" } ?? ""
        return "\(request.method.rawValue) \(origin.scheme)://\(origin.host):\(origin.port)\(path)\(query)"
    }
}

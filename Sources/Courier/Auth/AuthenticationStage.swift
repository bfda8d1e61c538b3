import Foundation

/// The re-authentication queue as a pipeline stage.
///
/// For a request covered by an authenticator it applies the current credential, and when the
/// response rejects it, waits on the ``CredentialSession`` (which runs one refresh for everyone)
/// and sends the request again with the new credential. Requests not covered pass straight
/// through. Refresh requests go through `inner`, the stages below this one, so they never
/// wait for themselves.
struct AuthenticationStage: PipelineStage {
    let registry: AuthenticationRegistry
    let inner: RequestPipeline
    /// The connection's base URL, which a refresh's relative targets are resolved against.
    let baseURL: URL?

    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        guard let session = registry.session(for: request.url) ?? AuthenticationRegistry.global.session(for: request.url) else {
            return try await next(request)
        }
        return try await send(request, through: session, context: context, next: next)
    }

    /// Sends a request covered by `session`'s authenticator: applies its credential, and on a
    /// challenge waits for the refresh and sends again. Apart from ``send(_:context:next:)`` so
    /// that requests not covered hold only that function's small frame while they wait.
    @inline(never)
    private func send(_ request: TransportRequest, through session: CredentialSession, context: RequestContext,
                      next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        let inner = self.inner
        let refreshContext = AuthenticationContext(
            sender: { request throws(HTTPConnectionError) in try await inner.send(request, context: .bypassing(request)) },
            baseURL: baseURL, timeout: context.plan.transportRequest.timeout,
            maxResponseBodySize: context.plan.transportRequest.maxResponseBodySize)
        var outcome = await session.credentialForSending(context: refreshContext, interruption: context.interruption)
        var firstChallenge: HTTPResponse?
        while true {
            let version: Int
            var attempt = request
            switch outcome {
            case .credential(let credential, let current):
                version = current
                if let credential = session.authenticator.credentialToSend(stored: credential) {
                    session.authenticator.applyRecording(credential, to: &attempt)
                }
            case .gaveUp:
                if let firstChallenge { return firstChallenge }
                // Held before it was ever sent: it goes out once as it stands and ends with its own
                // answer (a 401, as a rule), without starting another refresh.
                var unrefreshed = request
                if let credential = session.authenticator.credentialToSend(stored: session.currentCredential) {
                    session.authenticator.applyRecording(credential, to: &unrefreshed)
                }
                return try await next(unrefreshed)
            case .throttled:
                throw .authenticationFailed.with(
                    detail: "the server kept rejecting the credential (\(session.recentRefreshCount) refreshes in the window)",
                    response: firstChallenge)
            case .cancelled:
                throw .cancelled
            }
            let sentAt = ContinuousClock.now
            let response = try await next(attempt)
            // A 401 from another origin (reached through a redirect, which dropped the credential)
            // says nothing about this credential: it goes back to the caller, with no refresh.
            guard session.authenticator.isChallenge(response), URLOrigin.same(response.url, attempt.url) else {
                return response
            }
            if firstChallenge == nil { firstChallenge = response }
            if let upload = attempt.upload, upload.wasConsumed {
                throw .bodyNotReplayable.with(
                    detail: "the server rejected the credential and sending the request again needs its body, which was a stream",
                    response: response)
            }
            outcome = await session.rejected(version: version, sentAt: sentAt, context: refreshContext,
                                             interruption: context.interruption)
        }
    }
}

extension Authenticator {
    /// Applies the credential and records, in ``TransportRequest/credentialHeaderNames``, the name
    /// of every field `apply` added or changed, so that redirects, logs and the cache treat them
    /// as credentials whatever their names.
    ///
    /// A name counts as changed when its values, in order, differ from before. Each name is
    /// judged where it first appears, compared without regard to case and without building a
    /// set or lowercased copies: a request carries a handful of fields, and this runs for every
    /// request an authenticator covers.
    func applyRecording(_ credential: Credential, to request: inout TransportRequest) {
        let before = request.headers.fields
        apply(credential, to: &request)
        let after = request.headers.fields
        guard after != before else { return }
        for (index, field) in after.enumerated()
        where !after[..<index].contains(where: { HTTPHeaders.sameName($0.name, field.name) }) {
            if !Self.values(of: field.name, in: after, equalThoseIn: before) {
                request.credentialHeaderNames.insert(field.name.lowercased())
            }
        }
    }

    /// Whether the fields named `name` (in any case) carry the same values, in the same order, in
    /// both lists; compared without building arrays.
    private static func values(of name: String, in fields: [HTTPHeaders.Field],
                               equalThoseIn other: [HTTPHeaders.Field]) -> Bool {
        let named = { (field: HTTPHeaders.Field) in HTTPHeaders.sameName(field.name, name) }
        return fields.lazy.filter(named).map(\.value).elementsEqual(other.lazy.filter(named).map(\.value))
    }
}

extension RequestContext {
    /// The context of a request sent around the pipeline's upper stages (a token request).
    static func bypassing(_ request: TransportRequest) -> RequestContext {
        RequestContext(id: RequestID.next(), plan: RequestPlan(bypassing: request), observer: IgnoringTransportObserver(),
                       events: SilentRequestEvents(), metrics: MetricsCollector(), deadline: nil)
    }
}

/// Events of a request nobody watches: redirects are followed, retries go unreported.
struct SilentRequestEvents: RequestEvents {
    func willRetry(attempt: Int, after delay: Duration, reason: HTTPConnectionError) {}
    func willRedirect(_ hop: RedirectHop) async -> RedirectAction { .follow }
}

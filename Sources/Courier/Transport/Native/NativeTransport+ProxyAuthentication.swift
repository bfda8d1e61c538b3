import Foundation

extension NativeTransport {
    /// Sends `request` through the HTTP proxy `proxy` with the proxy's re-authentication queue
    /// (``ProxyAuthenticator``): the current credentials from the queue (the proxy's own until a
    /// refresh), and on a `407` (to `CONNECT`, or as a forwarded response) one refresh for every
    /// request that meets it, then one more try. A second `407` after that is
    /// ``HTTPConnectionError/proxyAuthenticationFailed``.
    func sendAuthenticatingProxy(_ request: TransportRequest, target: NativeRequestTarget, proxy: Proxy,
                                 registry: ProxyAuthenticationRegistry,
                                 observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPResponse {
        let entry = registry.entry(for: proxy)
        let context = AuthenticationContext(
            sender: { _ throws(HTTPConnectionError) in
                throw .unsupportedByTransport.with(detail: "a proxy authenticator cannot send requests")
            },
            baseURL: nil, timeout: request.timeout, maxResponseBodySize: request.maxResponseBodySize)
        var outcome = await entry.session.credentialForSending(context: context)
        var refusal: Result<HTTPResponse, HTTPConnectionError>?
        while true {
            let version: Int
            let credentials: ProxyCredentials?
            switch outcome {
            case .credential(let credential, let current):
                version = current
                credentials = credential.map(ProxyCredentials.init) ?? proxy.credentials
            case .gaveUp:
                // The authenticator gave up: the request ends as the proxy's 407 left it. Held before
                // it was ever sent, it goes out once as it stands.
                if let refusal { return try refusal.get() }
                return try await exchange(request, target: target, observer: observer, stream: nil)
            case .throttled:
                throw .proxyAuthenticationFailed.with(
                    detail: "\(proxy) kept answering 407 (\(entry.session.recentRefreshCount) refreshes in the window)")
            case .cancelled:
                throw .cancelled
            }
            let attempt = target.withProxyCredentials(credentials)
            let sentAt = ContinuousClock.now
            let refused: Result<HTTPResponse, HTTPConnectionError>
            let challenges: [String]
            do throws(HTTPConnectionError) {
                let response = try await exchange(request, target: attempt, observer: observer, stream: nil)
                guard response.status.code == 407, attempt.key.forwardsThroughProxy else { return response }
                refused = .success(response)
                challenges = response.headers.values(for: "Proxy-Authenticate")
            } catch {
                guard error == .proxyAuthenticationRequired else { throw error }
                refused = .failure(error)
                challenges = error.response?.headers.values(for: "Proxy-Authenticate") ?? []
            }
            if refusal != nil {
                throw .proxyAuthenticationFailed.with(
                    detail: "\(proxy) answered 407 again to \(Redaction.url(request.url)) after its authenticator supplied credentials",
                    response: try? refused.get())
            }
            if let upload = request.upload, upload.wasConsumed {
                throw .bodyNotReplayable.with(
                    detail: "\(proxy) answered 407 and sending the request again needs its body, which was a stream",
                    response: try? refused.get())
            }
            refusal = refused
            entry.challenges.values.withLock { $0 = challenges }
            outcome = await entry.session.rejected(version: version, sentAt: sentAt, context: context)
        }
    }
}

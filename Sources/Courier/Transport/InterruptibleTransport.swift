/// A transport whose waits a ``RequestInterruption`` can stop as well as task cancellation, so
/// that a request can run in its `async` caller's own task (``AwaitedRequestPlacement``).
protocol InterruptibleTransport: Transport {
    /// Whether every wait of ``send(_:observer:interruption:)`` answers the interruption (with
    /// some settings a transport may wait on something that does not).
    var honoursInterruption: Bool { get }

    /// ``Transport/send(_:observer:)``, whose waits also end when `interruption` fires: the
    /// request then fails with ``HTTPConnectionError/cancelled`` and, if it had not gone out,
    /// never reaches the server.
    func send(_ request: TransportRequest, observer: any TransportObserver,
              interruption: RequestInterruption) async throws(HTTPConnectionError) -> HTTPResponse
}

extension NativeTransport: InterruptibleTransport {
    /// Not with a proxy authenticator, whose 407 queue waits on task cancellation only.
    var honoursInterruption: Bool { proxyAuthentication == nil }

    func send(_ request: TransportRequest, observer: any TransportObserver,
              interruption: RequestInterruption) async throws(HTTPConnectionError) -> HTTPResponse {
        try await exchange(request, target: nil, observer: observer, stream: nil, interruption: interruption)
    }
}

import Foundation

extension RequestTask: RequestEvents {
    func willRetry(attempt: Int, after delay: Duration, reason: HTTPConnectionError) {
        connection?.eventMonitor?.report(.retrying(id, attempt: attempt, delay: delay, reason: reason.description))
        emit(.willRetry) { connection, id in
            connection.callDelegate(.willRetry) { $0.connection(connection, request: id, willRetry: attempt, after: delay, reason: reason) }
        }
    }

    func willRedirect(_ hop: RedirectHop) async -> RedirectAction {
        guard let connection else { return .refuse }
        connection.eventMonitor?.report(.redirected(id, status: hop.response.status.code, to: Redaction.url(hop.request.url)))
        // The protocol's default follows: no trip to the callback queue to hear that.
        guard connection.delegate(implementingAnyOf: .willRedirect) != nil else { return .follow }
        let id = self.id
        // `nil`: the request has ended meanwhile, and whatever follows is dropped.
        return await onCallbackQueue {
            connection.callDelegate(.willRedirect) { $0.connection(connection, request: id, willRedirect: hop) } ?? .follow
        } ?? .refuse
    }
}

/// Forwards a transport's progress on one request to the connection's delegate and the metrics.
struct RequestObserver: TransportObserver {
    let task: RequestTask
    let observesBody: Bool
    /// The request's upload progress closure, if any.
    let uploadProgress: (@Sendable (Int64, Int64?) -> Void)?

    func transportDidReceiveHead(_ head: HTTPResponse.Head) {
        guard observesBody else { return }
        task.emit(.didReceiveResponseHead) { connection, id in
            connection.callDelegate(.didReceiveResponseHead) { $0.connection(connection, request: id, didReceiveResponseHead: head) }
        }
    }

    func transportDidReceiveBody(_ data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
        task.emit(.didReceiveData) { connection, id in
            connection.callDelegate(.didReceiveData) {
                $0.connection(connection, request: id, didReceiveData: data, bytesSoFar: bytesSoFar, expectedTotal: expectedTotal)
            }
        }
    }

    func transportDidSendBody(bytesSent: Int64, expectedTotal: Int64?) {
        task.reportUploadProgress(bytesSent, expectedTotal: expectedTotal, to: uploadProgress)
    }

    func transportDidCollect(_ metrics: TransportMetrics) {
        task.metrics.record(metrics)
    }
}

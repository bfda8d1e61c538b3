import Foundation

extension RequestTask: RequestEvents {
    func willRetry(attempt: Int, after delay: Duration, reason: HTTPConnectionError) {
        connection?.eventMonitor?.report(.retrying(id, attempt: attempt, delay: delay, reason: reason.description))
        emit { connection, id in
            connection.delegate?.connection(connection, request: id, willRetry: attempt, after: delay, reason: reason)
        }
    }

    func willRedirect(_ hop: RedirectHop) async -> RedirectAction {
        guard let connection else { return .refuse }
        connection.eventMonitor?.report(.redirected(id, status: hop.response.status.code, to: Redaction.url(hop.request.url)))
        guard let delegate = connection.delegate else { return .follow }
        let id = self.id
        // `nil`: the request has ended meanwhile, and whatever follows is dropped.
        return await onCallbackQueue { delegate.connection(connection, request: id, willRedirect: hop) } ?? .refuse
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
        task.emit { connection, id in
            connection.delegate?.connection(connection, request: id, didReceiveResponseHead: head)
        }
    }

    func transportDidReceiveBody(_ data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
        task.emit { connection, id in
            connection.delegate?.connection(connection, request: id, didReceiveData: data,
                                            bytesSoFar: bytesSoFar, expectedTotal: expectedTotal)
        }
    }

    func transportDidSendBody(bytesSent: Int64, expectedTotal: Int64?) {
        task.reportUploadProgress(bytesSent, expectedTotal: expectedTotal, to: uploadProgress)
    }

    func transportDidCollect(_ metrics: TransportMetrics) {
        task.metrics.record(metrics)
    }
}

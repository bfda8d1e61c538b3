import Foundation

/// The `async`/`await` style. Each call returns the acceptable response or throws an
/// ``HTTPConnectionError``. Cancelling the calling Swift task cancels the request, which then
/// throws ``HTTPConnectionError/cancelled``. The delegate hears of these requests too.
extension HTTPConnection {
    /// Sends a request and waits for its response.
    /// - Parameter request: the request.
    /// - Returns: the response, when the connection's validation accepts it.
    /// - Throws: ``HTTPConnectionError``: `.unacceptableStatus` (response attached) for a
    ///   rejected status, `.cancelled` when cancelled, or the failure that ended the request.
    public func send(_ request: HTTPRequest) async throws(HTTPConnectionError) -> HTTPResponse {
        guard runsInCallersTask() else { return try await awaitRequest(request) { RequestCallbacks(continuation: $0) } }
        return try await sendInCallersTask(request)
    }

    /// Whether an `async` caller's request runs in the caller's task (``AwaitedRequestPlacement``).
    private func runsInCallersTask() -> Bool {
        pipeline.canRunInCallersTask && awaitedRequestPlacement == .callersTask
    }

    /// Runs the request's pipeline in the calling task, and returns or throws its outcome.
    /// Cancelling the calling task cancels the request, as does ``cancel(_:)``; a caller already
    /// cancelled gets `.cancelled` without the request starting.
    private func sendInCallersTask(_ request: HTTPRequest) async throws(HTTPConnectionError) -> HTTPResponse {
        let outcome = AwaitedOutcome()
        let task = register(request, id: RequestID.next(), callbacks: RequestCallbacks(awaitedOutcome: outcome))
        if Task.isCancelled {
            task.fail(beforeStart: .cancelled)
        } else {
            await withTaskCancellationHandler {
                await task.runInCallersTask()
            } onCancel: {
                task.cancel(notify: true)
            }
        }
        return try await outcome.take().get()
    }

    /// Launches `request` with the callbacks `answer` makes around the caller's continuation, and
    /// waits for the answer; cancelling the calling task cancels the request. With `failure`,
    /// the request could not start: it ends at once with that error, heard as any failure.
    func awaitRequest<Value: Sendable>(
        _ request: HTTPRequest,
        failure: HTTPConnectionError? = nil,
        _ answer: (CheckedContinuation<Result<Value, HTTPConnectionError>, Never>) -> RequestCallbacks
    ) async throws(HTTPConnectionError) -> Value {
        let id = RequestID.next()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                launchAwaited(request, id: id, callbacks: answer(continuation), failure: failure)
            }
        } onCancel: {
            cancel(id)
        }
        return try result.get()
    }

    /// Launches a request whose caller awaits it. A caller already cancelled gets a request that
    /// ends as cancelled without starting: the handler of `withTaskCancellationHandler` ran
    /// before the request existed, and a request that started first could reach the server
    /// before a later `cancel` (the loop starts it at once). A cancel that lands between the
    /// check and the launch is caught by the check after it.
    /// Out of line: what it builds stays off the frame the caller holds while it waits.
    @inline(never)
    private func launchAwaited(_ request: HTTPRequest, id: RequestID, callbacks: RequestCallbacks, failure: HTTPConnectionError?) {
        _ = launch(request, id: id, callbacks: callbacks, failure: failure ?? (Task.isCancelled ? .cancelled : nil))
        if Task.isCancelled { cancel(id) }
    }

    /// Sends a request and returns as soon as the response head arrives, with the body to read
    /// as it comes (``HTTPBodyStream``), in constant memory whatever its size.
    ///
    /// ```swift
    /// let response = try await connection.stream(HTTPRequest(.get, "/artifacts/build.tar"))
    /// for try await chunk in response.body {
    ///     try file.write(contentsOf: chunk)
    /// }
    /// ```
    ///
    /// The pipeline works as for ``send(_:)`` (authentication, retries, redirects, validation), on
    /// the head: a response that is retried or redirected is abandoned unread. The cache stores
    /// a streamed body only if it arrives whole within ``HTTPCache/maxStreamedBodySize``, and
    /// `maxResponseBodySize` does not apply to it; a fresh cached response is handed out as a
    /// body that has already arrived. On ``URLSessionTransport`` nothing pushes back on the
    /// server: a slow reader lets the chunks pile up in memory. The request ends, and
    /// the delegate hears of it, when the body has arrived, breaks off, or is abandoned (then as
    /// cancelled). Cancelling the calling task while it reads cancels the request.
    /// - Parameter request: the request.
    /// - Returns: the acceptable response's head and its body.
    /// - Throws: as ``send(_:)``, up to the head (an `.unacceptableStatus` error carries the head
    ///   and no body); ``HTTPConnectionError/unsupportedByTransport`` from a transport that cannot
    ///   stream (one without its own ``Transport/stream(_:observer:)``).
    public func stream(_ request: HTTPRequest) async throws(HTTPConnectionError) -> HTTPStreamingResponse {
        try await awaitRequest(request) { RequestCallbacks(streamContinuation: $0) }
    }

    /// Sends a GET and waits for the response.
    /// - Parameters:
    ///   - path: a path relative to the base URL, or an absolute URL.
    ///   - query: query items; none by default.
    ///   - headers: header fields; none by default.
    /// - Returns: the acceptable response.
    /// - Throws: as ``send(_:)``.
    public func get(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:]) async throws(HTTPConnectionError) -> HTTPResponse {
        try await send(HTTPRequest(.get, path, query: query, headers: headers))
    }

    /// Sends a HEAD and waits for the response. Parameters as for ``get(_:query:headers:)``.
    public func head(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:]) async throws(HTTPConnectionError) -> HTTPResponse {
        try await send(HTTPRequest(.head, path, query: query, headers: headers))
    }

    /// Sends a DELETE and waits for the response. Parameters as for ``get(_:query:headers:)``.
    public func delete(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:]) async throws(HTTPConnectionError) -> HTTPResponse {
        try await send(HTTPRequest(.delete, path, query: query, headers: headers))
    }

    /// Sends a POST and waits for the response.
    /// - Parameter body: the body; none by default. Other parameters as for ``get(_:query:headers:)``.
    public func post(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:],
                     body: HTTPRequest.Body = .none) async throws(HTTPConnectionError) -> HTTPResponse {
        try await send(HTTPRequest(.post, path, query: query, headers: headers, body: body))
    }

    /// Sends a PUT and waits for the response. Parameters as for ``post(_:query:headers:body:)``.
    public func put(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:],
                    body: HTTPRequest.Body = .none) async throws(HTTPConnectionError) -> HTTPResponse {
        try await send(HTTPRequest(.put, path, query: query, headers: headers, body: body))
    }

    /// Sends a PATCH and waits for the response. Parameters as for ``post(_:query:headers:body:)``.
    public func patch(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:],
                      body: HTTPRequest.Body = .none) async throws(HTTPConnectionError) -> HTTPResponse {
        try await send(HTTPRequest(.patch, path, query: query, headers: headers, body: body))
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The state of one URLSession data task: its response so far and the waiting continuation.
final class URLSessionExchange: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<HTTPResponse, HTTPConnectionError>, Never>?
        var head: HTTPResponse.Head?
        var body = Data()
        var failure: HTTPConnectionError?
        var firstByte: Duration?
        var challenged = false
        var lastProgress = ContinuousClock.now
        var watchdog: DeadlineTimer?
        /// The outcome, when the exchange ended before its caller began waiting.
        var early: Result<HTTPResponse, HTTPConnectionError>?
        var ended = false
        /// The task, once it was created, and its identifier in the router.
        var task: (task: URLSessionTask, identifier: Int)?
        /// The exchange was abandoned: its task is cancelled, or will be once the redirect
        /// callback under way has answered.
        var cancelling = false
        /// URLSession's redirect callback is being answered; a cancel waits for the answer.
        var answeringRedirect = false
    }

    private let url: URL
    private let observer: any TransportObserver
    private let maxBodySize: Int
    private let state = Mutex(State())
    private let started = ContinuousClock.now
    private let bytesSent: Int64
    private let unregister: @Sendable (Int) -> Void

    /// Creates the exchange of one request.
    /// - Parameter unregister: forgets a task identifier in the router, for an exchange that ends
    ///   without URLSession reporting it.
    init(url: URL, observer: any TransportObserver, maxBodySize: Int, bytesSent: Int64,
         unregister: @escaping @Sendable (Int) -> Void) {
        self.url = url
        self.bytesSent = bytesSent
        self.unregister = unregister
        self.observer = observer
        self.maxBodySize = maxBodySize
    }

    /// Registers the caller's continuation; resumes it at once when the exchange already ended.
    func begin(_ continuation: CheckedContinuation<Result<HTTPResponse, HTTPConnectionError>, Never>) {
        let early = state.withLock { state -> Result<HTTPResponse, HTTPConnectionError>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    /// Records the task that carries the exchange; returns `false` when the exchange already
    /// ended (it was cancelled before the task existed), and the task must not start.
    func attach(_ task: URLSessionTask) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            state.task = (task, task.taskIdentifier)
            return true
        }
    }

    /// Cancels the task and ends the exchange now, without waiting for URLSession to report the
    /// end: corelibs never reports a task cancelled before it started, which would leave the
    /// caller waiting forever and the exchange registered.
    ///
    /// While the redirect callback is being answered, the task is cancelled right after the
    /// answer instead (see ``answerRedirect(_:)``).
    func abandon(error: URLError) {
        let (task, cancelNow) = state.withLock { state in
            state.cancelling = true
            return (state.task, !state.answeringRedirect)
        }
        if cancelNow { task?.task.cancel() }
        if let task { unregister(task.identifier) }
        complete(error: error, response: nil)
    }

    /// Answers URLSession's redirect callback with `nil` (the pipeline follows redirects itself),
    /// and orders it with a cancel.
    ///
    /// Corelibs stops the process when a task is cancelled between the redirect callback and
    /// the moment its answer reaches the task's work queue ("Received callback for HTTP
    /// redirection, but we're not waiting for it"). So a cancel that arrives during the answer
    /// waits for it (the answer is then queued first), and a task that was already cancelled
    /// gets no answer at all: its cancel ends it.
    func answerRedirect(_ completionHandler: (URLRequest?) -> Void) {
        let answer = state.withLock { state in
            if !state.cancelling { state.answeringRedirect = true }
            return !state.cancelling
        }
        guard answer else {
            Self.redirectRaces.add(1, ordering: .relaxed)
            return
        }
        completionHandler(nil)
        let deferredCancel = state.withLock { state in
            state.answeringRedirect = false
            return state.cancelling ? state.task?.task : nil
        }
        if let deferredCancel {
            Self.redirectRaces.add(1, ordering: .relaxed)
            deferredCancel.cancel()
        }
    }

    /// How many times, in this process, a cancel met a redirect callback: it arrived while the
    /// answer was being given (and waited for it), or before it (and the callback went
    /// unanswered). Tests read it to know that they hit the window they aim at.
    static let redirectRaces = Atomic<Int>(0)

    /// Records the head; returns `false` when the body would be too large.
    func didReceive(_ response: URLResponse) -> Bool {
        guard let http = response as? HTTPURLResponse else {
            state.withLock { $0.failure = .badResponse.with(detail: "not an HTTP response") }
            return false
        }
        var headers = HTTPHeaders()
        for (name, value) in http.allHeaderFields {
            headers.add("\(value)", for: "\(name)")
        }
        let head = HTTPResponse.Head(status: .init(code: http.statusCode), headers: headers, url: http.url ?? url)
        if let problem = Self.contentLengthProblem(in: headers) {
            // libcurl reads such a body anyway (the first value, or the digits before the rubbish).
            state.withLock { $0.failure = .badResponse.with(detail: problem) }
            return false
        }
        if let expected = head.expectedContentLength, expected > maxBodySize {
            state.withLock { $0.failure = Self.tooLarge(maxBodySize) }
            return false
        }
        let now = ContinuousClock.now
        state.withLock { $0.head = head; $0.firstByte = now - started; $0.lastProgress = now }
        observer.transportDidReceiveHead(head)
        return true
    }

    /// Cancels the task with `.timedOut` once no byte has arrived for `idleTimeout`. The watchdog
    /// runs on Dispatch, not on Swift's cooperative threads, so a busy pool cannot delay it.
    func watch(idleTimeout: Duration) {
        armWatchdog(after: idleTimeout, idleTimeout: idleTimeout)
    }

    private func armWatchdog(after wait: Duration, idleTimeout: Duration) {
        let timer = DeadlineTimer(after: wait) { [weak self] in self?.watchdogFired(idleTimeout: idleTimeout) }
        let ended = state.withLock { state in
            if !state.ended { state.watchdog = timer }
            return state.ended
        }
        if ended { timer.cancel() }
    }

    private func watchdogFired(idleTimeout: Duration) {
        let idle = ContinuousClock.now - state.withLock { $0.lastProgress }
        guard idle >= idleTimeout else {
            armWatchdog(after: idleTimeout - idle, idleTimeout: idleTimeout)
            return
        }
        state.withLock { state in
            if state.failure == nil {
                state.failure = .timedOut.with(detail: "nothing arrived for \(idleTimeout)")
            }
        }
        abandon(error: URLError(.timedOut))
    }

    /// Records the response of an authentication challenge as the final response, without a body.
    func didReceiveChallenge(_ response: URLResponse) {
        guard didReceive(response) else { return }
        state.withLock { $0.challenged = true }
    }

    /// Appends body bytes; returns `false` when the maximum size is passed.
    func didReceive(_ data: Data) -> Bool {
        let progress: (Int64, Int64?)? = state.withLock { state in
            guard state.failure == nil else { return nil }
            if state.body.count + data.count > maxBodySize {
                state.failure = Self.tooLarge(maxBodySize)
                return nil
            }
            state.body.append(data)
            state.lastProgress = .now
            return (Int64(state.body.count), state.head?.expectedContentLength)
        }
        guard let (soFar, expected) = progress else { return false }
        if observer.observesBody { observer.transportDidReceiveBody(data, bytesSoFar: soFar, expectedTotal: expected) }
        return true
    }

    /// Ends the exchange. `response` is the task's own record of the head, for the responses whose
    /// head URLSession never reported to the delegate (a redirect status without `Location`).
    func complete(error: (any Error)?, response: URLResponse?) {
        if error == nil, state.withLock({ $0.head == nil && $0.failure == nil }), let response {
            _ = didReceive(response)
        }
        let ending = state.withLock { state -> (CheckedContinuation<Result<HTTPResponse, HTTPConnectionError>, Never>?, Result<HTTPResponse, HTTPConnectionError>, TransportMetrics)? in
            guard !state.ended else { return nil }  // abandoned already, or reported twice
            state.ended = true
            let continuation = state.continuation
            state.continuation = nil
            state.watchdog?.cancel()
            state.watchdog = nil
            var metrics = TransportMetrics()
            metrics.firstByte = state.firstByte
            metrics.bytesSent = bytesSent
            metrics.bytesReceived = Int64(state.body.count)
            let result: Result<HTTPResponse, HTTPConnectionError>
            if let failure = state.failure {
                result = .failure(failure)
            } else if state.challenged, let head = state.head {
                result = .success(HTTPResponse(status: head.status, headers: head.headers, body: state.body, url: head.url))
            } else if let error {
                result = .failure(URLSessionErrorMapping.map(error, headReceived: state.head != nil))
            } else if let head = state.head {
                result = .success(HTTPResponse(status: head.status, headers: head.headers, body: state.body, url: head.url))
            } else {
                result = .failure(.badResponse.with(detail: "no response head"))
            }
            if continuation == nil { state.early = result }
            return (continuation, result, metrics)
        }
        guard let (continuation, result, metrics) = ending else { return }
        observer.transportDidCollect(metrics)
        continuation?.resume(returning: result)
    }

    /// Why the response's `Content-Length` cannot be trusted (RFC 9112 §6.3: differing values or
    /// rubbish are an unrecoverable framing error), or `nil` when it can. With `Transfer-Encoding`
    /// the length is ignored, as libcurl does.
    static func contentLengthProblem(in headers: HTTPHeaders) -> String? {
        guard !headers.contains("Transfer-Encoding") else { return nil }
        let values = headers.values(for: "Content-Length")
            .flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = values.first else { return nil }
        if values.contains(where: { $0.isEmpty || !$0.utf8.allSatisfy { (0x30...0x39).contains($0) } }) {
            return "Content-Length is not a number: \(values.joined(separator: ", "))"
        }
        if values.contains(where: { $0 != first }) {
            return "conflicting Content-Length values: \(values.joined(separator: ", "))"
        }
        return nil
    }

    private static func tooLarge(_ limit: Int) -> HTTPConnectionError {
        .bodyTooLarge.with(detail: "the limit is \(limit) bytes")
    }
}

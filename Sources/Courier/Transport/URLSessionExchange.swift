import CourierHTTP1
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The state of one URLSession data task: its response so far and the waiting continuation.
///
/// Once it ended, an exchange holds neither its task nor its observer, so that nothing corelibs
/// may still keep (a task, a queued callback) keeps the request, its pipeline or the transport alive.
final class URLSessionExchange: Sendable {
    private struct State {
        /// Receives the progress; dropped when the exchange ends.
        var observer: (any TransportObserver)?
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
        /// The task, once it was created, until the exchange ends.
        var task: URLSessionTask?
        /// The exchange was abandoned: its task's cancel is queued in the router.
        var abandoned = false
        /// Body bytes received (collected or streamed).
        var received: Int64 = 0
        /// A streamed response's head went to the caller; the body goes to ``URLSessionExchange/stream``.
        var headHandedOut = false
    }

    private let url: URL
    /// The request's method: a response to `HEAD` has no body for libcurl to decode.
    private let method: String
    private let maxBodySize: Int
    private let state: Mutex<State>
    private let started = ContinuousClock.now
    private let bytesSent: Int64
    private let cancel: @Sendable (URLSessionTask) -> Void
    /// Where a streamed response's body goes; `nil` when the body is collected.
    let stream: BodyStreamBuffer?

    /// Creates the exchange of one request.
    /// - Parameter cancel: cancels a task in the order of its delegate callbacks
    ///   (``URLSessionTaskRouter/cancel(_:)``), for an exchange that ends before its task.
    /// - Parameters:
    ///   - method: the request's method, e.g. `GET`.
    ///   - stream: the buffer a streamed body goes to (the caller gets the head as soon as it
    ///     arrives); `nil` to collect the body.
    init(url: URL, method: String, observer: any TransportObserver, maxBodySize: Int, bytesSent: Int64,
         cancel: @escaping @Sendable (URLSessionTask) -> Void, stream: BodyStreamBuffer? = nil) {
        self.url = url
        self.method = method
        self.stream = stream
        self.bytesSent = bytesSent
        self.cancel = cancel
        self.state = Mutex(State(observer: observer))
        self.maxBodySize = maxBodySize
    }

    /// Whether the exchange ended (its caller has its outcome).
    var hasEnded: Bool { state.withLock { $0.ended } }

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
            state.task = task
            return true
        }
    }

    /// Ends the exchange now and has its task cancelled, without waiting for URLSession to report
    /// the end: the cancel is queued behind the task's delegate callbacks (see
    /// ``URLSessionTaskRouter``), and corelibs may never report a task cancelled before it started.
    func abandon(error: URLError) {
        let task = state.withLock { state in
            state.abandoned = true
            return state.task
        }
        if let task { cancel(task) }
        complete(error: error, response: nil)
    }

    /// Notes that URLSession's redirect callback is about to be answered (the task's cancel, if
    /// any, is still queued behind it), for ``redirectRaces``.
    func willAnswerRedirect() {
        if state.withLock({ $0.abandoned }) { Self.redirectRaces.add(1, ordering: .relaxed) }
    }

    /// How many times, in this process, a cancel met a redirect callback: the request was abandoned
    /// while the callback was queued (it was answered, then the task cancelled), or the task's
    /// cancel ran first (the callback went unanswered). Tests read it to know that they hit the
    /// window they aim at.
    static let redirectRaces = Atomic<Int>(0)

    /// Records the head; returns `false` when the body would be too large.
    func didReceive(_ response: URLResponse) -> Bool {
        guard let http = response as? HTTPURLResponse else {
            state.withLock { $0.failure = .badResponse.with(detail: "not an HTTP response") }
            return false
        }
        var headers = HTTPHeaders()
        for (name, value) in http.allHeaderFields {
            let name = "\(name)"
            guard name.caseInsensitiveCompare("Set-Cookie") == .orderedSame else {
                headers.add("\(value)", for: name)
                continue
            }
            // URLSession joins a response's Set-Cookie fields with commas: they are split back
            // here, where that happened, so that the jar reads one cookie per field.
            for cookie in SetCookie.split("\(value)") { headers.add(cookie, for: name) }
        }
        var head = HTTPResponse.Head(status: .init(code: http.statusCode), headers: headers, url: http.url ?? url)
        if let problem = Self.contentLengthProblem(in: headers) {
            // libcurl reads such a body anyway (the first value, or the digits before the rubbish).
            state.withLock { $0.failure = .badResponse.with(detail: problem) }
            return false
        }
        if stream == nil, let expected = head.expectedContentLength, expected > maxBodySize {
            state.withLock { $0.failure = Self.tooLarge(maxBodySize) }
            return false
        }
        if Self.libcurlDecodes(head, method: method) { head.describeDecodedBody() }
        let now = ContinuousClock.now
        let observer = state.withLock { state in
            state.head = head
            state.firstByte = now - started
            state.lastProgress = now
            return state.observer
        }
        observer?.transportDidReceiveHead(head)
        if stream != nil { handOut(head) }
        return true
    }

    /// Gives a streamed response's head to the caller; a reader that leaves cancels the task.
    private func handOut(_ head: HTTPResponse.Head) {
        guard let stream else { return }
        var response = HTTPResponse(head: head, body: Data())
        response.bodyStream = HTTPBodyStream(buffer: stream)
        let continuation = state.withLock { state -> CheckedContinuation<Result<HTTPResponse, HTTPConnectionError>, Never>? in
            guard !state.ended, !state.headHandedOut else { return nil }
            state.headHandedOut = true
            defer { state.continuation = nil }
            if state.continuation == nil { state.early = .success(response) }
            return state.continuation
        }
        stream.connect(.init(
            onDemand: {},  // nothing to resume: the task is never paused (see didStream)
            onCancel: { [weak self] in self?.abandon(error: URLError(.cancelled)) }))
        continuation?.resume(returning: .success(response))
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
        if let stream { return didStream(data, into: stream) }
        let progress: (Int64, Int64?, (any TransportObserver)?)? = state.withLock { state in
            guard state.failure == nil else { return nil }
            if state.body.count + data.count > maxBodySize {
                state.failure = Self.tooLarge(maxBodySize)
                return nil
            }
            state.body.append(data)
            state.received += Int64(data.count)
            state.lastProgress = .now
            return (Int64(state.body.count), state.head?.expectedContentLength, state.observer)
        }
        guard let (soFar, expected, observer) = progress else { return false }
        if let observer, observer.observesBody {
            observer.transportDidReceiveBody(data, bytesSoFar: soFar, expectedTotal: expected)
        }
        return true
    }

    /// Whether libcurl decodes the body of a response with this head. FoundationNetworking has
    /// libcurl decode every `Content-Encoding` it knows (gzip and deflate at least), yet reports
    /// the server's `Content-Encoding` and `Content-Length`: for such a body the head then
    /// describes the decoded body (``HTTPResponse/Head/describeDecodedBody()``), as on the native
    /// transport. A response without a body (to a `HEAD`, a 204, a 304) keeps its fields.
    static func libcurlDecodes(_ head: HTTPResponse.Head, method: String) -> Bool {
        guard let coding = head.headers["Content-Encoding"], ContentDecoder.encoding(for: coding) != nil else { return false }
        return BodyFraming.responseCanHaveBody(status: head.status.code, requestMethod: method)
    }

    /// Passes streamed body bytes to the reader. There is no backpressure: FoundationNetworking
    /// fails a data task that is suspended in the middle of its body (`suspend()` drops the
    /// transfer, and the task ends as cancelled), so the chunks wait in the buffer, however many,
    /// for a reader slower than the network. Returns `true`: a reader that leaves cancels the
    /// task through the buffer's `onCancel` hook.
    private func didStream(_ data: Data, into stream: BodyStreamBuffer) -> Bool {
        let progress = state.withLock { state -> (Int64, Int64?, (any TransportObserver)?) in
            state.received += Int64(data.count)
            state.lastProgress = .now
            return (state.received, state.head?.expectedContentLength, state.observer)
        }
        if let observer = progress.2, observer.observesBody {
            observer.transportDidReceiveBody(data, bytesSoFar: progress.0, expectedTotal: progress.1)
        }
        _ = stream.yield(data)
        return true
    }

    /// Ends the exchange. `response` is the task's own record of the head, for the responses whose
    /// head URLSession never reported to the delegate (a redirect status without `Location`).
    func complete(error: (any Error)?, response: URLResponse?) {
        if error == nil, state.withLock({ $0.head == nil && $0.failure == nil }), let response {
            _ = didReceive(response)
        }
        let ending = state.withLock { state -> (CheckedContinuation<Result<HTTPResponse, HTTPConnectionError>, Never>?, Result<HTTPResponse, HTTPConnectionError>, TransportMetrics, (any TransportObserver)?)? in
            guard !state.ended else { return nil }  // abandoned already, or reported twice
            state.ended = true
            let continuation = state.continuation
            let observer = state.observer
            state.continuation = nil
            state.observer = nil
            state.task = nil
            state.watchdog?.cancel()
            state.watchdog = nil
            var metrics = TransportMetrics()
            metrics.firstByte = state.firstByte
            metrics.bytesSent = bytesSent
            metrics.bytesReceived = state.received
            let result: Result<HTTPResponse, HTTPConnectionError>
            if let failure = state.failure {
                result = .failure(failure)
            } else if state.challenged, let head = state.head {
                result = .success(HTTPResponse(collectedHead: head, body: state.body))
            } else if let error {
                result = .failure(URLSessionErrorMapping.map(error, headReceived: state.head != nil))
            } else if let head = state.head {
                result = .success(HTTPResponse(collectedHead: head, body: state.body))
            } else {
                result = .failure(.badResponse.with(detail: "no response head"))
            }
            if continuation == nil, !state.headHandedOut { state.early = result }
            return (continuation, result, metrics, observer)
        }
        guard let (continuation, result, metrics, observer) = ending else { return }
        observer?.transportDidCollect(metrics)
        continuation?.resume(returning: result)
        if let stream, state.withLock({ $0.headHandedOut }) {
            switch result {
            case .success: stream.finish(nil)
            case .failure(let error): stream.finish(error)
            }
        }
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

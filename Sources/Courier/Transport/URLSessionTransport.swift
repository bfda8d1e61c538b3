import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A transport over Foundation's `URLSession`, kept as an alternative and as a baseline.
///
/// URLSession's own redirect following, cookie storage and `URLCache` are switched off, so the
/// request pipeline above behaves the same as on Courier's native transport. On Linux,
/// URLSession is much slower than the native transport; prefer that one unless you need
/// something only URLSession offers.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let router: URLSessionTaskRouter

    /// A shared instance.
    public static let shared = URLSessionTransport()

    /// Creates a transport with its own `URLSession`.
    /// - Parameter configuration: the session configuration to start from; an ephemeral one by
    ///   default. Caching, cookies and credential storage are switched off in any case.
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCredentialStorage = nil
        configuration.httpMaximumConnectionsPerHost = 16
        router = URLSessionTaskRouter()
        let queue = OperationQueue()
        queue.name = "Courier.URLSessionTransport"
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends the request with a URLSession data task.
    public func send(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPResponse {
        // Corelibs truncates the interval to whole seconds (0 meaning its 60 s default), so the
        // exchange's own watchdog enforces the exact idle timeout; this is only a backstop.
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
                                    timeoutInterval: max(1, request.timeout.timeInterval.rounded(.up)) + 1)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.httpShouldHandleCookies = false
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if !request.body.isEmpty { urlRequest.httpBody = request.body }

        let task = session.dataTask(with: urlRequest)
        let exchange = URLSessionExchange(url: request.url, observer: observer,
                                          maxBodySize: request.maxResponseBodySize,
                                          bytesSent: Int64(request.body.count))
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                exchange.begin(continuation)
                router.register(exchange, for: task)
                exchange.watch(task, idleTimeout: request.timeout)
                if Task.isCancelled { task.cancel() }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        return try result.get()
    }
}

/// Routes URLSession's delegate callbacks to the exchange of each task.
final class URLSessionTaskRouter: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = Mutex<[Int: URLSessionExchange]>([:])

    func register(_ exchange: URLSessionExchange, for task: URLSessionTask) {
        exchanges.withLock { $0[task.taskIdentifier] = exchange }
    }

    private func exchange(for task: URLSessionTask) -> URLSessionExchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)  // the pipeline owns redirects
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        // The pipeline's re-authentication queue owns credentials. Corelibs URLSession cannot hand
        // a challenged 401 back as a response (default handling never completes without stored
        // credentials), so the exchange keeps the challenge's response head and ends the task.
        if let exchange = exchange(for: task), let response = challenge.failureResponse {
            exchange.didReceiveChallenge(response)
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let keepGoing = exchange(for: dataTask)?.didReceive(response) ?? false
        completionHandler(keepGoing ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(for: dataTask) else { return }
        if !exchange.didReceive(data) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        exchange?.complete(error: error, response: task.response)
    }
}

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
        var watchdog: Task<Void, Never>?
    }

    private let url: URL
    private let observer: any TransportObserver
    private let maxBodySize: Int
    private let state = Mutex(State())
    private let started = ContinuousClock.now
    private let bytesSent: Int64

    init(url: URL, observer: any TransportObserver, maxBodySize: Int, bytesSent: Int64) {
        self.url = url
        self.bytesSent = bytesSent
        self.observer = observer
        self.maxBodySize = maxBodySize
    }

    func begin(_ continuation: CheckedContinuation<Result<HTTPResponse, HTTPConnectionError>, Never>) {
        state.withLock { $0.continuation = continuation }
    }

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

    /// Cancels the task with `.timedOut` once no byte has arrived for `idleTimeout`.
    func watch(_ task: URLSessionTask, idleTimeout: Duration) {
        let watchdog = Task { [weak self] in
            var wait = idleTimeout
            while (try? await Task.sleep(for: wait)) != nil {
                guard let self else { return }
                let idle = ContinuousClock.now - self.state.withLock { $0.lastProgress }
                guard idle >= idleTimeout else {
                    wait = idleTimeout - idle
                    continue
                }
                self.state.withLock { state in
                    if state.failure == nil {
                        state.failure = .timedOut.with(detail: "nothing arrived for \(idleTimeout)")
                    }
                }
                task.cancel()
                return
            }
        }
        state.withLock { $0.watchdog = watchdog }
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
        let (continuation, result, metrics) = state.withLock { state in
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
            return (continuation, result, metrics)
        }
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

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
    /// Creates and starts the tasks, off the Swift concurrency threads.
    private let starter = DispatchQueue(label: "Courier.URLSessionTransport.start")

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

    /// Sends the request with a URLSession data task. A request with a method, field name or value
    /// HTTP forbids fails with ``HTTPConnectionError/invalidRequest`` (``TransportRequest/validate()``).
    public func send(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPResponse {
        try request.validate()  // corelibs would silently drop a field whose value holds CR or LF
        // Corelibs truncates the interval to whole seconds (0 meaning its 60 s default), so the
        // exchange's own watchdog enforces the exact idle timeout; this is only a backstop.
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
                                    timeoutInterval: max(1, request.timeout.timeInterval.rounded(.up)) + 1)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.httpShouldHandleCookies = false
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if !request.body.isEmpty { urlRequest.httpBody = request.body }

        let exchange = URLSessionExchange(url: request.url, observer: observer,
                                          maxBodySize: request.maxResponseBodySize,
                                          bytesSent: Int64(request.body.count),
                                          unregister: { [router] in router.unregister($0) })
        let prepared = urlRequest
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                exchange.begin(continuation)
                // Corelibs' dataTask(with:) and resume() wait for the session's work queue, which
                // is busy under load: never make a Swift concurrency thread wait for it.
                starter.async { [session, router] in
                    let task = session.dataTask(with: prepared)
                    router.register(exchange, for: task)
                    guard exchange.attach(task) else {
                        router.unregister(task.taskIdentifier)
                        task.cancel()
                        return
                    }
                    exchange.watch(idleTimeout: request.timeout)
                    task.resume()
                }
            }
        } onCancel: {
            exchange.abandon(error: URLError(.cancelled))
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

    /// Forgets the exchange of a task that ended without URLSession reporting it.
    func unregister(_ taskIdentifier: Int) {
        _ = exchanges.withLock { $0.removeValue(forKey: taskIdentifier) }
    }

    private func exchange(for task: URLSessionTask) -> URLSessionExchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        // The pipeline owns redirects. An abandoned exchange is no longer registered: its task
        // was cancelled, and an answer now could race with that cancel.
        exchange(for: task)?.answerRedirect(completionHandler)
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

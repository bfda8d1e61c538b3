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
        let queue = OperationQueue()
        queue.name = "Courier.URLSessionTransport"
        queue.maxConcurrentOperationCount = 1
        router = URLSessionTaskRouter(delegateQueue: queue)
        session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
    }

    /// Cancels the session's tasks and invalidates it, after every start still queued (corelibs
    /// stops the process when a task is created on an invalidated session) and in the order of
    /// the delegate queue (see ``URLSessionTaskRouter/invalidate(_:)``).
    deinit {
        let (session, router) = (self.session, self.router)
        starter.async { router.inOrder { router.invalidate(session) } }
    }

    /// Sends the request with a URLSession data task. A request with a method, field name or value
    /// HTTP forbids fails with ``HTTPConnectionError/invalidRequest`` (``TransportRequest/validate()``);
    /// a file body (``HTTPRequest/Body/file(_:contentType:)``) goes out with an upload task from
    /// the file; a stream or a multipart form fails with ``HTTPConnectionError/unsupportedByTransport``.
    public func send(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPResponse {
        try await run(request, observer: observer, stream: nil)
    }

    /// Runs one data (or upload) task: collects its body, or with `stream` returns at the head
    /// with the body flowing into `stream` (``stream(_:observer:)``).
    func run(_ request: TransportRequest, observer: any TransportObserver,
             stream: BodyStreamBuffer?) async throws(HTTPConnectionError) -> HTTPResponse {
        try request.validate()  // corelibs would silently drop a field whose value holds CR or LF
        let uploadFile = request.upload?.singleFile
        if request.upload != nil && uploadFile == nil {
            throw .unsupportedByTransport.with(
                detail: "URLSessionTransport sends in-memory bodies and files only; streams and multipart forms need NativeTransport")
        }
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
                                          bytesSent: Int64(request.body.count) + (uploadFile?.size ?? 0),
                                          cancel: { [router] in router.cancel($0) }, stream: stream)
        let prepared = urlRequest
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                exchange.begin(continuation)
                // Corelibs' dataTask(with:) and resume() wait for the session's work queue, which
                // is busy under load: never make a Swift concurrency thread wait for it.
                starter.async { [session, router] in
                    guard !exchange.hasEnded else { return }  // cancelled while queued: no task at all
                    let task = uploadFile.map { session.uploadTask(with: prepared, fromFile: URL(fileURLWithPath: $0.path)) }
                        ?? session.dataTask(with: prepared)
                    router.register(exchange, for: task)
                    guard exchange.attach(task) else {
                        router.cancel(task)
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

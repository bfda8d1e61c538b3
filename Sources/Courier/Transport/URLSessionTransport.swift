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
///
/// On Linux, FoundationNetworking can stop the whole process when a file upload's transfer ends
/// before the file was read to its end (the server answered early, cut or dropped the
/// connection): a `try!` in its file body source fails with curl error 43. It is
/// FoundationNetworking's, out of Courier's reach; ``NativeTransport`` uploads files without it.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let router: URLSessionTaskRouter
    /// The proxy settings requests are checked against (see ``init(configuration:proxy:)``).
    private let proxy: ProxyConfiguration
    /// Creates and starts the tasks, off the Swift concurrency threads.
    private let starter = DispatchQueue(label: "Courier.URLSessionTransport.start")

    /// A shared instance.
    public static let shared = URLSessionTransport()

    /// Creates a transport with its own `URLSession`.
    ///
    /// FoundationNetworking on Linux (swift-corelibs-foundation) stores
    /// `URLSessionConfiguration.connectionProxyDictionary` but never hands it to libcurl, so no
    /// proxy setting can be mapped onto it: a request that `proxy` sends through a proxy (HTTP,
    /// HTTPS or SOCKS alike) fails with ``HTTPConnectionError/unsupportedByTransport`` instead of
    /// silently going direct. (libcurl, underneath, still reads `http_proxy`, `https_proxy`,
    /// `all_proxy` and `no_proxy` from the process environment by itself, by curl's rules.) Unix
    /// sockets and the proxy authenticator are ``NativeTransport`` settings only.
    /// - Parameters:
    ///   - configuration: the session configuration to start from, whose
    ///     `httpMaximumConnectionsPerHost` and timeouts are kept; by default an ephemeral one that
    ///     allows 16 connections per host. Caching, cookies and credential storage are switched
    ///     off in any case.
    ///   - proxy: the proxy settings the requests must follow. Default: ``ProxyConfiguration/none``.
    public init(configuration: URLSessionConfiguration? = nil, proxy: ProxyConfiguration = .none) {
        self.proxy = proxy
        let configuration = configuration ?? Self.defaultConfiguration()
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCredentialStorage = nil
        let queue = OperationQueue()
        queue.name = "Courier.URLSessionTransport"
        queue.maxConcurrentOperationCount = 1
        router = URLSessionTaskRouter(delegateQueue: queue)
        session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
    }

    /// An ephemeral configuration allowing 16 connections per host (corelibs' default is 6).
    private static func defaultConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 16
        return configuration
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
        if let proxy = try proxy.proxy(for: request.url) {
            throw .unsupportedByTransport.with(
                detail: "URLSessionTransport cannot send through \(proxy): FoundationNetworking on Linux ignores connectionProxyDictionary; use NativeTransport")
        }
        let uploadFile = request.upload?.singleFile
        if request.upload != nil && uploadFile == nil {
            throw .unsupportedByTransport.with(
                detail: "URLSessionTransport sends in-memory bodies and files only; streams and multipart forms need NativeTransport")
        }
        // Corelibs truncates the interval to whole seconds (0 meaning its 60 s default), so the
        // exchange's own watchdog enforces the exact idle timeout; this is only a backstop.
        var urlRequest = URLRequest(url: Self.lowercasingScheme(of: request.url), cachePolicy: .reloadIgnoringLocalCacheData,
                                    timeoutInterval: max(1, request.timeout.timeInterval.rounded(.up)) + 1)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.httpShouldHandleCookies = false
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if !request.body.isEmpty { urlRequest.httpBody = request.body }

        let exchange = URLSessionExchange(url: request.url, method: request.method.rawValue, observer: observer,
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

extension URLSessionTransport {
    /// `url` with its scheme in lowercase. Schemes are case-insensitive (RFC 3986 §3.1), so
    /// Courier takes `HTTP://…` (a target, a redirect's `Location`), but FoundationNetworking
    /// picks its protocol by comparing the scheme with `http` and `https` exactly, and would fail
    /// such a URL as unsupported.
    static func lowercasingScheme(of url: URL) -> URL {
        guard let scheme = url.scheme, scheme != scheme.lowercased(),
              var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        components.scheme = scheme.lowercased()
        return components.url ?? url
    }
}

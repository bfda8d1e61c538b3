import Foundation
import Synchronization

/// One reusable connection to an HTTP service, through which any number of requests go.
///
/// `HTTPConnection` holds what requests share: a base URL, default headers, timeout, cache and
/// retry policies, response validation, a weak ``delegate`` and the ``callbackQueue``. It is safe
/// to use from any thread. Each request can be followed three ways, all giving the same results:
///
/// - a delegate (``HTTPConnectionDelegate``), for every request of the connection;
/// - closures per request: `onDidStart`, `onSuccess`, `onError`;
/// - `async`/`await`: ``send(_:)``, ``get(_:query:headers:)`` and friends.
///
/// Every request ends in **exactly one** terminal callback (finish, fail or cancel), delivered
/// on ``callbackQueue``. Closure users receive a cancellation as `onError(.cancelled)`; `async`
/// callers get ``HTTPConnectionError/cancelled`` thrown.
///
/// ```swift
/// let connection = HTTPConnection(baseURL: URL(string: "https://chat.example.com")!)
/// let rooms = try await connection.get("/rooms").decode([Room].self)
/// ```
public final class HTTPConnection: Sendable {
    /// The URL that relative request targets are resolved against; `nil` requires absolute URLs.
    public let baseURL: URL?
    /// The serial queue on which every delegate call and closure runs. By default a private
    /// serial queue of this connection, labelled `Courier.HTTPConnection.callbacks`.
    public let callbackQueue: DispatchQueue
    /// ``callbackQueue`` as requests use it, counting their trips to it.
    let requestCallbackQueue: CallbackQueue
    /// Hears every request and response, with credentials redacted; `nil` unless configured.
    public let eventMonitor: EventMonitor?
    /// The HTTP cache this connection's requests use, per their ``CachePolicy``; `nil` for none.
    public let cache: HTTPCache?
    /// The jar that keeps this connection's cookies; `nil` (the default) keeps none.
    public let cookieJar: CookieJar?
    /// The decoder of ``HTTPResponse/decode(_:decoder:)`` for this connection's responses
    /// (``Configuration/decoder``).
    public let decoder: JSONDecoder

    let pipeline: RequestPipeline
    /// Where `async` callers' requests run (``AwaitedRequestPlacement``).
    let awaitedRequestPlacement: AwaitedRequestPlacement
    let authentication: AuthenticationRegistry
    private let settings: Mutex<Settings>
    private let delegateReference = Mutex<WeakDelegate>(WeakDelegate())
    private let registry = Mutex<RequestRegistry>(RequestRegistry())

    /// Creates a connection.
    /// - Parameters:
    ///   - baseURL: the URL relative targets are resolved against; `nil` by default.
    ///   - configuration: the connection's settings; ``Configuration/init()`` by default.
    public init(baseURL: URL? = nil, configuration: Configuration = Configuration()) {
        self.baseURL = baseURL
        self.callbackQueue = configuration.callbackQueue ?? DispatchQueue(label: "Courier.HTTPConnection.callbacks")
        self.requestCallbackQueue = CallbackQueue(callbackQueue)
        let transport = configuration.transport ?? HTTPConnection.defaultTransport
        // Cookies (opt-in): the per-hop stage sits below redirects, the other above the cache.
        let jar = configuration.cookieJar
        let perHopCookies: [any PipelineStage] = jar.map { [CookieStage(jar: $0, storesCookies: true)] } ?? []
        let cookies: [any PipelineStage] = jar.map { [CookieStage(jar: $0, storesCookies: false)] } ?? []
        let recording: [any PipelineStage] = configuration.harRecorder.map { [HARStage(recorder: $0)] } ?? []
        // Below the last stage, the pipeline counts each attempt on the transport in the metrics.
        let network: [any PipelineStage] = [RetryStage(clock: configuration.clock), RedirectStage(), ExpectationStage()] + perHopCookies + recording
        let authentication = AuthenticationRegistry()
        self.authentication = authentication
        let coalescing: [any PipelineStage] = configuration.coalescesRequests ? [CoalescingStage()] : []
        var stages: [any PipelineStage] = [
            AuthenticationStage(registry: authentication, inner: RequestPipeline(transport: transport, stages: network),
                                baseURL: baseURL),
        ]
        stages += cookies
        stages.append(CacheStage(cache: configuration.cache))
        stages += coalescing + network
        self.pipeline = RequestPipeline(transport: transport, stages: stages)
        self.awaitedRequestPlacement = configuration.awaitedRequestPlacement
        self.cache = configuration.cache
        self.cookieJar = configuration.cookieJar
        self.eventMonitor = configuration.eventMonitor
        self.decoder = configuration.decoder
        self.settings = Mutex(Settings(configuration))
    }

    deinit {
        // Only unmanaged requests can still be registered: a managed one keeps its connection alive.
        let orphans = registry.withLock { $0.removeAll() }
        for task in orphans { task.cancel(notify: false) }
    }

    // MARK: - Settings

    /// Receives the events of every request; held weakly. `nil` by default. A delegate set while
    /// requests are in flight hears their later events, except the response head (and, with
    /// Courier's transports, the body) of a request started when no delegate heard them (none was
    /// set, or the one set leaves both to the protocol's defaults).
    public var delegate: (any HTTPConnectionDelegate)? {
        get { delegateReference.withLock { $0.value } }
        set { delegateReference.withLock { $0.value = newValue } }
    }

    /// The delegate, unless it is known to leave every one of `methods` to the protocol's
    /// default implementation: then a call of them would change nothing, and needs no trip to the
    /// callback queue (``DelegateMethods``).
    func delegate(implementingAnyOf methods: DelegateMethods) -> (any HTTPConnectionDelegate)? {
        // Decided outside the lock: the last reference to a delegate may go with `delegate`, and
        // its deinit may use this connection.
        let (delegate, profile) = delegateReference.withLock { ($0.value, $0.profile) }
        guard let delegate, !profile.leavesToDefault(methods, delegate) else { return nil }
        return delegate
    }

    /// Calls `method` of the current delegate, if there is one, through `body` (on the callback
    /// queue), and learns whether the delegate leaves that method to the protocol's default.
    @discardableResult
    func callDelegate<Value>(_ method: DelegateMethods, _ body: (any HTTPConnectionDelegate) -> Value) -> Value? {
        guard let delegate else { return nil }
        let (value, ranDefault) = DefaultDelegateImplementation.call(method, on: delegate) { body(delegate) }
        delegateReference.withLock { $0.profile.learn(method, isDefault: ranDefault, of: delegate) }
        return value
    }

    /// The per-attempt timeout of this connection's requests; `nil` (the default) uses
    /// ``defaultTimeout``. A request's own ``HTTPRequest/timeout`` wins over it.
    public var timeout: Duration? {
        get { settings.withLock { $0.timeout } }
        set { settings.withLock { $0.timeout = newValue } }
    }

    /// The cache policy of this connection's requests; `nil` (the default) uses
    /// ``defaultCachePolicy``. A request's own ``HTTPRequest/cachePolicy`` wins over it.
    public var cachePolicy: CachePolicy? {
        get { settings.withLock { $0.cachePolicy } }
        set { settings.withLock { $0.cachePolicy = newValue } }
    }

    /// The retry policy of this connection's requests; `nil` (the default) uses
    /// ``defaultRetryPolicy``. A request's own ``HTTPRequest/retryPolicy`` wins over it.
    public var retryPolicy: RetryPolicy? {
        get { settings.withLock { $0.retryPolicy } }
        set { settings.withLock { $0.retryPolicy = newValue } }
    }

    /// Which responses are successes; ``ResponseValidation/successStatusCodes`` (2xx) by default.
    public var validation: ResponseValidation {
        get { settings.withLock { $0.validation } }
        set { settings.withLock { $0.validation = newValue } }
    }

    /// How this connection's requests follow redirects; a request's own policy wins.
    /// ``RedirectPolicy/follow`` by default.
    public var redirectPolicy: RedirectPolicy {
        get { settings.withLock { $0.redirectPolicy } }
        set { settings.withLock { $0.redirectPolicy = newValue } }
    }

    /// The whole-request deadline of this connection's requests; a request's own wins.
    /// `nil` (no deadline) by default.
    public var deadline: Duration? {
        get { settings.withLock { $0.deadline } }
        set { settings.withLock { $0.deadline = newValue } }
    }

    /// Header fields sent with every request to the base URL's origin (scheme, host and port), or
    /// to every request when there is no base URL; a request's own fields of the same name win.
    /// They are treated as credentials: dropped on a redirect to another origin, redacted in events.
    public var defaultHeaders: HTTPHeaders {
        get { settings.withLock { $0.headers } }
        set { settings.withLock { $0.headers = newValue } }
    }

    // MARK: - Starting and cancelling

    /// Starts a request, reporting through closures and the delegate.
    ///
    /// A failure reaches `onError`; with no `onError` and no delegate, it is reported as an
    /// unhandled failure (``EventMonitor/Event/unhandledFailure(_:error:)``, or
    /// ``unhandledFailureLog``), never dropped.
    ///
    /// - Parameters:
    ///   - request: the request.
    ///   - onDidStart: called with the id when the request starts; `nil` by default.
    ///   - onSuccess: called with the response when it is acceptable (terminal).
    ///   - onError: called with the error when the request fails or is cancelled (terminal); `nil` by default.
    /// - Returns: the request's id, for ``cancel(_:)`` and ``retry(_:)``.
    @discardableResult
    public func start(
        _ request: HTTPRequest,
        onDidStart: (@Sendable (RequestID) -> Void)? = nil,
        onSuccess: (@Sendable (HTTPResponse) -> Void)? = nil,
        onError: (@Sendable (HTTPConnectionError) -> Void)? = nil
    ) -> RequestID {
        startRemembered(request, callbacks: RequestCallbacks(onDidStart: onDidStart, onSuccess: onSuccess, onError: onError))
    }

    /// Starts a request whose outcome arrives in one closure, called exactly once on the
    /// ``callbackQueue``: `.success` with an acceptable response, or `.failure` with the error
    /// (a cancellation included, as ``HTTPConnectionError/cancelled``).
    ///
    /// ```swift
    /// connection.start(HTTPRequest(.get, "/rooms"), completion: { result in
    ///     switch result {
    ///     case .success(let response): print(response.status)
    ///     case .failure(let error): print(error)
    ///     }
    /// })
    /// ```
    /// - Parameters:
    ///   - request: the request.
    ///   - onDidStart: called with the id when the request starts; `nil` by default.
    ///   - completion: called once with the outcome (terminal).
    /// - Returns: the request's id, for ``cancel(_:)`` and ``retry(_:)``.
    @discardableResult
    public func start(
        _ request: HTTPRequest,
        onDidStart: (@Sendable (RequestID) -> Void)? = nil,
        completion: @escaping @Sendable (Result<HTTPResponse, HTTPConnectionError>) -> Void
    ) -> RequestID {
        startRemembered(request, callbacks: RequestCallbacks(onDidStart: onDidStart,
                                                             onSuccess: { completion(.success($0)) },
                                                             onError: { completion(.failure($0)) }))
    }

    /// Launches a closure request and remembers it for ``retry(_:)``.
    private func startRemembered(_ request: HTTPRequest, callbacks: RequestCallbacks) -> RequestID {
        let id = RequestID.next()
        registry.withLock { $0.remember(id, request, callbacks) }
        return launch(request, id: id, callbacks: callbacks)
    }

    /// Cancels one request. It ends with its cancel callback, unless it had already ended.
    /// Cancelling an unknown or finished id does nothing.
    public func cancel(_ id: RequestID) {
        registry.withLock { $0.tasks[id] }?.cancel(notify: true)
    }

    /// Cancels every request of this connection that has not ended.
    public func cancelAll() {
        for task in registry.withLock({ Array($0.tasks.values) }) { task.cancel(notify: true) }
    }

    /// Starts again the request that was started as `id`, with the same request and the same
    /// closures (or completion), under a new id; the delegate hears of it as a new request.
    ///
    /// Requests started with closures (``start(_:onDidStart:onSuccess:onError:)``,
    /// ``start(_:onDidStart:completion:)``, the closure forms of `get`, `post`, …, and `retry`
    /// itself) can be retried, whether they are still running or have ended, as long as they are
    /// among the connection's ``retainedRequestCount`` most recent ones; `async` requests cannot
    /// (call again instead). The connection keeps their closures until then, and so whatever the
    /// closures capture.
    /// - Parameter id: the id a start or an earlier retry returned.
    /// - Returns: the new request's id, or `nil` when `id` is unknown or was forgotten.
    @discardableResult
    public func retry(_ id: RequestID) -> RequestID? {
        guard let (request, callbacks) = registry.withLock({ $0.remembered(id) }) else { return nil }
        return startRemembered(request, callbacks: callbacks)
    }

    /// Starts again the most recently started closure request (NitroConnection's
    /// `retryRequest`): the one whose id the last start, closure method or retry of this
    /// connection returned, whatever became of the others. When requests run concurrently, name
    /// the one you mean with ``retry(_:)``.
    /// - Returns: the new request's id, or `nil` when no closure request was started yet.
    @discardableResult
    public func retry() -> RequestID? {
        guard let id = registry.withLock({ $0.starts.last?.id }) else { return nil }
        return retry(id)
    }

    /// How many of the most recent closure requests ``retry(_:)`` can start again: 16.
    public static let retainedRequestCount = 16

    /// The ids of the requests that have not ended yet.
    public var activeRequestIDs: [RequestID] {
        registry.withLock { $0.tasks.keys.sorted() }
    }

    // MARK: - Internals shared by the three styles

    /// Registers a request under `id` and starts it on a task of its own; with `failure`, ends
    /// it at once with that error instead (a request that could not start), delivered as any
    /// failure is.
    func launch(_ request: HTTPRequest, id: RequestID, callbacks: RequestCallbacks,
                failure: HTTPConnectionError? = nil) -> RequestID {
        let task = register(request, id: id, callbacks: callbacks)
        if let failure {
            task.fail(beforeStart: failure)
        } else {
            task.launch(on: callbacks.bodyConsumer?.runsOffLoop == true ? nil : requestExecutor())
        }
        return id
    }

    /// Makes the request's task and registers it under `id`, where ``cancel(_:)`` finds it.
    func register(_ request: consuming HTTPRequest, id: RequestID, callbacks: consuming RequestCallbacks) -> RequestTask {
        let lifetime = request.lifetime ?? .managed
        let task = RequestTask(id: id, request: request, connection: self, lifetime: lifetime, callbacks: callbacks)
        registry.withLock { $0.tasks[id] = task }
        return task
    }

    /// The executor a request's task prefers: the transport's, unless the cache reads files,
    /// which must not block an event loop.
    func requestExecutor() -> (any TaskExecutor)? {
        if cache?.isPersistent == true { return nil }
        return pipeline.transport.preferredTaskExecutor(for: baseURL)
    }

    /// The executor that does this connection's network I/O: on ``NativeTransport``, the event
    /// loop of the base URL's origin (with several loops, the origin's first; a request sent from
    /// it stays there while that loop's share of the connections has one to spare). `nil` on a
    /// transport without one (``URLSessionTransport``) and for a connection whose cache keeps
    /// files on disk (its reads must not hold up a loop).
    ///
    /// Code that sends one request after another can run on it, so that each request starts and
    /// resumes on the thread that reads its response, without the two thread wake-ups a caller
    /// on Swift's global executor pays per request (measured sequentially on one connection,
    /// 2026-11-27, 8 interleaved pairs: about a fifth less CPU per request and a tenth more
    /// requests per second):
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(connection.executor) {
    ///     for id in 1...100 {
    ///         _ = try await connection.get("/items/\(id)")
    ///     }
    /// }
    /// ```
    ///
    /// Everything such code does runs on the loop and holds up every connection the loop
    /// serves: do no blocking work there (files, locks held long, `sleep`).
    ///
    /// Concurrent callers that do little work per response can run there too; whether they
    /// gain depends on what a thread wake-up costs on the machine. On a 2-core VM where it is
    /// dear, 16 callers on the loop made about 1.25× the requests a second of 16 on the global
    /// executor, with 30–40 % less CPU per request; on a machine where it is cheap, 0.9×.
    /// Callers that do real work per response (decoding large bodies, computing) belong on the
    /// global executor, where that work spreads over the cores.
    public var executor: (any TaskExecutor)? {
        if cache?.isPersistent == true { return nil }
        return pipeline.transport.ioExecutor(for: baseURL)
    }

    /// Reports a failure that no closure and no delegate hears: to the event monitor, or without
    /// one, to ``unhandledFailureLog``.
    func reportUnhandledFailure(_ id: RequestID, _ error: HTTPConnectionError) {
        let event = EventMonitor.Event.unhandledFailure(id, error: error.description)
        if let eventMonitor {
            eventMonitor.report(event)
        } else {
            HTTPConnection.unhandledFailureLog(event.description)
        }
    }

    func unregister(_ id: RequestID) {
        _ = registry.withLock { $0.tasks.removeValue(forKey: id) }
    }

    func currentSettings() -> Settings {
        settings.withLock { $0 }
    }
}

extension HTTPConnection {
    /// The settings that can change while the connection lives.
    struct Settings: Sendable {
        var timeout: Duration?
        var cachePolicy: CachePolicy?
        var retryPolicy: RetryPolicy?
        var validation: ResponseValidation
        var headers: HTTPHeaders
        var maxResponseBodySize: Int
        var redirectPolicy: RedirectPolicy
        var deadline: Duration?

        init(_ configuration: Configuration) {
            timeout = configuration.timeout
            cachePolicy = configuration.cachePolicy
            retryPolicy = configuration.retryPolicy
            validation = configuration.validation
            headers = configuration.headers
            maxResponseBodySize = configuration.maxResponseBodySize
            redirectPolicy = configuration.redirectPolicy
            deadline = configuration.deadline
        }
    }

    struct WeakDelegate: Sendable {
        weak var value: (any HTTPConnectionDelegate)?
        /// Which methods of the delegate's type are the protocol's defaults, as far as known.
        var profile = DelegateProfile()
    }

    struct RequestRegistry: Sendable {
        /// A closure request as it was started, for ``HTTPConnection/retry(_:)``.
        struct Start: Sendable {
            let id: RequestID
            let request: HTTPRequest
            let callbacks: RequestCallbacks
        }

        var tasks: [RequestID: RequestTask] = [:]
        /// The most recent closure requests, oldest first; at most ``HTTPConnection/retainedRequestCount``.
        var starts: [Start] = []

        mutating func remember(_ id: RequestID, _ request: HTTPRequest, _ callbacks: RequestCallbacks) {
            if starts.count == HTTPConnection.retainedRequestCount { starts.removeFirst() }
            starts.append(Start(id: id, request: request, callbacks: callbacks))
        }

        func remembered(_ id: RequestID) -> (HTTPRequest, RequestCallbacks)? {
            starts.last { $0.id == id }.map { ($0.request, $0.callbacks) }
        }

        mutating func removeAll() -> [RequestTask] {
            defer { tasks.removeAll() }
            return Array(tasks.values)
        }
    }
}

import CourierWire
import Foundation
import Synchronization

/// Courier's own HTTP/1.1 client: the default transport, built to be the fastest HTTP client
/// on Linux.
///
/// - **Event-driven.** Non-blocking sockets on `epoll` event loops (one thread by default, see
///   ``Configuration/loopCount``); no thread per request and no blocking read anywhere. Names are
///   resolved with `getaddrinfo` off the loops (or taken from ``Configuration/addressOverrides``);
///   IPv4, IPv6 and `localhost` all work, and a host's addresses race per Happy Eyeballs
///   (RFC 8305, ``Configuration/connectionAttemptDelay``), so a dead address costs 250 ms, not
///   the connect timeout.
/// - **Pooled.** Keep-alive connections per (scheme, host, port), at most
///   ``Configuration/maxConnectionsPerHost`` at once, with a fair first-in, first-out queue
///   beyond that (one per loop with several loops, see ``Configuration/loopCount``) and an idle
///   timeout. A pooled connection that the server closed while it was idle is detected; a
///   request that is safe to repeat is then re-sent once on a fresh connection, any other fails
///   with ``HTTPConnectionError/staleConnection``.
/// - **Strict.** Responses are parsed per RFC 9112 (Content-Length, chunked and close-delimited
///   bodies; HEAD, 1xx, 204 and 304; `Connection: close`). A malformed or oversized response
///   ends in one clear error and its connection is discarded, never reused; so is the connection
///   of a response framed both chunked and by `Content-Length`.
/// - **Bounded.** A hostile server cannot keep a request alive past its timeout: the final
///   response head must arrive within the request's timeout after its last byte was sent (at
///   most 10 interim 1xx responses are accepted on the way); in the body only payload bytes
///   count as progress, and chunk framing counts toward `maxResponseBodySize`.
/// - **Secure.** `https` uses the system's OpenSSL: SNI, chain and host name verification,
///   TLS 1.2 or newer, custom trust roots and pins (``TLSOptions``).
/// - **Streaming.** The observer hears the head, then body bytes as they arrive; a request's
///   `maxResponseBodySize` stops the transfer early.
///
/// Every request it sends carries `Host`, `User-Agent: Courier/<version>` (unless set) and, while
/// decompression is on, `Accept-Encoding: gzip, deflate` (unless set); bodies are framed with
/// `Content-Length`.
///
/// A transport owns threads and sockets: ``shutdown()`` releases them (so does `deinit`).
public final class NativeTransport: Transport {
    /// The version sent in `User-Agent`.
    static let version = "0.1.0"

    /// The transport that connections use unless they are given another.
    public static let shared = NativeTransport()

    /// The configuration the transport was created with.
    public let configuration: Configuration

    /// What the transport's lock guards: each origin's pools, the loop the next new origin
    /// starts on, and whether the transport has shut down.
    struct State {
        var pools: [NativePoolKey: OriginPools] = [:]
        var nextLoop = 0
        var isShutDown = false
    }

    let settings: NativeSettings
    private let group: EventLoopGroup?
    private let startupError: HTTPConnectionError?
    private let contexts: [LoopBound<NativeLoopContext>]
    let state = Mutex(State())
    private let tls: NativeTLSProvider
    /// The proxy re-authentication queues, when a ``Configuration/proxyAuthenticator`` is set.
    let proxyAuthentication: ProxyAuthenticationRegistry?
    /// Requests sent and not yet answered with a head (a hint for ``preferredTaskExecutor(for:)``).
    private let inFlight = Atomic<Int>(0)

    /// Creates a transport with its own event loops and pools.
    /// - Parameter configuration: the settings; ``Configuration/init(maxConnectionsPerHost:idleTimeout:connectTimeout:tls:decompression:maxDecompressedBytes:maxDecompressionRatio:maxHeadBytes:maxHeaderFields:loopCount:)``
    ///   with its defaults by default.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.settings = NativeSettings(configuration)
        self.tls = NativeTLSProvider(options: configuration.tls,
                                     applicationProtocols: configuration.httpVersion.applicationProtocols)
        self.proxyAuthentication = configuration.proxyAuthenticator.map(ProxyAuthenticationRegistry.init)
        do {
            let group = try EventLoopGroup(count: max(configuration.loopCount, 1), name: "courier-http")
            self.group = group
            self.contexts = group.loops.map { LoopBound(sending: NativeLoopContext(), to: $0) }
            self.startupError = nil
        } catch {
            self.group = nil
            self.contexts = []
            self.startupError = .transportFailed.with(detail: "cannot start the event loops", underlying: error)
        }
    }

    deinit {
        shutdown()
    }

    /// Closes every connection and stops the event loops. Requests in flight, and any sent
    /// afterwards, fail with ``HTTPConnectionError/cancelled``. Idempotent; waits until the loop
    /// threads have ended (unless called from one of them).
    public func shutdown() {
        let first = state.withLock { state -> Bool in
            defer { state.isShutDown = true; state.pools = [:] }
            return !state.isShutDown
        }
        guard first, let group else { return }
        for context in contexts {
            if context.loop.inEventLoop {
                // The last reference can drop inside one of this loop's own callbacks (a finished
                // exchange releasing its observer chain): tear the pools down on the next turn,
                // never re-entrantly in the middle of pool bookkeeping.
                _ = context.loop.execute { _ = context.run { $0.shutDown() } }
            } else {
                _ = context.run { $0.shutDown() }
            }
        }
        group.shutdown()
    }

    /// Sends one request over a pooled connection and collects its response.
    /// - Parameters:
    ///   - request: the request.
    ///   - observer: hears the head and the body bytes as they arrive (on the transport's loop thread).
    /// - Returns: the response, whatever its status.
    /// - Throws: ``HTTPConnectionError`` (see the kinds listed in the type's documentation).
    public func send(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPResponse {
        if proxyAuthentication != nil { return try await sendMindingProxyAuthentication(request, observer: observer) }
        return try await exchange(request, target: nil, observer: observer, stream: nil)
    }

    /// ``send(_:observer:)`` with a proxy authenticator configured: a request through an HTTP
    /// proxy goes through its 407 queue. Out of line, so that a plain request's frame stays small.
    @inline(never)
    private func sendMindingProxyAuthentication(_ request: TransportRequest,
                                                observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPResponse {
        let target = try target(for: request.url)
        if let registry = proxyAuthentication, let proxy = target.key.proxy, proxy.speaksHTTP {
            return try await sendAuthenticatingProxy(request, target: target, proxy: proxy, registry: registry, observer: observer)
        }
        return try await exchange(request, target: target, observer: observer, stream: nil)
    }

    /// Where a request to `url` goes: its Unix socket route or proxy, and its pool.
    func target(for url: URL) throws(HTTPConnectionError) -> NativeRequestTarget {
        try NativeRequestTarget(url: url, proxies: settings.proxies, unixSockets: settings.unixSockets)
    }

    /// Sends one request over a pooled connection and returns when the response head arrives;
    /// the body follows through the stream, read from the socket only while the consumer wants
    /// more (at most about 256 KiB held). The connection goes back to the pool when the body has
    /// been read to its end; a body abandoned early closes it.
    /// - Parameters:
    ///   - request: the request; its `maxResponseBodySize` does not apply.
    ///   - observer: hears the head, and the body bytes as they arrive if it asks for them.
    /// - Returns: the head and the body's stream.
    /// - Throws: ``HTTPConnectionError``, as ``send(_:observer:)`` until the head.
    public func stream(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPStreamingResponse {
        let buffer = BodyStreamBuffer()
        let response = try await exchange(request, target: nil, observer: observer, stream: buffer)
        return HTTPStreamingResponse(head: response.head,
                                     body: HTTPBodyStream(buffer: buffer))
    }

    /// Runs one exchange to `target` (computed from the request's URL when `nil`) on the pool's
    /// loop; with a `stream`, it returns at the head. Cancelling the task cancels the exchange;
    /// for a request that runs in its caller's task, its `interruption` does instead (the
    /// caller's cancellation ends the request, which interrupts it).
    func exchange(_ request: TransportRequest, target: NativeRequestTarget?, observer: any TransportObserver,
                  stream: BodyStreamBuffer?, interruption: RequestInterruption? = nil) async throws(HTTPConnectionError) -> HTTPResponse {
        inFlight.add(1, ordering: .relaxed)
        defer { inFlight.subtract(1, ordering: .relaxed) }
        let (handle, exchange, ticket) = try prepareExchange(request, target: target, observer: observer, stream: stream)
        let pool = handle.pool
        let loop = pool.loop
        // The request ended: a stream body's producer stops here and now, before the request's
        // callback runs (the loop, which stops the upload too, may be busy a while).
        let upload = request.upload
        let cancel: @Sendable () -> Void = {
            upload?.abandon()
            loop.execute { exchange.value.cancel() }
        }
        let outcome = await RequestInterruption.wait(interruption, { await run(exchange, in: pool, interruption: interruption) },
                                                     stop: cancel)
        // The pool counted the request. A streamed response stays counted until its exchange
        // ends (``NativeExchange/streamTicket``), or until now if it failed before its head.
        if let ticket {
            if case .failure = outcome { ticket.end() }
        } else {
            handle.gauge.requestEnded()
        }
        return try outcome.get()
    }

    /// Hands the exchange to its pool on the pool's loop, and waits for its outcome.
    ///
    /// Only the loop touches sockets. (A caller-thread fast path that wrote on parked idle
    /// connections was measured and removed: +8% sequential, -9% at 16 in flight; see DESIGN.md.)
    private func run(_ exchange: LoopBound<NativeExchange>, in pool: LoopBound<HostPool>,
                     interruption: RequestInterruption?) async -> Result<HTTPResponse, HTTPConnectionError> {
        let loop = pool.loop
        return await withUnsafeContinuation { (continuation: NativeExchange.Continuation) in
            if loop.inEventLoop, loop.isRunning {
                // Already on the pool's loop (the request runs on it as its task executor), at
                // the top of a job: start at once, without a turn of the loop. A request ended
                // before it got here never reaches the server (its cancel is still queued on the
                // loop, behind this job).
                if Task.isCancelled || interruption?.isInterrupted == true {
                    continuation.resume(returning: .failure(.cancelled))
                    return
                }
                pool.value.start(exchange, continuation: continuation, selfBound: pool)
                return
            }
            let accepted = loop.execute {
                pool.value.start(exchange, continuation: continuation, selfBound: pool)
            }
            if !accepted { continuation.resume(returning: .failure(NativeErrors.shutDown)) }
        }
    }

    /// Encodes the request, finds its pool (which counts it in its gauge from then on: the
    /// caller, or for a streamed body its exchange, reports its end) and makes its exchange,
    /// bound to the pool's loop. Out
    /// of line: its temporaries stay off the frame that ``exchange(_:target:observer:stream:)``
    /// holds while the request is in flight.
    @inline(never)
    private func prepareExchange(_ request: TransportRequest, target known: NativeRequestTarget?, observer: any TransportObserver,
                                 stream: BodyStreamBuffer?) throws(HTTPConnectionError) -> (PoolHandle, LoopBound<NativeExchange>, PoolGauge.Ticket?) {
        let target: NativeRequestTarget
        if let known { target = known } else { target = try self.target(for: request.url) }
        let expectsContinue = request.expectsContinue
        let (wire, inlined) = try NativeRequestEncoder.encode(request, target: target, acceptEncoding: settings.decompression,
                                                              holdsBody: expectsContinue)
        // Last, so that nothing throws once the pool has counted the request.
        let handle = try pool(for: target.key)
        let loop = handle.loop
        let ticket = stream == nil ? nil : PoolGauge.Ticket(handle.gauge)
        let exchange = LoopBound(sending: NativeExchange(request: request, target: target, wire: wire, bodyInlined: inlined,
                                                         expectsContinue: expectsContinue, observer: observer,
                                                         stream: stream, streamTicket: ticket),
                                 to: loop)
        stream?.connect(.init(
            onDemand: { loop.execute { exchange.value.consumerWantsMore() } },
            onCancel: { loop.execute { exchange.value.cancel() } }))
        return (handle, exchange, ticket)
    }

    /// For a request that would be the only one in flight, the event loop that owns `origin`'s
    /// (first) pool (or, before the pool exists, the loop it will get; with one loop, always that loop),
    /// so that it runs on the thread that does its I/O and resumes without a thread wake-up.
    /// While other requests are in flight, `nil`: their pipelines then spread over Swift's
    /// global executor instead of queueing on the loop (measured on 2026-11-23, when every
    /// request ran on a task of its own: 12% less CPU per request for sequential requests on
    /// the loop, 14% more at 16 in flight). `nil` also when the transport could not start or
    /// has shut down. (An `async` caller's request does not ask: it runs in the caller's task.)
    /// - Parameter origin: a URL on the origin, or `nil` when unknown.
    /// - Returns: the loop, as a task executor, or `nil`.
    public func preferredTaskExecutor(for origin: URL?) -> (any TaskExecutor)? {
        guard inFlight.load(ordering: .relaxed) == 0 else { return nil }
        return ioExecutor(for: origin)
    }

    /// The event loop that owns `origin`'s (first) pool (or, before the pool exists, the loop it
    /// will get; with one loop, always that loop), whatever is in flight; `nil` when the transport
    /// could not start (or, with several loops, has shut down). A loop that has stopped runs the
    /// jobs it is given on Swift's global executor.
    /// - Parameter origin: a URL on the origin, or `nil` when unknown.
    /// - Returns: the loop, as a task executor, or `nil`.
    public func ioExecutor(for origin: URL?) -> (any TaskExecutor)? {
        guard startupError == nil, !contexts.isEmpty else { return nil }
        if contexts.count == 1 { return contexts[0].loop }
        let key = origin.flatMap { try? target(for: $0).key }
        return state.withLock { state -> EventLoop? in
            if state.isShutDown { return nil }
            if let key, let origin = state.pools[key] { return origin.first.loop }
            return contexts[state.nextLoop % contexts.count].loop
        }
    }

    /// The pools that serve `key` (one per loop the origin uses), if any.
    func existingPools(for key: NativePoolKey) -> [LoopBound<HostPool>] {
        state.withLock { $0.pools[key]?.handles.map(\.pool) ?? [] }
    }

    /// The pool that takes a request to `key`, its origin's pools made on first use, starting
    /// on the next loop (``OriginSpread``). The request is counted in the pool's gauge under the
    /// same lock as the choice, so that concurrent choices see each other; the caller reports
    /// its end (``PoolGauge/requestEnded()``).
    private func pool(for key: NativePoolKey) throws(HTTPConnectionError) -> PoolHandle {
        if let startupError { throw startupError }
        let callersLoop = contexts.count > 1 ? contexts.firstIndex { $0.loop.inEventLoop } : nil
        let contexts = contexts, settings = settings
        if let handle = state.withLock({ state in
            state.isShutDown ? nil : state.pools[key]?.next(callersLoop: callersLoop, contexts: contexts, settings: settings)
        }) {
            return handle
        }
        // A new origin: its TLS context is made (or taken from the cache) outside the lock.
        let tlsContext = key.secure ? try tls.context() : nil
        let found = state.withLock { state -> PoolHandle? in
            if state.isShutDown { return nil }
            if state.pools[key] == nil {
                state.pools[key] = OriginPools(key: key, tlsContext: tlsContext, firstLoop: state.nextLoop % contexts.count,
                                               contexts: contexts, settings: settings)
                state.nextLoop &+= 1
            }
            return state.pools[key]?.next(callersLoop: callersLoop, contexts: contexts, settings: settings)
        }
        guard let found else { throw NativeErrors.shutDown }
        return found
    }
}

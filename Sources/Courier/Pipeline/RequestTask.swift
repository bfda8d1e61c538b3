import Foundation
import Synchronization

/// One started request: runs it through the pipeline and delivers its events.
///
/// The state machine guarantees exactly one terminal outcome whatever races happen between
/// completion, `cancel` from many threads, the deadline, and the release of an unmanaged
/// request's connection. Whoever moves the state to `finished` first delivers; everyone else
/// does nothing.
final class RequestTask: Sendable {
    private enum State {
        case created
        /// Running on a task of its own, which ending the request cancels.
        case running(Task<Void, Never>)
        /// Running in its `async` caller's task: ending the request interrupts its waits.
        case runningInline
        case finished
    }

    let id: RequestID
    let metrics = MetricsCollector()
    let callbackQueue: CallbackQueue
    private let request: HTTPRequest
    private let pipeline: RequestPipeline
    private let callbacks: RequestCallbacks
    private let monitor: EventMonitor?
    private let decoder: JSONDecoder
    private let reference: Mutex<ConnectionReference?>
    private let state = Mutex<State>(.created)
    private let deadlineTimer = Mutex<DeadlineTimer?>(nil)
    /// Set on the callback queue when the terminal callback runs; later events are dropped.
    private let terminalDelivered = Atomic<Bool>(false)
    /// Set when an event was sent to the callback queue: the end must follow it there.
    private let queuedEvents = Atomic<Bool>(false)
    /// The body a `stream` caller is reading, once handed out: ending the request aborts it.
    private let streamedBody = Mutex<BodyStreamBuffer?>(nil)
    /// Set when the `stream` caller got its answer (the streamed response or the failure).
    private let streamAnswered = Atomic<Bool>(false)
    /// Holds the terminal callback back while a body consumer (a download) is still running.
    private let consumerGate = BodyConsumerGate()
    /// Holds back upload progress reports (see ``ProgressThrottle``), and the closure they go to.
    private let uploadThrottle = Mutex<(ProgressThrottle, (@Sendable (Int64, Int64?) -> Void)?)>((ProgressThrottle(), nil))
    /// Stops the pipeline's waits when the request ends, if it runs in its caller's task.
    private let interruption: RequestInterruption?

    init(id: RequestID, request: consuming HTTPRequest, connection: HTTPConnection, lifetime: HTTPRequest.Lifetime,
         callbacks: consuming RequestCallbacks) {
        self.id = id
        self.interruption = callbacks.awaitedOutcome == nil ? nil : RequestInterruption()
        self.request = request
        self.pipeline = connection.pipeline
        self.callbackQueue = connection.requestCallbackQueue
        self.monitor = connection.eventMonitor
        self.decoder = connection.decoder
        self.callbacks = callbacks
        self.reference = Mutex(lifetime == .managed ? .strong(connection) : .weak(connection))
    }

    /// The connection, while the request has not ended (and, if unmanaged, while it lives).
    var connection: HTTPConnection? { reference.withLock { $0?.connection } }

    /// Starts running the request on a new Swift task, created here so that it inherits the
    /// caller's priority and task-local values. A request that has already ended starts none
    /// (one that ends just after gets a task that finds it ended and does nothing).
    /// - Parameter executor: the executor the task prefers (the transport's event loop), or `nil`
    ///   for the global one. With `nil` the task gets no preference at all: since Swift 6.2, a
    ///   task created with `executorPreference: nil` is still marked as having one, and every
    ///   hop it makes then takes the runtime's lock on the task's status records.
    func launch(on executor: (any TaskExecutor)?) {
        if hasEnded { return }
        let task = executor.map { executor in Task(executorPreference: executor) { await self.run() } }
            ?? Task { await self.run() }
        let started = state.withLock { state -> Bool in
            guard case .created = state else { return false }
            state = .running(task)
            return true
        }
        if !started { task.cancel() }
    }

    /// Runs the request in the calling task, for an `async` caller that takes the outcome from
    /// its ``RequestCallbacks/awaitedOutcome``; returns when the pipeline has. Ending the request
    /// from elsewhere interrupts the pipeline's waits (``RequestInterruption``) instead of
    /// cancelling a task. A request that ended before it ran does not run.
    func runInCallersTask() async {
        let started = state.withLock { state -> Bool in
            guard case .created = state else { return false }
            state = .runningInline
            return true
        }
        if started { await run() }
    }

    /// Ends a request that could not start (its preparation failed before it was launched) the
    /// way a request that fails before sending ends: the delegate hears `didFailWith`, then the
    /// error closure or the `async` caller; with neither, an unhandled failure is reported.
    func fail(beforeStart error: HTTPConnectionError) {
        end(.failure(error), notify: true)
    }

    /// Cancels the request.
    /// - Parameter notify: whether the cancel callback is delivered; `false` when the connection
    ///   of an unmanaged request went away (an `async` caller is still resumed with `.cancelled`).
    func cancel(notify: Bool) {
        end(.failure(.cancelled), notify: notify)
    }

    // MARK: - Running

    private func run() async {
        guard let (context, validation) = await prepare() else { return }
        do {
            let response = try await pipeline.send(context.plan.transportRequest, context: context)
            if let passed = deadlinePassed(context) { return end(.failure(passed), notify: true) }
            await complete(consume response, validation: validation, streams: context.streamsResponse)
        } catch {
            end(.failure(deadlinePassed(context) ?? error), notify: true)
        }
    }

    /// The deadline's error when the request's deadline has passed, whether or not its timer has
    /// run yet: on a busy machine Dispatch can run the timer late, and an outcome that came after
    /// the deadline must not stand in for the deadline's.
    private func deadlinePassed(_ context: RequestContext) -> HTTPConnectionError? {
        guard let limit = context.plan.deadline, let deadline = context.deadline, ContinuousClock.now >= deadline else { return nil }
        return Self.deadlineExceeded(limit)
    }

    /// The error of a request whose deadline, `limit` after its start, has passed.
    private static func deadlineExceeded(_ limit: Duration) -> HTTPConnectionError {
        .deadlineExceeded.with(detail: "the deadline was \(limit)")
    }

    /// Arms the deadline, reports the start (unless the trip that asked the delegate for the
    /// request did) and makes the pipeline's context. Whether the delegate hears the response's
    /// head and body is decided here, for the delegate of the moment: one set later hears them
    /// from the next request on. Not inlined into ``run()``, whose frame every request holds
    /// while it waits on the network.
    @inline(never)
    private func begin(_ plan: consuming RequestPlan, startReported: Bool, connection: HTTPConnection) -> RequestContext {
        if let deadline = plan.deadline { armDeadline(deadline) }
        if !startReported { emitDidStart() }
        let observesBody = connection.delegate(implementingAnyOf: .responseProgress) != nil
        monitor?.report(.started(id, method: plan.transportRequest.method.rawValue,
                                 url: Redaction.url(plan.transportRequest.url),
                                 headers: Redaction.headers(of: plan.transportRequest)))
        return RequestContext(
            id: id, plan: plan, observer: RequestObserver(task: self, observesBody: observesBody, uploadProgress: plan.uploadProgress),
            events: self, metrics: metrics, deadline: plan.deadline.map { ContinuousClock.now + $0 },
            streamsResponse: callbacks.streamsResponse, mayStoreInCache: callbacks.bodyConsumer?.mayStoreInCache ?? true,
            interruption: interruption)
    }

    /// Ends the request with the pipeline's response: validated, with its metrics; or, for a
    /// `stream` caller, handed out with its body still arriving.
    @inline(never)
    private func complete(_ response: consuming HTTPResponse, validation: ResponseValidation, streams: Bool) async {
        if streams { return await handOut(response, validation: validation) }
        response.metrics = metrics.snapshot()
        response.decoder = decoder
        // One use on each path, so that the response moves into the outcome without a copy.
        if validation.isAcceptable(response) {
            end(.success(response), notify: true)
        } else {
            end(.failure(.unacceptableStatus(response)), notify: true)
        }
    }

    /// Answers a `stream` caller with the head and the body's stream; the request ends when the
    /// body does (or the reader leaves, or the request is cancelled). A response that was not
    /// streamed (a cache hit) is handed out as a body that has already arrived.
    private func handOut(_ response: HTTPResponse, validation: ResponseValidation) async {
        var head = response
        head.bodyStream = nil
        guard validation.isAcceptable(response) else {
            callbacks.bodyConsumer?.rejected(head)
            end(.failure(.unacceptableStatus(head)), notify: true)  // the unread body closes its connection
            return
        }
        let body = response.bodyStream ?? HTTPBodyStream(arrived: response.body)
        streamedBody.withLock { $0 = body.buffer }
        if case .finished = state.withLock({ $0 }) { body.buffer.abort(.cancelled) }
        head.body = Data()
        if let consumer = callbacks.bodyConsumer {
            return await consume(head, body: body, with: consumer)
        }
        if !streamAnswered.exchange(true, ordering: .acquiringAndReleasing) {
            callbacks.streamContinuation?.resume(returning: .success(HTTPStreamingResponse(head: head.head, body: body)))
        }
        let finished = head
        body.buffer.onEnd { [self] ending in
            switch ending {
            case .success:
                var response = finished
                response.metrics = metrics.snapshot()
                end(.success(response), notify: true)
            case .failure(let error):
                end(.failure(error), notify: true)
            }
        }
    }

    /// Lets `consumer` read the body, then ends the request with its outcome. A request that ends
    /// meanwhile (cancel, deadline) aborts the body, and its terminal callback waits until the
    /// consumer has returned.
    private func consume(_ head: HTTPResponse, body: HTTPBodyStream, with consumer: any BodyConsumer) async {
        guard consumerGate.enter() else { return }
        let events = BodyConsumerEvents(
            deliver: { [self] work in await deliver(work) },
            post: { [self] work in emit([], heardElsewhere: true) { _, _ in work() } })
        var result = await consumer.consume(head, body: body, events: events)
        consumerGate.leave()
        if case .success(var response) = result {
            response.metrics = metrics.snapshot()
            result = .success(response)
        }
        end(result, notify: true)
    }

    /// Runs `work` on the callback queue and waits for it, unless the request ended by then.
    private func deliver(_ work: @escaping @Sendable () -> Void) async {
        guard connection != nil else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            callbackQueue.async { [self] in
                if !terminalDelivered.load(ordering: .acquiring) { work() }
                continuation.resume()
            }
        }
    }

    /// Reports upload progress to the delegate and the request's closure, throttled (at most
    /// every 1% or 100 ms, and always the last report: one held back is delivered before the
    /// terminal callback).
    func reportUploadProgress(_ bytesSent: Int64, expectedTotal: Int64?, to progress: (@Sendable (Int64, Int64?) -> Void)?) {
        let due = uploadThrottle.withLock { state in
            state.1 = progress
            return state.0.offer(bytesSent, total: expectedTotal, now: .now)
        }
        if due { emitUploadProgress(bytesSent, expectedTotal, progress) }
    }

    private func emitUploadProgress(_ bytesSent: Int64, _ expectedTotal: Int64?, _ progress: (@Sendable (Int64, Int64?) -> Void)?) {
        emit(.didSendBodyData, heardElsewhere: progress != nil) { connection, id in
            connection.callDelegate(.didSendBodyData) {
                $0.connection(connection, request: id, didSendBodyData: bytesSent, expectedTotal: expectedTotal)
            }
            progress?(bytesSent, expectedTotal)
        }
    }

    /// Resolves the request against its connection and starts it
    /// (``begin(_:startReported:connection:)``): the pipeline's context and the validation to
    /// apply. The connection is held only here, and not across the trip to the callback queue, so
    /// that an unmanaged request never keeps its connection alive while it waits.
    ///
    /// With a delegate that implements `willSend` or `didStart` (or has not shown yet that it does
    /// not), one trip to the callback queue asks it for the request (``askDelegateToStart(settings:)``).
    private func prepare() async -> (RequestContext, ResponseValidation)? {
        guard let (settings, madeHere) = planWithoutDelegate() else {
            cancel(notify: false)
            return nil
        }
        let planned: Result<RequestPlan, HTTPConnectionError>
        if let madeHere {
            planned = madeHere
        } else {
            // `nil`: interrupted during the trip to the callback queue, so it has ended.
            guard let answer = await onCallbackQueue({ [self] in askDelegateToStart(settings: settings) }) else { return nil }
            planned = answer
        }
        guard let connection else {
            cancel(notify: false)
            return nil
        }
        switch consume planned {
        case .success where hasEnded:
            return nil  // ended during the trip to the callback queue: nothing to arm or send
        case .success(let plan):
            return (begin(plan, startReported: madeHere == nil, connection: connection), settings.validation)
        case .failure(let error):
            end(.failure(error), notify: true)
            return nil
        }
    }

    /// The connection's settings, and the plan made at once when the delegate need not be asked
    /// for the request (`nil` when it must be); `nil` when the connection is gone.
    private func planWithoutDelegate() -> (HTTPConnection.Settings, Result<RequestPlan, HTTPConnectionError>?)? {
        guard let connection else { return nil }
        let settings = connection.currentSettings()
        if connection.delegate(implementingAnyOf: .start) != nil { return (settings, nil) }
        do {
            return (settings, .success(try RequestPlan(request, connection: connection, settings: settings)))
        } catch {
            return (settings, .failure(error))
        }
    }

    /// On the callback queue: asks the delegate for the request (`willSend`), resolves the answer
    /// and reports the start, in one trip instead of one each (every trip wakes a thread).
    /// A request that has already ended is not offered to the delegate: it hears only the end;
    /// nor is one whose (unmanaged) connection has gone.
    private func askDelegateToStart(settings: HTTPConnection.Settings) -> Result<RequestPlan, HTTPConnectionError> {
        guard !hasEnded, let connection else { return .failure(.cancelled) }
        let (id, original) = (self.id, request)
        let request = connection.callDelegate(.willSend) { $0.connection(connection, willSend: original, id: id) } ?? original
        let plan = Result { () throws(HTTPConnectionError) in try RequestPlan(request, connection: connection, settings: settings) }
        // Not for a request that ended meanwhile (cancelled from willSend, or while the delegate
        // answered): its delegate hears only the end.
        if case .success = plan, !hasEnded {
            connection.callDelegate(.didStart) { $0.connection(connection, didStart: id) }
            callbacks.onDidStart?(id)
        }
        return plan
    }

    /// Whether the request has ended.
    private var hasEnded: Bool {
        state.withLock { state in
            if case .finished = state { return true }
            return false
        }
    }

    /// Fails the request when its deadline passes.
    private func armDeadline(_ deadline: Duration) {
        let timer = DeadlineTimer(after: deadline) { [weak self] in
            self?.end(.failure(Self.deadlineExceeded(deadline)), notify: true)
        }
        deadlineTimer.withLock { $0 = timer }
    }

    // MARK: - Ending

    /// Ends the request once: the first caller moves the state to `finished`, stops the pipeline
    /// and the deadline timer, and delivers; later callers do nothing.
    private func end(_ result: Result<HTTPResponse, HTTPConnectionError>, notify: Bool) {
        let running: Task<Void, Never>?? = state.withLock { state in
            defer { state = .finished }
            switch state {
            case .finished: return nil
            case .created, .runningInline: return .some(nil)
            case .running(let task): return .some(task)
            }
        }
        guard let running else { return }
        running?.cancel()
        interruption?.interrupt()
        deadlineTimer.withLock { $0 }?.cancel()
        if case .failure(let error) = result { streamedBody.withLock { $0 }?.abort(error) }
        let (heldBack, progress) = uploadThrottle.withLock { ($0.0.takePending(), $0.1) }
        if let heldBack { emitUploadProgress(heldBack.bytes, heldBack.total, progress) }
        // With no body consumer running, the usual case, the outcome is delivered here, without
        // a closure to hold it.
        if consumerGate.end(orLater: { [self] in { self.conclude(result, notify: notify) } }) {
            conclude(result, notify: notify)
        }
    }

    /// Delivers the terminal outcome: resumes an `async` caller at once, then the delegate and
    /// closures on the callback queue. Runs once per task.
    private func conclude(_ result: Result<HTTPResponse, HTTPConnectionError>, notify: Bool) {
        let reference = self.reference.withLock { current -> ConnectionReference? in
            defer { current = nil }  // a finished request no longer keeps its connection alive
            return current
        }
        let connection = reference?.connection
        connection?.unregister(id)
        let metrics = metrics.snapshot()
        report(result, metrics: metrics)
        callbacks.continuation?.resume(returning: result)
        callbacks.awaitedOutcome?.fill(result)
        if let streamContinuation = callbacks.streamContinuation, !streamAnswered.exchange(true, ordering: .acquiringAndReleasing) {
            streamContinuation.resume(returning: result.map { response in
                HTTPStreamingResponse(head: response.head, body: HTTPBodyStream(arrived: response.body))
            })
        }
        guard notify, let connection else { return }
        if case .failure(let error) = result, error != .cancelled, !callbacks.hearsFailures, connection.delegate == nil {
            connection.reportUnhandledFailure(id, error)
        }
        guard connection.delegate(implementingAnyOf: .end(result)) != nil || callbacks.hasClosures
                || request.onUploadProgress != nil || callbacks.bodyConsumer != nil
                || queuedEvents.load(ordering: .acquiring) else {
            // An `async` caller with no closure, and no delegate that hears the end (none, or one
            // that leaves those methods to the protocol's defaults): nobody is left to tell, and no
            // event may reach a delegate set from now on. (With a closure, or an event on its way
            // to the delegate, the hop below runs after the events queued before it, so none of
            // them is lost.)
            terminalDelivered.store(true, ordering: .releasing)
            return
        }
        let callbacks = self.callbacks
        let id = self.id
        callbackQueue.async { [self] in
            terminalDelivered.store(true, ordering: .releasing)
            connection.callDelegate(.didCollect) { $0.connection(connection, request: id, didCollect: metrics) }
            switch result {
            case .success(let response):
                connection.callDelegate(.didFinish) { $0.connection(connection, request: id, didFinishWith: response) }
                callbacks.onSuccess?(response)
            case .failure(let error) where error == .cancelled:
                connection.callDelegate(.didCancel) { $0.connection(connection, didCancel: id) }
                callbacks.onError?(error)
            case .failure(let error):
                connection.callDelegate(.didFail) { $0.connection(connection, request: id, didFailWith: error) }
                callbacks.onError?(error)
            }
        }
    }

    private func report(_ result: Result<HTTPResponse, HTTPConnectionError>, metrics: RequestMetrics) {
        guard let monitor else { return }
        switch result {
        case .success(let response):
            monitor.report(.finished(id, status: response.status.code, headers: Redaction.headers(response.headers), metrics: metrics))
        case .failure(let error) where error == .cancelled:
            monitor.report(.cancelled(id))
        case .failure(let error):
            monitor.report(.failed(id, error: error.description, metrics: metrics))
        }
    }

    // MARK: - Non-terminal events

    /// Reports the start to the `onDidStart` closure when no trip to the callback queue asked the
    /// delegate for the request (no delegate, or one that leaves `willSend` and `didStart` to the protocol's
    /// defaults); otherwise that trip reported it.
    private func emitDidStart() {
        guard let onDidStart = callbacks.onDidStart else { return }
        emit(.didStart, heardElsewhere: true) { connection, id in
            connection.callDelegate(.didStart) { $0.connection(connection, didStart: id) }
            onDidStart(id)
        }
    }

    /// Runs an event on the callback queue, unless the request has ended by then. An event that
    /// only calls the delegate's `methods` (`heardElsewhere` false) makes no trip when the delegate
    /// leaves them all to the protocol's defaults, or there is no delegate.
    func emit(_ methods: DelegateMethods, heardElsewhere: Bool = false, _ event: @escaping @Sendable (HTTPConnection, RequestID) -> Void) {
        guard let connection, heardElsewhere || connection.delegate(implementingAnyOf: methods) != nil else { return }
        let id = self.id
        queuedEvents.store(true, ordering: .releasing)
        callbackQueue.async { [self] in
            guard !terminalDelivered.load(ordering: .acquiring) else { return }
            event(connection, id)
        }
    }

    /// Runs `work` (the delegate, asked a question) on the callback queue and waits for its
    /// answer. For a request that runs in its caller's task, an interruption ends the wait with
    /// `nil` (the request has ended: its caller must not wait for a slow delegate); `work` still
    /// runs, and its answer is dropped.
    func onCallbackQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T? {
        guard let interruption else {
            return await withCheckedContinuation { continuation in
                callbackQueue.async { continuation.resume(returning: work()) }
            }
        }
        let answer = AwaitedValue<T?>()
        callbackQueue.async { answer.fill(work()) }
        return await interruption.whileWaiting({ await answer.take() }, stop: { answer.fill(nil) })
    }
}

/// How a request refers to its connection: strongly (managed: it keeps the connection alive
/// until it ends) or weakly (unmanaged: it dies with the connection).
enum ConnectionReference: Sendable {
    case strong(HTTPConnection)
    case weakly(WeakConnection)

    static func weak(_ connection: HTTPConnection) -> ConnectionReference { .weakly(WeakConnection(value: connection)) }

    var connection: HTTPConnection? {
        switch self {
        case .strong(let connection): connection
        case .weakly(let box): box.value
        }
    }

    struct WeakConnection: Sendable {
        weak var value: HTTPConnection?
    }
}

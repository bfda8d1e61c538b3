import Foundation
import Synchronization

/// One started request: runs it through the pipeline and delivers its events.
///
/// The state machine guarantees exactly one terminal outcome whatever races happen between
/// completion, `cancel` from many threads, and the release of an unmanaged request's connection.
/// Whoever moves the state to `finished` first delivers; everyone else does nothing.
final class RequestTask: Sendable {
    private enum State {
        case created
        case running(Task<Void, Never>)
        case finished
    }

    /// How the task refers to its connection: strongly (managed: it keeps the connection alive
    /// until it ends) or weakly (unmanaged: it dies with the connection).
    private enum ConnectionReference: Sendable {
        case strong(HTTPConnection)
        case weak(WeakConnection)

        var connection: HTTPConnection? {
            switch self {
            case .strong(let connection): connection
            case .weak(let box): box.value
            }
        }
    }

    private struct WeakConnection: Sendable {
        weak var value: HTTPConnection?
    }

    let id: RequestID
    private let request: HTTPRequest
    private let pipeline: RequestPipeline
    private let callbackQueue: DispatchQueue
    private let callbacks: RequestCallbacks
    private let reference: Mutex<ConnectionReference?>
    private let state = Mutex<State>(.created)
    /// Set on the callback queue when the terminal callback runs; later events are dropped.
    private let terminalDelivered = Atomic<Bool>(false)

    init(id: RequestID, request: HTTPRequest, connection: HTTPConnection, lifetime: HTTPRequest.Lifetime,
         callbacks: RequestCallbacks) {
        self.id = id
        self.request = request
        self.pipeline = connection.pipeline
        self.callbackQueue = connection.callbackQueue
        self.callbacks = callbacks
        self.reference = Mutex(lifetime == .managed ? .strong(connection) : .weak(WeakConnection(value: connection)))
    }

    private var connection: HTTPConnection? { reference.withLock { $0?.connection } }

    /// Starts running the request on a new Swift task.
    func launch() {
        let task = Task { await self.run() }
        let started = state.withLock { state -> Bool in
            guard case .created = state else { return false }
            state = .running(task)
            return true
        }
        if !started { task.cancel() }
    }

    /// Cancels the request.
    /// - Parameter notify: whether the cancel callback is delivered; `false` when the connection
    ///   of an unmanaged request went away (an `async` caller is still resumed with `.cancelled`).
    func cancel(notify: Bool) {
        guard let task = transitionToFinished() else { return }
        task?.cancel()
        conclude(.failure(.cancelled), notify: notify)
    }

    // MARK: - Running

    private func run() async {
        guard let (plan, validation, hasDelegate) = await prepare() else { return }
        emitDidStart(delegate: hasDelegate)
        let context = RequestContext(id: id, plan: plan, observer: RequestObserver(task: self, observesBody: hasDelegate))
        do {
            let response = try await pipeline.send(plan.transportRequest, context: context)
            guard validation.isAcceptable(response) else {
                return finish(.failure(.unacceptableStatus(response)))
            }
            finish(.success(response))
        } catch {
            finish(.failure(error))
        }
    }

    /// Resolves the request against its connection. The connection is held only here, so that
    /// an unmanaged request never keeps its connection alive while it waits on the network.
    private func prepare() async -> (RequestPlan, ResponseValidation, Bool)? {
        guard let connection else {
            cancel(notify: false)
            return nil
        }
        let delegate = connection.delegate
        let settings = connection.currentSettings()
        var request = self.request
        if let delegate {
            let (id, original) = (self.id, request)
            request = await onCallbackQueue { delegate.connection(connection, willSend: original, id: id) }
        }
        do {
            return (try RequestPlan(request, connection: connection, settings: settings), settings.validation, delegate != nil)
        } catch {
            finish(.failure(error))
            return nil
        }
    }

    private func finish(_ result: Result<HTTPResponse, HTTPConnectionError>) {
        guard transitionToFinished() != nil else { return }
        conclude(result, notify: true)
    }

    /// Moves to `finished`; returns the running task (possibly `nil` if never launched) when this
    /// call made the move, `nil` when the request had already finished.
    private func transitionToFinished() -> Task<Void, Never>?? {
        state.withLock { state -> Task<Void, Never>?? in
            switch state {
            case .finished: return nil
            case .created: state = .finished; return .some(nil)
            case .running(let task): state = .finished; return .some(task)
            }
        }
    }

    /// Delivers the terminal outcome: resumes an `async` caller at once, then the delegate and
    /// closures on the callback queue. Runs once per task (guarded by `transitionToFinished`).
    private func conclude(_ result: Result<HTTPResponse, HTTPConnectionError>, notify: Bool) {
        let reference = self.reference.withLock { current -> ConnectionReference? in
            defer { current = nil }  // a finished request no longer keeps its connection alive
            return current
        }
        let connection = reference?.connection
        connection?.unregister(id)
        callbacks.continuation?.resume(returning: result)
        guard notify, let connection else { return }
        let callbacks = self.callbacks
        let id = self.id
        callbackQueue.async { [self] in
            terminalDelivered.store(true, ordering: .releasing)
            let delegate = connection.delegate
            switch result {
            case .success(let response):
                delegate?.connection(connection, request: id, didFinishWith: response)
                callbacks.onSuccess?(response)
            case .failure(let error) where error == .cancelled:
                delegate?.connection(connection, didCancel: id)
                callbacks.onError?(error)
            case .failure(let error):
                delegate?.connection(connection, request: id, didFailWith: error)
                callbacks.onError?(error)
            }
        }
    }

    // MARK: - Non-terminal events

    private func emitDidStart(delegate hasDelegate: Bool) {
        guard hasDelegate || callbacks.onDidStart != nil else { return }
        let onDidStart = callbacks.onDidStart
        emit { connection, id in
            connection.delegate?.connection(connection, didStart: id)
            onDidStart?(id)
        }
    }

    /// Runs an event on the callback queue, unless the request has ended by then.
    func emit(_ event: @escaping @Sendable (HTTPConnection, RequestID) -> Void) {
        guard let connection else { return }
        let id = self.id
        callbackQueue.async { [self] in
            guard !terminalDelivered.load(ordering: .acquiring) else { return }
            event(connection, id)
        }
    }

    private func onCallbackQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            callbackQueue.async { continuation.resume(returning: work()) }
        }
    }
}

/// Forwards a transport's progress on one request to the connection's delegate.
struct RequestObserver: TransportObserver {
    let task: RequestTask
    let observesBody: Bool

    func transportDidReceiveHead(_ head: HTTPResponse.Head) {
        guard observesBody else { return }
        task.emit { connection, id in
            connection.delegate?.connection(connection, request: id, didReceiveResponseHead: head)
        }
    }

    func transportDidReceiveBody(_ data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
        task.emit { connection, id in
            connection.delegate?.connection(connection, request: id, didReceiveData: data,
                                            bytesSoFar: bytesSoFar, expectedTotal: expectedTotal)
        }
    }
}

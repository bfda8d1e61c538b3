import Courier
import Foundation
import Synchronization

/// Counts every callback of every request of a terminal-callback conversation: the delegate's
/// calls by request id, and what the user's own code heard (closures, the completion, the `async`
/// result) by the request's index in the conversation. It notes each callback that ran off the
/// connection's callback queue, and each that came after its request's terminal callback.
///
/// Each request carries its index in the ``indexHeader`` field, so `willSend` ties an id the test
/// never saw (an `async` request's) to its index.
final class OnceLedger: HTTPConnectionDelegate {
    /// The header field that carries a request's index in its conversation.
    static let indexHeader = "X-Once-Index"

    /// How a request ended, as the callback that ended it said.
    enum Ending: Hashable, Sendable, CustomStringConvertible {
        /// A response with this status (and, when the user's code heard it, the body it expected).
        case answered(Int)
        /// An error of this kind (``HTTPConnectionError/kindName``).
        case failed(String)

        /// The ending of a user-side result: a response whose body is not `expectedBody` is a
        /// failure named after that.
        init(_ result: Result<HTTPResponse, HTTPConnectionError>, expectedBody: Data) {
            switch result {
            case .success(let response) where response.body == expectedBody: self = .answered(response.status.code)
            case .success(let response): self = .failed("wrong body: \(String(decoding: response.body, as: UTF8.self))")
            case .failure(let error): self = .failed(error.kindName)
            }
        }

        var description: String {
            switch self {
            case .answered(let code): "\(code)"
            case .failed(let kind): kind
            }
        }
    }

    private struct State {
        var delegateEndings: [RequestID: [Ending]] = [:]
        var userEndings: [Int: [Ending]] = [:]
        var indexOfID: [RequestID: Int] = [:]
        var firstEnd: [Int: ContinuousClock.Instant] = [:]
        var firstDelegateEnd: [RequestID: ContinuousClock.Instant] = [:]
        var heldHeads: Set<Int> = []
        var late: [String] = []
        var offQueue: [String] = []
    }

    private let state = Mutex(State())
    private let queueKey = DispatchSpecificKey<Bool>()

    /// Marks `queue` as the one every delegate call and closure must run on.
    func expect(queue: DispatchQueue) {
        queue.setSpecific(key: queueKey, value: true)
    }

    /// The delegate's terminal callbacks for `id`, in order.
    func delegateEndings(_ id: RequestID) -> [Ending] { state.withLock { $0.delegateEndings[id] ?? [] } }

    /// What the user's code of request `index` heard as its end, in order.
    func userEndings(_ index: Int) -> [Ending] { state.withLock { $0.userEndings[index] ?? [] } }

    /// Whether request `index` (with id `id`, if known) has had a terminal callback of any kind.
    func hasEnded(_ index: Int, id: RequestID?) -> Bool {
        state.withLock { state in
            !(state.userEndings[index] ?? []).isEmpty || id.map { !(state.delegateEndings[$0] ?? []).isEmpty } == true
        }
    }

    /// Makes the delegate take 1 ms over request `index`'s response head, so that its terminal
    /// callback waits on the callback queue that long after the request ended: a cancel racing
    /// the answer then often lands between the end and its callback.
    func holdHead(of index: Int) {
        _ = state.withLock { $0.heldHeads.insert(index) }
    }

    /// When request `index` (with id `id`, if known) first had a terminal callback.
    func endedAt(_ index: Int, id: RequestID?) -> ContinuousClock.Instant? {
        state.withLock { state in
            [state.firstEnd[index], id.flatMap { state.firstDelegateEnd[$0] }].compactMap { $0 }.min()
        }
    }

    /// Whether `willSend` has tied an id to request `index`.
    func hasSeen(_ index: Int) -> Bool {
        state.withLock { $0.indexOfID.values.contains(index) }
    }

    /// The ids the delegate heard a terminal callback for, with the index `willSend` tied them to.
    var delegateEndedIDs: [RequestID: Int?] {
        state.withLock { state in
            Dictionary(uniqueKeysWithValues: state.delegateEndings.keys.map { ($0, state.indexOfID[$0]) })
        }
    }

    /// Callbacks that came after their request's terminal callback.
    var lateCallbacks: [String] { state.withLock { $0.late } }

    /// Callbacks that ran off the callback queue.
    var offQueueCallbacks: [String] { state.withLock { $0.offQueue } }

    // MARK: the user's side

    /// Records the end request `index` heard through its closures or completion (`onQueue`: they
    /// must run on the callback queue) or its `async` result (`onQueue` false: no queue promised).
    func userEnded(_ index: Int, _ ending: Ending, onQueue: Bool) {
        let offQueue = onQueue && DispatchQueue.getSpecific(key: queueKey) != true
        state.withLock { state in
            if offQueue { state.offQueue.append("end of request \(index)") }
            state.userEndings[index, default: []].append(ending)
            if state.firstEnd[index] == nil { state.firstEnd[index] = .now }
        }
    }

    /// Records request `index`'s `onDidStart` closure, which must not follow its end.
    func userStarted(_ index: Int) {
        let offQueue = DispatchQueue.getSpecific(key: queueKey) != true
        state.withLock { state in
            if offQueue { state.offQueue.append("onDidStart of request \(index)") }
            if !(state.userEndings[index] ?? []).isEmpty { state.late.append("onDidStart of request \(index) after its end") }
        }
    }

    // MARK: the delegate

    /// Records a delegate call for `id` (a terminal one with its `ending`): off the queue, or
    /// after the request's terminal call, it is noted as such.
    private func heard(_ what: String, _ id: RequestID, ending: Ending? = nil) {
        let offQueue = DispatchQueue.getSpecific(key: queueKey) != true
        state.withLock { state in
            if offQueue { state.offQueue.append("\(what) of \(id)") }
            if !(state.delegateEndings[id] ?? []).isEmpty { state.late.append("\(what) of \(id) after its end") }
            if let ending {
                state.delegateEndings[id, default: []].append(ending)
                if state.firstDelegateEnd[id] == nil { state.firstDelegateEnd[id] = .now }
            }
        }
    }

    func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest {
        if let index = request.headers[Self.indexHeader].flatMap(Int.init) {
            state.withLock { $0.indexOfID[id] = index }
        }
        heard("willSend", id)
        return request
    }

    func connection(_ connection: HTTPConnection, didStart id: RequestID) { heard("didStart", id) }

    func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveResponseHead head: HTTPResponse.Head) {
        heard("didReceiveResponseHead", id)
        if state.withLock({ state in state.indexOfID[id].map { state.heldHeads.contains($0) } ?? false }) { usleep(1_000) }
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveData data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
        heard("didReceiveData", id)
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, willRetry attempt: Int, after delay: Duration, reason: HTTPConnectionError) {
        heard("willRetry", id)
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didCollect metrics: RequestMetrics) {
        heard("didCollect", id)
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
        heard("didFinishWith", id, ending: .answered(response.status.code))
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError) {
        heard("didFailWith", id, ending: .failed(error.kindName))
    }

    func connection(_ connection: HTTPConnection, didCancel id: RequestID) {
        heard("didCancel", id, ending: .failed(HTTPConnectionError.cancelled.kindName))
    }
}

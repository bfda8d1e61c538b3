import Courier
import Foundation
import Synchronization

/// Records every callback a request delivers, through its closures and the delegate.
final class EventRecorder: HTTPConnectionDelegate {
    enum Event: Equatable, Sendable, CustomStringConvertible {
        case willSend(RequestID)
        case didStart(RequestID)
        case head(RequestID, Int)
        case data(RequestID, Int64, Int64?)
        case finish(RequestID, Int)
        case fail(RequestID, String)
        case cancel(RequestID)
        case closureStart(RequestID)
        case closureSuccess(Int)
        case closureError(String)

        var isTerminal: Bool {
            switch self {
            case .finish, .fail, .cancel: true
            default: false
            }
        }

        var isClosureTerminal: Bool {
            switch self {
            case .closureSuccess, .closureError: true
            default: false
            }
        }

        var description: String {
            switch self {
            case .willSend(let id): "willSend \(id)"
            case .didStart(let id): "didStart \(id)"
            case .head(let id, let code): "head \(id) \(code)"
            case .data(let id, let soFar, let total): "data \(id) \(soFar)/\(total.map(String.init) ?? "?")"
            case .finish(let id, let code): "finish \(id) \(code)"
            case .fail(let id, let kind): "fail \(id) \(kind)"
            case .cancel(let id): "cancel \(id)"
            case .closureStart(let id): "onDidStart \(id)"
            case .closureSuccess(let code): "onSuccess \(code)"
            case .closureError(let kind): "onError \(kind)"
            }
        }
    }

    private let recorded = Mutex<[Event]>([])
    /// Headers added by `willSend`.
    let addedHeaders: HTTPHeaders
    /// Whether every callback arrived on the expected queue.
    private let queueKey = DispatchSpecificKey<String>()
    private let wrongQueue = Atomic<Int>(0)

    init(addedHeaders: HTTPHeaders = [:]) {
        self.addedHeaders = addedHeaders
    }

    var events: [Event] { recorded.withLock { $0 } }
    var terminalCount: Int { events.filter(\.isTerminal).count }
    var closureTerminalCount: Int { events.filter(\.isClosureTerminal).count }
    var callbacksOffQueue: Int { wrongQueue.load(ordering: .relaxed) }

    /// Marks `queue` so callbacks can check they run on it.
    func expect(queue: DispatchQueue) {
        queue.setSpecific(key: queueKey, value: "callbacks")
    }

    func record(_ event: Event) {
        if DispatchQueue.getSpecific(key: queueKey) != "callbacks" { wrongQueue.add(1, ordering: .relaxed) }
        recorded.withLock { $0.append(event) }
    }

    // MARK: closures

    func onDidStart(_ id: RequestID) { record(.closureStart(id)) }
    func onSuccess(_ response: HTTPResponse) { record(.closureSuccess(response.status.code)) }
    func onError(_ error: HTTPConnectionError) { record(.closureError(error.kindName)) }

    // MARK: delegate

    func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest {
        record(.willSend(id))
        var request = request
        request.headers.merge(addedHeaders)
        return request
    }

    func connection(_ connection: HTTPConnection, didStart id: RequestID) { record(.didStart(id)) }

    func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveResponseHead head: HTTPResponse.Head) {
        record(.head(id, head.status.code))
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveData data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
        record(.data(id, bytesSoFar, expectedTotal))
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
        record(.finish(id, response.status.code))
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError) {
        record(.fail(id, error.kindName))
    }

    func connection(_ connection: HTTPConnection, didCancel id: RequestID) { record(.cancel(id)) }
}

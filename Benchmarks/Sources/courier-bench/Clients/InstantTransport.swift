import Courier
import Foundation

/// A transport that answers every request at once, in memory, with a 200 response carrying the
/// small JSON file (and only `Content-Type` and `Content-Length`): no socket and no event loop, so
/// that a request's CPU is the pipeline's own (``ClientKind/pipelineAlone``). It cannot be
/// interrupted, so an `async` caller's request runs on a task of its own, as on
/// `URLSessionTransport`: one at a time, that task and the hand-back to the caller are part of
/// the cost (the driver pins these workers to one CPU, ``WorkerCommand``, so that the hand-back
/// wakes no other CPU); the transport observer's callbacks are not.
struct InstantTransport: Transport {
    /// The small JSON file's bytes.
    private let body = Data(StaticFiles.smallJSON.utf8)
    /// The answer's fields, made once so that building them is not counted as the pipeline's.
    private let headers: HTTPHeaders

    init() {
        headers = ["Content-Type": "application/json", "Content-Length": String(body.count)]
    }

    func send(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPResponse {
        HTTPResponse(status: .init(code: 200), headers: headers, body: body, url: request.url)
    }
}

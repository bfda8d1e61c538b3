import Courier
import Foundation

/// A transport that answers every request at once, in memory, with the 200 response the bench
/// server gives for the small JSON file: no socket, no event loop, no thread hand-off, so that a
/// request's CPU is the pipeline's own (``ClientKind/pipelineAlone``).
struct InstantTransport: Transport {
    /// The small JSON file's bytes.
    private let body = Data(StaticFiles.smallJSON.utf8)

    func send(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPResponse {
        HTTPResponse(status: .init(code: 200), headers: ["Content-Type": "application/json", "Content-Length": String(body.count)],
                     body: body, url: request.url)
    }
}

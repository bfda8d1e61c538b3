import Courier
import Foundation

/// A Courier transport called directly, `transport.send(TransportRequest, observer:)`, with no
/// pipeline above it: the floor that the pipeline overhead is measured from.
final class CourierBareTransportClient: BenchClient {
    private let transport: any Transport

    /// Creates the transport the job names (native or URLSession).
    init(job: WorkerJob) {
        transport = CourierClient.makeTransport(job)
    }

    func send(_ request: BenchRequest) async throws -> BenchResponse {
        var headers = HTTPHeaders(request.headers)
        if !request.body.isEmpty { headers.set("application/json", for: "Content-Type") }
        let message = TransportRequest(method: HTTPRequest.Method(rawValue: request.method), url: request.url,
                                       headers: headers, body: request.body)
        let response = try await transport.send(message, observer: IgnoringTransportObserver())
        return BenchResponse(status: response.status.code, bodyBytes: response.body.count,
                             body: request.keepsBody ? response.body : nil, tls: response.headers["X-TLS"],
                             serverProtocol: response.headers["X-Protocol"])
    }

    func shutdown() async {
        (transport as? NativeTransport)?.shutdown()
    }
}

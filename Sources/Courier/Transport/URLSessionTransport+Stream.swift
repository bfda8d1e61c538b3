import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionTransport {
    /// Sends the request with a URLSession data task and returns at the response head; the body
    /// follows through the returned stream, from the task's `didReceive data` callbacks.
    ///
    /// **No backpressure:** FoundationNetworking on Linux cannot pause a data task in the middle
    /// of its body (a suspended task is ended as cancelled), so a reader slower than the network
    /// lets the chunks pile up in memory; the memory stays bounded only when the reader keeps up.
    /// Use ``NativeTransport`` for large bodies and slow readers. Stopping early cancels the
    /// task. Request bodies are as for
    /// ``send(_:observer:)``: in memory or a file; a stream or a multipart form fails with
    /// ``HTTPConnectionError/unsupportedByTransport``.
    public func stream(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPStreamingResponse {
        let response = try await run(request, observer: observer, stream: BodyStreamBuffer())
        guard let body = response.bodyStream else {
            // Ended before a head could be handed out with a body (an authentication challenge).
            return HTTPStreamingResponse(head: response.head, body: HTTPBodyStream(arrived: response.body))
        }
        return HTTPStreamingResponse(head: response.head, body: body)
    }
}

import Foundation

/// Reads a streamed body for a closure caller: hands each chunk to `onChunk` on the callback
/// queue and waits until the closure returns before taking the next one, so a slow closure
/// slows the connection (at most the 256 KiB of ``BodyStreamBuffer`` wait meanwhile).
struct ChunkReader: BodyConsumer {
    let onChunk: @Sendable (Data) -> Void

    var runsOffLoop: Bool { false }

    func consume(_ response: HTTPResponse, body: HTTPBodyStream, events: BodyConsumerEvents) async -> Result<HTTPResponse, HTTPConnectionError> {
        do throws(HTTPConnectionError) {
            for try await chunk in body {
                await events.deliver { onChunk(chunk) }
            }
            return .success(response)
        } catch {
            return .failure(error)
        }
    }
}

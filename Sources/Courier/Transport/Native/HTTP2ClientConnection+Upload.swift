import CourierHTTP2
import CourierWire

/// Request bodies that are not in memory (``NativeUpload``: files, streams, multipart forms)
/// over HTTP/2: read one chunk at a time into the stream, only while the machine holds less
/// than ``bufferedBodyLimit`` of it waiting for flow-control window, so the server's windows are
/// the back-pressure. A stream with nothing to give wakes the connection when it has.
extension HTTP2ClientConnection {
    /// The most body octets of one stream waiting in the machine for window before the next
    /// chunk is read.
    static let bufferedBodyLimit = 2 * NativeUpload.chunkSize

    /// Reads chunks of the stream's upload into the machine while its window allows.
    func pumpUpload(_ id: UInt32) {
        guard !isClosed, uploading.contains(id), let stream = streams[id], let upload = stream.exchange.upload else { return }
        let exchange = stream.exchange
        while let buffered = machine.bufferedBodyCount(id), buffered < Self.bufferedBodyLimit {
            switch upload.refill(wake: uploadWaker(for: exchange, stream: id)) {
            case .ready:
                let chunk = Array(upload.pending[upload.pendingOffset...])
                upload.pendingOffset = upload.pending.count
                perform(machine.sendBody(streamID: id, chunk, endStream: false))
                streams[id]?.deadline = EventLoop.now() &+ exchange.timeout
                reportUploadProgress(upload, exchange: exchange, final: false)
            case .waiting:
                return
            case .finished:
                uploading.remove(id)
                perform(machine.sendBody(streamID: id, [], endStream: true))
                reportUploadProgress(upload, exchange: exchange, final: true)
                return
            case .failed(let error):
                uploading.remove(id)
                reset(id, with: error)
                return
            }
            guard !isClosed, uploading.contains(id) else { return }
        }
    }

    private func reportUploadProgress(_ upload: NativeUpload, exchange: NativeExchange, final: Bool) {
        guard let sent = upload.progressDue(at: EventLoop.now(), final: final) else { return }
        exchange.observer.transportDidSendBody(bytesSent: sent, expectedTotal: upload.length)
    }

    /// The callback a stream's buffer runs (on the producer's thread) when it has bytes again.
    private func uploadWaker(for exchange: NativeExchange, stream id: UInt32) -> @Sendable () -> Void {
        guard let selfBound else { return {} }
        let waiting = LoopBound(exchange, on: loop)
        return {
            _ = selfBound.loop.execute {
                let connection = selfBound.value
                guard connection.streams[id]?.exchange === waiting.value else { return }
                connection.pumpUpload(id)
                connection.flush()
            }
        }
    }
}

import CourierTLS
import CourierWire
import Foundation

/// Writing a body that is not in memory (``NativeUpload``): the head first, then one framed
/// chunk at a time, the next one read only when the socket took the last. The socket's
/// writability is the back-pressure; a stream with nothing to give parks the write side (the
/// connection keeps reading, so an early response still ends the request) until its buffer
/// wakes the connection.
extension HTTP1ClientConnection {
    /// Starts writing the current request: its head, then its body.
    func startUpload() {
        if let tls, let exchange {
            if let failure = exchange.wire.withUnsafeBytes({ encrypt($0, with: tls) }) {
                perform(machine.close(failing: NativeErrors.tls(failure)))
                return
            }
            takeCiphertext()
        }
        pumpUpload()
    }

    /// Writes what is pending and refills from the body while the socket takes bytes, up to
    /// ``NativeUpload/writeBudget`` bytes per call: then the loop turns, so that a response
    /// arriving during a long upload is read promptly, and the upload goes on in the next turn
    /// (a job on the loop, not the socket's writability: Linux reports a TCP socket writable only
    /// once its free send space is at least half of what it holds queued, while a write succeeds
    /// with any free space, so waiting for writability after a spent budget idled about 3.5 ms
    /// per MiB against nginx, with no write ever refused).
    func pumpUpload() {
        guard let socket, let exchange, let upload = exchange.upload else { return }
        var budget = NativeUpload.writeBudget
        while machine.isWriting {
            switch writePending(socket, exchange: exchange, upload: upload) {
            case .success(.bytes(0)):
                break
            case .success(.bytes(let count)):
                budget -= count
                if budget <= 0 {
                    advance(by: count)
                    accountPlain(count, exchange: exchange, upload: upload)
                    setInterest(.readable)
                    uploadWaker(for: exchange)()
                    return
                }
                advance(by: count)
                accountPlain(count, exchange: exchange, upload: upload)
                continue
            case .success(.wouldBlock):
                setInterest([.readable, .writable])
                return
            case .success(.closed):
                writeFailed(nil)
                return
            case .failure(let error):
                writeFailed(error)
                return
            }
            if machine.writesHeadOnly {
                // The head is out; the body waits for `100 Continue` (``sendHeldBody()``).
                finishWriting()
                return
            }
            reportUploadProgress(upload, exchange: exchange, final: false)
            switch upload.refill(wake: uploadWaker(for: exchange)) {
            case .ready:
                if let tls {
                    let failure = upload.pending.withUnsafeBytes { encrypt($0, with: tls) }
                    upload.pendingOffset = upload.pending.count
                    if let failure {
                        perform(machine.close(failing: NativeErrors.tls(failure)))
                        return
                    }
                    takeCiphertext()
                }
            case .waiting:
                setInterest(.readable)
                return
            case .finished:
                reportUploadProgress(upload, exchange: exchange, final: true)
                finishWriting()
                return
            case .failed(let error):
                perform(machine.close(failing: error))
                return
            }
        }
    }

    /// Moves the chunk's offset by what a plain write took of it (a write takes either head or
    /// chunk bytes, never both).
    private func accountPlain(_ count: Int, exchange: NativeExchange, upload: NativeUpload) {
        guard tls == nil, machine.bytesSent > exchange.wire.count else { return }
        upload.pendingOffset += min(count, machine.bytesSent - exchange.wire.count, upload.pending.count - upload.pendingOffset)
    }

    /// One write of what is pending: the ciphertext, or (plain) the rest of the head, then the
    /// current chunk. `.bytes(0)` when nothing is pending.
    private func writePending(_ socket: Socket, exchange: NativeExchange, upload: NativeUpload) -> Result<Socket.IOResult, SocketError> {
        if tls != nil {
            guard cipherOffset < cipherOut.count else { return .success(.bytes(0)) }
            let offset = cipherOffset
            return cipherOut.withUnsafeBytes { all in
                Result { () throws(SocketError) in try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
            }
        }
        let sent = machine.bytesSent
        if sent < exchange.wire.count {
            return exchange.wire.withUnsafeBytes { all in
                Result { () throws(SocketError) in try socket.write(UnsafeRawBufferPointer(rebasing: all[sent...])) }
            }
        }
        guard upload.hasPending else { return .success(.bytes(0)) }
        let offset = upload.pendingOffset
        return upload.pending.withUnsafeBytes { all in
            Result { () throws(SocketError) in try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
        }
    }

    /// Tells the observer how far the body got, throttled (``NativeUpload/progressDue(at:final:)``).
    private func reportUploadProgress(_ upload: NativeUpload, exchange: NativeExchange, final: Bool) {
        guard let sent = upload.progressDue(at: EventLoop.now(), final: final) else { return }
        exchange.observer.transportDidSendBody(bytesSent: sent, expectedTotal: upload.length)
    }

    /// The callback a stream's buffer runs (on the producer's thread) when it has bytes again,
    /// and the pump itself when its budget is spent: resumes writing on the loop (in its next
    /// turn, when called there) if the exchange is still this connection's.
    private func uploadWaker(for exchange: NativeExchange) -> @Sendable () -> Void {
        guard let selfBound else { return {} }
        let waiting = LoopBound(exchange, on: loop)
        return {
            _ = selfBound.loop.execute {
                let connection = selfBound.value
                guard connection.exchange === waiting.value else { return }
                connection.pumpUpload()
            }
        }
    }
}

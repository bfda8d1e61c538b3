import CourierTLS
import CourierWire

extension HTTP1ClientConnection {
    /// Reads what the socket has, into the loop's shared buffer, and hands it to the machine.
    ///
    /// Reads again only when a read filled the whole buffer and the exchange goes on, so a small
    /// response costs one `read` call; level-triggered epoll reports the rest.
    func readAvailable() {
        guard let context, let socket else { return }
        while machine.isEstablished, !machine.readPaused {
            let buffer = readWindow(context.readBuffer)
            let result: Socket.IOResult
            do {
                result = try socket.read(into: buffer)
            } catch {
                perform(machine.peerClosed(error))
                return
            }
            switch result {
            case .bytes(let count):
                pool?.progress(at: EventLoop.now())
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                if tls != nil {
                    feedTLS(bytes)
                    drainPlaintext()
                } else {
                    process(bytes)
                }
                // A full buffer may mean more is waiting, unless this read finished the exchange:
                // whatever follows is unsolicited then, and the next readiness finds it.
                if count < buffer.count || exchange == nil { return }
            case .wouldBlock:
                return
            case .closed:
                if tls != nil {
                    feedTLS(nil)
                    drainPlaintext()
                    if machine.isEstablished { perform(machine.peerClosed(nil)) }
                } else {
                    perform(machine.peerClosed(nil))
                }
                return
            }
        }
    }

    /// The smallest read made for a streamed body whose reader's buffer is nearly full.
    static let minimumStreamedRead = 16 << 10

    /// The part of the loop's read buffer to read into: all of it, or, while a streamed body's
    /// reader has less room than that (``BodyStreamBuffer/room``), only that room (at least
    /// ``minimumStreamedRead``), so one 256 KiB read never overfills a slow reader's buffer.
    private func readWindow(_ whole: UnsafeMutableRawBufferPointer) -> UnsafeMutableRawBufferPointer {
        guard let room = exchange?.stream?.room, room < whole.count else { return whole }
        return UnsafeMutableRawBufferPointer(rebasing: whole[..<max(room, Self.minimumStreamedRead)])
    }

    /// The consumer of the streamed body wants more: read again (what is waiting in the socket
    /// is reported by the next readiness).
    func resumeReading() {
        perform(machine.consumerResumed(at: EventLoop.now()))
    }

    /// Decrypts every complete TLS record and processes the plaintext.
    func drainPlaintext() {
        guard let context else { return }
        while machine.isEstablished, let tls {
            let result = Result { () throws(TLSError) in try tls.readPlaintext(into: context.plainBuffer) }
            switch result {
            case .success(.bytes(let count)):
                if count == 0 { return }
                process(UnsafeRawBufferPointer(rebasing: context.plainBuffer[..<count]))
            case .success(.wantsMoreInput):
                if tls.pendingCiphertextCount > 0 {
                    takeCiphertext()
                    flush()
                }
                return
            case .success(.closed):
                perform(machine.peerClosed(nil))
                return
            case .failure(let error):
                if error == .uncleanShutdown {
                    perform(machine.peerClosed(nil))
                } else {
                    perform(machine.close(failing: NativeErrors.tls(error)))
                }
                return
            }
        }
    }

    /// Hands received (plaintext) bytes to the machine, performing its actions until it has
    /// taken them all or the request ended. A body released by `100 Continue` is written once
    /// the rest of the bytes were taken (a final answer may follow the `100` in the same read),
    /// never from inside the read: a write that fails reads the socket again.
    func process(_ bytes: UnsafeRawBufferPointer) {
        let now = EventLoop.now()
        exchange?.timeline.recordResponseStarted(at: now)
        var cursor = 0
        var release: HTTP1ConnectionStateMachine.Action?
        while true {
            let action = machine.bytesRead(bytes, cursor: &cursor, at: now)
            switch action {
            case .deliverHead, .deliverBody:
                perform(action)
                continue
            case .sendBody:
                release = action
                continue
            default:
                perform(action)
            }
            break
        }
        if let release, machine.isWriting { perform(release) }
    }
}

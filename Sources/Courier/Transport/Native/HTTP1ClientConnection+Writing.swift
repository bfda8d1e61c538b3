import CourierTLS
import CourierWire
import Foundation

extension HTTP1ClientConnection {
    /// Starts `exchange` on this idle connection: sends its request and waits for the answer.
    func execute(_ exchange: NativeExchange) {
        let now = EventLoop.now()
        self.exchange = exchange
        exchange.run(on: self, since: now)
        perform(machine.requestStarted(exchange.connectionRequest, at: now))
    }

    /// Sends the current request: through the TLS session, or straight from its wire form.
    func sendRequest() {
        if exchange?.upload != nil {
            startUpload()
            return
        }
        if let tls, let exchange {
            var failure = exchange.wire.withUnsafeBytes { encrypt($0, with: tls) }
            if failure == nil && !exchange.bodyInlined && !exchange.request.body.isEmpty && !machine.writesHeadOnly {
                failure = exchange.request.body.withUnsafeBytes { encrypt($0, with: tls) }
            }
            if let failure {
                perform(machine.close(failing: NativeErrors.tls(failure)))
                return
            }
            takeCiphertext()
        }
        flush()
    }

    /// Writes the body the machine held for `100 Continue`: a body not in memory goes on from
    /// its head, one in memory is encrypted (TLS) or written from where the head ended.
    func sendHeldBody() {
        guard let exchange else { return }
        if exchange.upload != nil {
            pumpUpload()
            return
        }
        if let tls, !exchange.request.body.isEmpty {
            if let failure = exchange.request.body.withUnsafeBytes({ encrypt($0, with: tls) }) {
                perform(machine.close(failing: NativeErrors.tls(failure)))
                return
            }
            takeCiphertext()
        }
        flush()
    }

    /// Hands `plaintext` to the TLS session to encrypt (the ciphertext is taken afterwards).
    /// - Returns: the session's error, if it refused the bytes.
    func encrypt(_ plaintext: UnsafeRawBufferPointer, with tls: TLSClientSession) -> TLSError? {
        do throws(TLSError) {
            try tls.writePlaintext(plaintext)
            return nil
        } catch {
            return error
        }
    }

    /// Moves the TLS session's pending ciphertext into the write buffer (wrapped in the proxy's
    /// TLS session when the origin's runs inside one).
    func takeCiphertext() {
        guard let tls, let bytes = wrappedForProxy(tls.takeCiphertext()) else { return }
        onlyHandshakePending = false
        if cipherOut.isEmpty {
            cipherOut = bytes
            cipherOffset = 0
        } else {
            cipherOut.append(contentsOf: bytes)
        }
    }

    /// Writes as much of the pending request (or ciphertext) as the socket takes now.
    func flush() {
        if exchange?.upload != nil && machine.isWriting {
            pumpUpload()
            return
        }
        guard let socket else { return }
        while true {
            let attempt = writeOnce(socket)
            switch attempt {
            case .success(.bytes(let count)):
                if count == 0 {
                    finishWriting()
                    return
                }
                advance(by: count)
            case .success(.wouldBlock):
                setInterest(machine.readPaused ? .writable : [.readable, .writable])
                return
            case .success(.closed):
                writeFailed(nil)
                return
            case .failure(let error):
                writeFailed(error)
                return
            }
        }
    }

    /// One write system call over what is pending; `.bytes(0)` when nothing is. A plain
    /// connection writes the request from the machine's count of bytes sent: the wire form
    /// (head, and the body when inlined) first, then the separate body, in one `writev` while
    /// both are pending.
    private func writeOnce(_ socket: Socket) -> Result<Socket.IOResult, SocketError> {
        if tls != nil {
            guard cipherOffset < cipherOut.count else { return .success(.bytes(0)) }
            let offset = cipherOffset
            return cipherOut.withUnsafeBytes { all in
                Result { () throws(SocketError) in try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
            }
        }
        guard let exchange, machine.isWriting else { return .success(.bytes(0)) }
        let body = exchange.request.body
        // The body of a request that expects `100 Continue` waits until the machine releases it.
        let separateBody = !exchange.bodyInlined && !body.isEmpty && !machine.writesHeadOnly
        let sent = machine.bytesSent
        if sent < exchange.wire.count {
            return exchange.wire.withUnsafeBytes { (all) -> Result<Socket.IOResult, SocketError> in
                let head = UnsafeRawBufferPointer(rebasing: all[sent...])
                if !separateBody {
                    return Result { () throws(SocketError) in try socket.write(head) }
                }
                return body.withUnsafeBytes { bodyBytes in
                    Result { () throws(SocketError) in try socket.writev([head, bodyBytes]) }
                }
            }
        }
        let offset = sent - exchange.wire.count
        guard separateBody, offset < body.count else { return .success(.bytes(0)) }
        return body.withUnsafeBytes { all in
            Result { () throws(SocketError) in try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
        }
    }

    /// Accounts for `count` bytes written.
    func advance(by count: Int) {
        machine.bytesWritten(count, at: EventLoop.now())
        if tls != nil { cipherOffset += count }
    }

    /// Everything pending was written.
    func finishWriting() {
        if tls != nil {
            cipherOut.removeAll(keepingCapacity: cipherOut.capacity <= 65_536)
            cipherOffset = 0
        }
        perform(machine.allWritten(at: EventLoop.now()))
    }

    /// The peer stopped taking bytes (`EPIPE`, a reset). Whatever it answered before is still
    /// read; without an answer the request failed. During the TLS handshake the handshake
    /// failed, as when a read meets the close first (``handshakeBroke(_:withProxy:)``).
    func writeFailed(_ error: SocketError?) {
        cipherOut = []
        cipherOffset = 0
        if case .handshaking = machine.state {
            perform(machine.establishmentFailed(handshakeBroke(error, withProxy: handshakesWithProxy)))
            return
        }
        perform(machine.writeFailed(error))
    }

    // MARK: - Timeouts

    /// Makes sure the watchdog fires no later than `deadline`.
    func armWatchdog(deadline: UInt64) {
        if watchdogDeadline != 0 && watchdogDeadline <= deadline { return }
        watchdog?.cancel()
        guard let selfBound else { return }
        let now = EventLoop.now()
        watchdogDeadline = deadline
        let delay = Int64(clamping: deadline &- min(now, deadline))
        watchdog = loop.scheduleTimer(after: .nanoseconds(delay)) {
            selfBound.value.watchdogFired()
        }
    }

    /// Checks for a connect that takes too long or an exchange gone silent.
    private func watchdogFired() {
        watchdog = nil
        watchdogDeadline = 0
        if machine.isIdle { return }
        perform(machine.timerFired(at: EventLoop.now()))
    }
}

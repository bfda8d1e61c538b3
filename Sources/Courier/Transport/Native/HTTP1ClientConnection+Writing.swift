import CourierTLS
import CourierWire
import Foundation

extension HTTP1ClientConnection {
    /// Starts `exchange` on this idle connection: sends its request and waits for the answer.
    func execute(_ exchange: NativeExchange) {
        let now = EventLoop.now()
        self.exchange = exchange
        exchange.run(on: self, since: now)
        beginResponse()
        writeOffset = 0
        bodyOffset = 0
        bytesSent = 0
        writeComplete = false
        writeClosed = false
        lastProgress = now
        armWatchdog(deadline: now &+ exchange.timeout)
        if let tls {
            var failure: TLSError?
            exchange.wire.withUnsafeBytes { wire in
                if case .failure(let error) = Result(catching: { () throws(TLSError) in try tls.writePlaintext(wire) }) { failure = error }
            }
            if failure == nil && !exchange.bodyInlined && !exchange.request.body.isEmpty {
                exchange.request.body.withUnsafeBytes { body in
                    if case .failure(let error) = Result(catching: { () throws(TLSError) in try tls.writePlaintext(body) }) { failure = error }
                }
            }
            if let failure {
                fail(NativeErrors.tls(failure))
                return
            }
            takeCiphertext()
        }
        flush()
    }

    /// Takes over a request that a caller sent directly on this idle connection.
    func executeAdopted(_ exchange: NativeExchange, request: NativeDirectRequest) {
        self.exchange = exchange
        // The caller took the connection as soon as it made the request, and wrote it at once.
        exchange.run(on: self, since: exchange.timeline.created)
        if request.written == exchange.wire.count { exchange.timeline.recordRequestWritten(at: request.startedAt) }
        beginResponse()
        writeOffset = request.written
        bodyOffset = 0
        bytesSent = request.written
        writeComplete = false
        writeClosed = false
        lastProgress = request.startedAt
        armWatchdog(deadline: request.startedAt &+ exchange.timeout)
        if let error = request.error {
            writeFailed(error)
        } else {
            flush()
        }
    }

    /// Resets the response state for a new exchange.
    private func beginResponse() {
        responsePhase = .head
        receivedResponseBytes = false
        interimResponses = 0
    }

    /// Moves the TLS session's pending ciphertext into the write buffer.
    func takeCiphertext() {
        guard let tls, let bytes = tls.takeCiphertext() else { return }
        if cipherOut.isEmpty {
            cipherOut = bytes
            cipherOffset = 0
        } else {
            cipherOut.append(contentsOf: bytes)
        }
    }

    /// Writes as much of the pending request (or ciphertext) as the socket takes now.
    func flush() {
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
                setInterest([.readable, .writable])
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

    /// One write system call over what is pending; `.bytes(0)` when nothing is.
    private func writeOnce(_ socket: Socket) -> Result<Socket.IOResult, SocketError> {
        if tls != nil {
            guard cipherOffset < cipherOut.count else { return .success(.bytes(0)) }
            let offset = cipherOffset
            return cipherOut.withUnsafeBytes { all in
                Result { () throws(SocketError) in try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
            }
        }
        guard let exchange, !writeClosed else { return .success(.bytes(0)) }
        let body = exchange.request.body
        let separateBody = !exchange.bodyInlined && !body.isEmpty
        let wireOffset = writeOffset
        if wireOffset < exchange.wire.count {
            return exchange.wire.withUnsafeBytes { (all) -> Result<Socket.IOResult, SocketError> in
                let head = UnsafeRawBufferPointer(rebasing: all[wireOffset...])
                if !separateBody {
                    return Result { () throws(SocketError) in try socket.write(head) }
                }
                return body.withUnsafeBytes { bodyBytes in
                    Result { () throws(SocketError) in try socket.writev([head, bodyBytes]) }
                }
            }
        }
        guard separateBody, bodyOffset < body.count else { return .success(.bytes(0)) }
        let offset = bodyOffset
        return body.withUnsafeBytes { all in
            Result { () throws(SocketError) in try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
        }
    }

    /// Accounts for `count` bytes written.
    private func advance(by count: Int) {
        bytesSent &+= count
        lastProgress = EventLoop.now()
        if tls != nil {
            cipherOffset += count
            return
        }
        guard let exchange else { return }
        let headLeft = exchange.wire.count - writeOffset
        if count <= headLeft {
            writeOffset += count
        } else {
            writeOffset = exchange.wire.count
            bodyOffset += count - headLeft
        }
    }

    /// Everything pending was written.
    private func finishWriting() {
        if tls != nil {
            cipherOut.removeAll(keepingCapacity: cipherOut.capacity <= 65_536)
            cipherOffset = 0
        }
        if let exchange {
            writeComplete = true
            exchange.timeline.recordRequestWritten(at: EventLoop.now())
        }
        setInterest(.readable)
    }

    /// The peer stopped taking bytes (`EPIPE`, a reset). Whatever it answered before is still
    /// read; without an answer the request failed.
    func writeFailed(_ error: SocketError?) {
        writeClosed = true
        cipherOut = []
        cipherOffset = 0
        guard state == .ready, let exchange else {
            close()
            return
        }
        setInterest(.readable)
        if !receivedResponseBytes && state == .ready {
            readAvailable()
        }
        if state == .ready, self.exchange === exchange, !receivedResponseBytes {
            peerClosedBeforeResponse(error)
        }
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
        let now = EventLoop.now()
        switch state {
        case .connecting, .handshaking:
            if now < connectDeadline {
                armWatchdog(deadline: connectDeadline)
            } else if let connector {
                connector.timeout()  // reports through connectorFinished
            } else {
                let limit = Duration.nanoseconds(Int64(clamping: settings.connectTimeout))
                failEstablishment(.timedOut.with(detail: "the TLS handshake with \(key) timed out after \(limit)"))
            }
        case .ready:
            guard let exchange else {
                pool?.parkedTick(self)
                return
            }
            let deadline = lastProgress &+ exchange.timeout
            if now >= deadline {
                let silence = responsePhase == .head
                    ? "no complete response head came from \(key) within \(exchange.request.timeout) of sending"
                    : "no body bytes came from \(key) for \(exchange.request.timeout)"
                fail(.timedOut.with(detail: silence))
            } else if slot != nil {
                // Tick at least every horizon, so that once idle again the connection keeps being
                // checked for requests sent on it directly, without rescheduling per request.
                armWatchdog(deadline: min(deadline, now &+ NativeDirectLane.horizon))
            } else {
                armWatchdog(deadline: deadline)
            }
        case .initial, .closed:
            return
        }
    }

    // MARK: - Ending an exchange

    /// Takes the current exchange off the connection.
    func detach() -> NativeExchange? {
        let current = exchange
        exchange = nil
        contentDecoder = nil
        responsePhase = .head
        return current
    }

    /// Fails the current exchange with `error` and closes the connection (its state is unknown).
    func fail(_ error: HTTPConnectionError) {
        let current = detach()
        close()
        current?.finish(.failure(error))
    }

    /// Ends the pool's request `requestID` with `error` if it is the one in progress, and closes
    /// the connection (its state is unknown then).
    func abort(requestID: PoolStateMachine.RequestID, with error: HTTPConnectionError) {
        guard let exchange, exchange.poolID == requestID else { return }
        fail(error)
    }
}

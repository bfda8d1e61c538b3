#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CourierHTTP1
import CourierWire

extension HTTPServerConnection {
    /// Whether a responder call for `number` may still act on this connection.
    private func accepts(_ number: Int) -> Bool {
        phase == .handling && number == requestNumber
    }

    func respond(
        requestNumber number: Int, status: Int, reason: String?, headers: [(name: String, value: String)], body: [UInt8]
    ) {
        guard accepts(number), !responseStarted, let head else { return }
        var fields = headers.map { HTTPField(name: $0.name, value: $0.value) }
        let statusAllowsBody = !(100...199).contains(status) && status != 204 && status != 304
        if statusAllowsBody, fields.value(for: "content-length") == nil, fields.value(for: "transfer-encoding") == nil {
            fields.append(HTTPField(name: "Content-Length", value: String(body.count)))
        }
        if fields.value(for: "date") == nil {
            fields.append(HTTPField(name: "Date", value: context.dateHeader()))
        }
        let handlerCloses = fields.values(for: "connection").contains { HTTPFieldList.value($0, contains: "close") }
        let keepAlive = head.keepAlive && !handlerCloses && !context.server.isShuttingDown.load(ordering: .relaxed)
            && !peerClosed
        if fields.value(for: "connection") == nil {
            if !keepAlive {
                fields.append(HTTPField(name: "Connection", value: "close"))
            } else if head.version == .http1_0 {
                fields.append(HTTPField(name: "Connection", value: "keep-alive"))
            }
        }
        let responseHead = HTTPResponseHead(version: .http1_1, status: status, reason: reason, fields: fields)
        outbound.append(contentsOf: responseHead.serialized())
        if statusAllowsBody, !body.isEmpty, head.method != "HEAD" {
            outbound.append(contentsOf: body)
        }
        finishRequest(keepAlive: keepAlive)
    }

    func writeRaw(requestNumber number: Int, bytes: [UInt8]) {
        guard accepts(number), !bytes.isEmpty else { return }
        responseStarted = true
        outbound.append(contentsOf: bytes)
        flush()
    }

    /// Runs `work` on the loop once every byte queued so far is in the socket: on the next turn
    /// when nothing is queued; never when the connection closes first. A flush that also closes
    /// the connection (after a response with `Connection: close`) may run `work` after the close,
    /// where the responder's calls do nothing.
    func whenFlushed(requestNumber number: Int, _ work: @escaping @Sendable () -> Void) {
        guard accepts(number) else { return }
        if outbound.isEmpty {
            _ = loop.execute(work)
        } else {
            flushWaiters.append(work)
        }
    }

    func complete(requestNumber number: Int, keepAlive: Bool) {
        guard accepts(number) else { return }
        finishRequest(keepAlive: keepAlive && !peerClosed && !context.server.isShuttingDown.load(ordering: .relaxed))
    }

    func closeAfterFlush(requestNumber number: Int) {
        guard accepts(number) else { return }
        phase = .closing
        afterFlush = .close
        flush()
    }

    func shutdownWriteAfterFlush(requestNumber number: Int) {
        guard accepts(number) else { return }
        phase = .closing
        afterFlush = .shutdownWrite(linger: configuration.idleTimeout)
        flush()
    }

    func reset(requestNumber number: Int) {
        guard accepts(number) else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(socket.descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// The current request is answered: go on with the next one or close.
    private func finishRequest(keepAlive: Bool) {
        head = nil
        guard keepAlive else {
            phase = .closing
            afterFlush = .close
            flush()
            return
        }
        phase = .readingHead
        headStarted = false
        responseStarted = false
        flush()
        guard phase == .readingHead else { return }
        if readingPaused { resumeReading() }
        if !isProcessing { processInbound() }
        if phase == .readingHead, !headStarted, inbound.isEmpty {
            setDeadline(after: configuration.idleTimeout)
        }
    }

    /// Writes as much of the queue as the socket takes, then runs the after-flush action.
    func flush() {
        while outboundOffset < outbound.count {
            guard phase != .closed else { return }
            let result: Socket.IOResult
            do {
                result = try writeSome()
            } catch {
                close()
                return
            }
            switch result {
            case .bytes(let count):
                advance(by: count)
            case .wouldBlock:
                updateInterest()
                return
            case .closed:
                close()
                return
            }
        }
        updateInterest()
        let waiters = flushWaiters
        flushWaiters = []
        for work in waiters { _ = loop.execute(work) }
        switch afterFlush {
        case .nothing:
            break
        case .close:
            close()
        case .shutdownWrite(let linger):
            afterFlush = .nothing
            try? socket.shutdownWrite()
            phase = .draining
            inbound = []
            if peerClosed {
                close()
            } else {
                setDeadline(after: linger)
                updateInterest()
            }
        }
    }

    private func writeSome() throws(SocketError) -> Socket.IOResult {
        let offset = outboundOffset
        let result = outbound.withUnsafeBytes { all -> Result<Socket.IOResult, SocketError> in
            do throws(SocketError) {
                return .success(try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...])))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func advance(by written: Int) {
        outboundOffset += written
        if outboundOffset >= outbound.count {
            // Idle connections should not hold on to large buffers.
            if outbound.capacity > 16_384 {
                outbound = []
            } else {
                outbound.removeAll(keepingCapacity: true)
            }
            outboundOffset = 0
        }
    }

    /// Watches for reads unless paused or finished, and for writes while bytes are queued.
    func updateInterest() {
        guard phase != .closed else { return }
        var interest: EventLoop.Interest = []
        if !readingPaused, !peerClosed { interest.insert(.readable) }
        if !outbound.isEmpty { interest.insert(.writable) }
        guard interest != registeredInterest else { return }
        do {
            try loop.modify(fd: socket.descriptor, interest: interest)
            registeredInterest = interest
        } catch {
            close()
        }
    }
}

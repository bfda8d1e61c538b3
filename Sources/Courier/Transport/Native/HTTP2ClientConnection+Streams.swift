import CourierHTTP2
import CourierWire
import Foundation

extension HTTP2ClientConnection {
    // MARK: - Starting requests

    /// Starts the exchanges the pool placed on this connection, each on a stream of its own;
    /// their HEADERS (and bodies, as the windows allow) are written at the end of the loop's
    /// turn, with those of every other request started in the turn.
    func execute(_ exchanges: [NativeExchange]) {
        for exchange in exchanges { start(exchange) }
        scheduleFlush()
    }

    private func start(_ exchange: NativeExchange) {
        guard !isClosed, let pool, let requestID = exchange.poolID else {
            exchange.finish(.failure(.connectionLost.with(detail: "the HTTP/2 connection to \(key) closed")))
            return
        }
        let fields = HTTP2RequestHeaders.fields(for: exchange.request, target: exchange.target, secure: key.secure,
                                                acceptEncoding: settings.decompression)
        let body = exchange.request.body
        let hasBody = !body.isEmpty || exchange.request.upload != nil
        guard let (streamID, actions) = machine.openStream(headers: fields, endStream: !hasBody) else {
            // The server's GOAWAY or a lowered stream limit came first: the pool places it again.
            reportDrainingIfNeeded()
            pool.http2Requeue(self, exchange)
            return
        }
        let now = EventLoop.now()
        let headBytes = actions.reduce(0) { total, action in
            if case .write(let bytes) = action { return total + bytes.count }
            return total
        }
        exchange.run(onHTTP2: self, streamID: streamID, headBytes: headBytes, since: now, reused: streamsStarted > 0)
        streamsStarted += 1
        let request = HTTP2ResponseAssembler.Request(url: exchange.request.url, method: exchange.request.method.rawValue,
                                                     maxBodySize: exchange.request.maxResponseBodySize,
                                                     streamsBody: exchange.stream != nil, observesBody: exchange.observesBody)
        let deadline = now &+ exchange.timeout
        streams[streamID] = Stream(exchange: exchange, response: HTTP2ResponseAssembler(request: request, limits: .init(settings)),
                                   deadline: deadline, afterResponse: responsesCarried > 0)
        streamOfRequest[requestID] = streamID
        requestsBeingWritten.append(streamID)
        queuingHeaders(of: streamID)
        armWatchdog(deadline: deadline)
        perform(actions)
        if !body.isEmpty {
            perform(machine.sendBody(streamID: streamID, [UInt8](body), endStream: true))
        } else if exchange.upload != nil {
            uploading.insert(streamID)
            pumpUpload(streamID)
        }
    }

    /// Records "request written" for the streams whose request is now all on the wire (called
    /// when everything queued was written); a stream whose body still waits for a window or an
    /// upload stays for a later call, one that ended is forgotten.
    func recordRequestsWritten() {
        guard !requestsBeingWritten.isEmpty else { return }
        let now = EventLoop.now()
        requestsBeingWritten.removeAll { id in
            guard let index = streams.index(forKey: id) else { return true }
            guard !uploading.contains(id), machine.bufferedBodyCount(id) == 0 else { return false }
            streams.values[index].exchange.timeline.recordRequestWritten(at: now)
            return true
        }
    }

    // MARK: - The machine's actions

    /// Carries out what the machine decided, in order. When the machine has closed (a
    /// connection error), the pool hears first that the connection takes nothing new.
    func perform(_ actions: [HTTP2ConnectionAction]) {
        if machine.isClosed { reportDrainingIfNeeded() }
        for action in actions {
            switch action {
            case .write(let bytes):
                enqueue(bytes)
            case .responseHead(let id, let status, let fields):
                deliverHead(id, status: status, fields: fields)
            case .responseData(let id, let bytes):
                deliverData(id, bytes)
            case .responseTrailers(let id, let fields):
                streams[id]?.response.receiveTrailers(fields)
            case .streamFinished(let id):
                finishStream(id)
            case .streamFailed(let id, let failure):
                streamFailed(id, failure)
            case .closeConnection(let error):
                writeOnceBeforeClosing()
                close(establishmentError: isReady ? nil : error.map(Self.connectionError))
            }
        }
    }

    // A stream's state is changed in place (`streams.values[index]`), never copied out and
    // written back: a copy would retain everything the stream holds, and the response body it
    // is collecting would be copied on its next append. Callbacks run after each in-place access
    // ends, since they may change `streams`.

    private func deliverHead(_ id: UInt32, status: Int, fields: [HPACKHeaderField]) {
        guard let index = streams.index(forKey: id) else { return }
        let now = EventLoop.now()
        let exchange = streams.values[index].exchange
        exchange.timeline.recordResponseStarted(at: now)
        let head: HTTPResponse.Head
        do throws(HTTPConnectionError) {
            head = try streams.values[index].response.receiveHead(status: status, fields: fields)
        } catch {
            reset(id, with: error)
            return
        }
        streams.values[index].deadline = now &+ exchange.timeout
        exchange.headArrived(head, decoding: streams.values[index].response.takeStreamedDecoding())
    }

    private func deliverData(_ id: UInt32, _ bytes: [UInt8]) {
        guard let index = streams.index(forKey: id) else { return }
        let chunk: Data?
        do throws(HTTPConnectionError) {
            chunk = try streams.values[index].response.receiveData(bytes)
        } catch {
            reset(id, with: error)
            return
        }
        let exchange = streams.values[index].exchange
        streams.values[index].deadline = EventLoop.now() &+ exchange.timeout
        guard let chunk else { return }
        let soFar = Int64(streams.values[index].response.wireBytes)
        guard exchange.stream != nil else {
            if exchange.observesBody {
                exchange.observer.transportDidReceiveBody(chunk, bytesSoFar: soFar, expectedTotal: exchange.head?.expectedContentLength)
            }
            return
        }
        switch exchange.deliverStreamed(chunk, bytesSoFar: soFar, expectedTotal: exchange.head?.expectedContentLength) {
        case .goOn:
            break
        case .pause:
            // The consumer is behind: its stream's window stays closed until it reads.
            streams[id]?.paused = true
            machine.pauseStream(id)
        case .fail(let error):
            reset(id, with: error)
        }
    }

    private func finishStream(_ id: UInt32) {
        guard var stream = streams.removeValue(forKey: id) else { return }
        let outcome = Result { () throws(HTTPConnectionError) in try stream.response.finish() }
        ended(stream, id, with: outcome)
    }

    private func streamFailed(_ id: UInt32, _ failure: HTTP2StreamFailure) {
        guard failure.retryable, let pool, let stream = streams.removeValue(forKey: id) else {
            endStream(id, with: .failure(Self.streamError(failure)))
            return
        }
        // The server did not process it: it goes out again, on this or another connection, unless
        // its body is a stream that was already read (a second stream would carry only HEADERS).
        if let upload = stream.exchange.request.upload, upload.wasConsumed {
            reportDrainingIfNeeded()
            ended(stream, id, with: .failure(.bodyNotReplayable.with(
                detail: "the server did not process the HTTP/2 stream (\(failure.code)), but its body stream was already read and cannot be sent again")))
            return
        }
        if let requestID = stream.exchange.poolID { streamOfRequest[requestID] = nil }
        uploading.remove(id)
        reportDrainingIfNeeded()
        pool.http2Requeue(self, stream.exchange)
    }

    /// Ends a stream this side gave up on (a limit, the timeout, a cancel): RST_STREAM(CANCEL).
    func reset(_ id: UInt32, with error: HTTPConnectionError) {
        guard streams.keys.contains(id) else { return }
        let actions = machine.cancelStream(id)
        endStream(id, with: .failure(error))
        perform(actions)
    }

    /// Ends the stream's exchange with `outcome`, once: the pool hears first, then the exchange.
    func endStream(_ id: UInt32, with outcome: Result<HTTPResponse, HTTPConnectionError>) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        ended(stream, id, with: outcome)
    }

    /// Tells the pool and the exchange that `stream` (`id`, already removed) ended with `outcome`.
    private func ended(_ stream: Stream, _ id: UInt32, with outcome: Result<HTTPResponse, HTTPConnectionError>) {
        uploading.remove(id)
        if !unwrittenStreams.isEmpty { unwrittenStreams.removeAll { $0.id == id } }
        let exchange = stream.exchange
        if let requestID = exchange.poolID { streamOfRequest[requestID] = nil }
        exchange.wireBodyBytes = stream.response.wireBytes
        if case .success = outcome { responsesCarried += 1 }
        pool?.http2StreamEnded(self, exchange)
        exchange.finish(outcome)
    }

    // MARK: - Events from the pool and the exchanges

    /// Ends the pool's request `requestID` with `error` (a cancel, the shutdown) and resets its
    /// stream; the connection carries on.
    func abort(requestID: PoolStateMachine.RequestID, with error: HTTPConnectionError) {
        guard let id = streamOfRequest[requestID] else { return }
        reset(id, with: error)
        flush()
    }

    /// The consumer of a streamed body wants more: the stream's window opens again.
    func resumeReading(_ exchange: NativeExchange) {
        let id = exchange.streamID
        guard let index = streams.index(forKey: id), streams.values[index].exchange === exchange,
              streams.values[index].paused else { return }
        let deadline = EventLoop.now() &+ exchange.timeout
        streams.values[index].paused = false
        streams.values[index].deadline = deadline
        armWatchdog(deadline: deadline)
        perform(machine.resumeStream(id))
        flush()
    }

    // MARK: - Timers

    /// Makes sure the watchdog fires no later than `deadline`.
    func armWatchdog(deadline: UInt64) {
        if watchdogDeadline != 0 && watchdogDeadline <= deadline { return }
        watchdog?.cancel()
        guard let selfBound else { return }
        watchdogDeadline = deadline
        let delay = Int64(clamping: deadline &- min(EventLoop.now(), deadline))
        watchdog = loop.scheduleTimer(after: .nanoseconds(delay)) {
            selfBound.value.watchdogFired()
        }
    }

    /// Fails the connection whose SETTINGS were not acknowledged in time, and each stream silent
    /// for its timeout; re-arms for the next deadline.
    private func watchdogFired() {
        watchdog = nil
        watchdogDeadline = 0
        guard !isClosed else { return }
        let now = EventLoop.now()
        if machine.awaitsSettingsAcknowledgement, now >= settingsDeadline {
            perform(machine.settingsTimedOut())
            return
        }
        for (id, stream) in streams.sorted(by: { $0.key < $1.key }) where !stream.paused && now >= stream.deadline {
            let limit = Duration.nanoseconds(Int64(clamping: stream.exchange.timeout))
            reset(id, with: .timedOut.with(detail: "the HTTP/2 stream to \(key) made no progress for \(limit)"))
        }
        guard !isClosed else { return }
        var next = machine.awaitsSettingsAcknowledgement ? settingsDeadline : UInt64.max
        for stream in streams.values where !stream.paused { next = min(next, stream.deadline) }
        if next != .max { armWatchdog(deadline: next) }
        flush()
    }

    // MARK: - Errors

    /// Courier's error for a stream the machine ended.
    static func streamError(_ failure: HTTP2StreamFailure) -> HTTPConnectionError {
        if failure.reason == HTTP2StreamFailure.serverReset {
            return .connectionLost.with(detail: "the server reset the HTTP/2 stream (\(failure.code))")
        }
        if failure.code == .settingsTimeout {
            return .timedOut.with(detail: "HTTP/2: \(failure.reason)")
        }
        if failure.reason == HTTP2StreamFailure.headerListTooLarge {
            return .headTooLarge.with(detail: "HTTP/2: \(failure.reason)")
        }
        return .badResponse.with(detail: "HTTP/2 \(failure.code): \(failure.reason)")
    }

    /// Courier's error for a connection error this side detected.
    static func connectionError(_ error: HTTP2ProtocolError) -> HTTPConnectionError {
        if error.code == .settingsTimeout { return .timedOut.with(detail: "HTTP/2: \(error.reason)", underlying: error) }
        return .badResponse.with(detail: "HTTP/2 \(error)", underlying: error)
    }
}

import CourierHTTP1
import CourierWire

extension HTTPServerConnection {
    /// Thrown from the body decoder's emit closure when the body outgrows the limit.
    struct BodyTooLarge: Error {}

    /// New bytes from the socket.
    func received(_ bytes: UnsafeRawBufferPointer) {
        switch phase {
        case .closed:
            return
        case .draining, .closing:
            // The exchange is over; whatever the client still sends is discarded.
            return
        case .handling:
            inbound.append(contentsOf: bytes)
            if inbound.count > configuration.maxPipelinedBytes { pauseReading() }
        case .readingHead, .readingBody:
            if inbound.isEmpty {
                let consumed = process(bytes)
                keepUnprocessed(bytes, from: consumed)
            } else {
                inbound.append(contentsOf: bytes)
                processInbound()
            }
        }
    }

    /// Processes buffered bytes (after a request completed while more had arrived).
    func processInbound() {
        guard !isProcessing, !inbound.isEmpty else { return }
        let pending = inbound
        inbound = []
        let consumed = pending.withUnsafeBytes { process($0) }
        pending.withUnsafeBytes { keepUnprocessed($0, from: consumed) }
    }

    private func keepUnprocessed(_ bytes: UnsafeRawBufferPointer, from consumed: Int) {
        guard consumed < bytes.count else { return }
        switch phase {
        case .closed, .closing, .draining:
            return
        default:
            inbound.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
            if inbound.count > configuration.maxPipelinedBytes { pauseReading() }
        }
    }

    /// Runs the request state machine over `bytes` until they are used up or a
    /// request is handed to the handler.
    ///
    /// - Returns: How many bytes were consumed.
    private func process(_ bytes: UnsafeRawBufferPointer) -> Int {
        isProcessing = true
        defer { isProcessing = false }
        var offset = 0
        while offset < bytes.count || phase == .readingBody && decoder?.isComplete == true {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch phase {
            case .readingHead:
                if !headStarted {
                    headStarted = true
                    setDeadline(after: configuration.headerTimeout)
                }
                let parsed: (head: HTTPRequestHead, consumed: Int)?
                do {
                    parsed = try parser.parse(rest)
                } catch {
                    rejectHead(error)
                    return bytes.count
                }
                guard let parsed else { return bytes.count }
                offset += parsed.consumed
                begin(parsed.head)
            case .readingBody:
                guard var current = decoder else { return offset }
                let limit = configuration.maxBodyBytes
                do {
                    let result = try current.decode(rest) { run in
                        if body.count + run.count > limit { throw BodyTooLarge() }
                        body.append(contentsOf: run)
                    }
                    decoder = current
                    offset += result.consumed
                    if result.isComplete {
                        dispatch()
                    } else if result.consumed == rest.count {
                        extendBodyDeadline()
                    }
                } catch is BodyTooLarge {
                    sendError(status: 413, message: "request body larger than \(limit) bytes")
                    return bytes.count
                } catch {
                    sendError(status: 400, message: "\(error)")
                    return bytes.count
                }
            case .handling, .closing, .draining, .closed:
                return offset
            }
        }
        return offset
    }

    /// A complete head arrived: check its framing and limits, then read the body or dispatch.
    private func begin(_ parsedHead: HTTPRequestHead) {
        headStarted = false
        requestNumber += 1
        head = parsedHead
        body = []
        responseStarted = false
        // RFC 9112 §6.1: a proxy could frame such a request by the other field (smuggling).
        if !parsedHead.values(for: "transfer-encoding").isEmpty, !parsedHead.values(for: "content-length").isEmpty {
            sendError(status: 400, message: "a request with both Transfer-Encoding and Content-Length is refused")
            return
        }
        let framing: BodyFraming
        do {
            framing = try BodyFraming.forRequest(parsedHead)
        } catch {
            let status = error == .unsupportedTransferEncoding ? 501 : 400
            sendError(status: status, message: "\(error)")
            return
        }
        switch framing {
        case .none, .untilClose, .contentLength(0):
            decoder = nil
            dispatch()
        case .contentLength(let length) where length > configuration.maxBodyBytes:
            sendError(status: 413, message: "request body of \(length) bytes is larger than \(configuration.maxBodyBytes)")
        case .contentLength(let length):
            body.reserveCapacity(min(length, 1 << 20))
            startBody(framing)
        case .chunked:
            startBody(framing)
        }
    }

    private func startBody(_ framing: BodyFraming) {
        decoder = BodyDecoder(framing: framing, limits: configuration.limits)
        phase = .readingBody
        startBodyDeadline()
        if let head, head.version == .http1_1,
           head.value(for: "expect")?.lowercased() == "100-continue" {
            outbound.append(contentsOf: "HTTP/1.1 100 Continue\r\n\r\n".utf8)
            flush()
        }
    }

    /// Hands the complete request to the handler.
    private func dispatch() {
        guard let head else { return }
        let request = HTTPServerRequest(
            head: head, body: body, connectionNumber: number, requestNumber: requestNumber, remoteAddress: remote)
        decoder = nil
        body = []
        phase = .handling
        clearDeadline()
        context.server.requestReceived(path: request.path)
        let responder = HTTPServerResponder(connection: LoopBound(self, on: loop), requestNumber: requestNumber)
        context.server.handler(request, responder)
    }

    private func rejectHead(_ error: HTTP1Error) {
        let status = (error == .headTooLarge || error == .tooManyFields) ? 431 : 400
        sendError(status: status, message: "\(error)")
    }

    /// Answers with an error status and closes the connection after a short linger.
    ///
    /// The body (from ``HTTPServer/Configuration/errorBody``) is left out when the request
    /// being answered is a `HEAD`; its `Content-Length` still says how long it would be.
    func sendError(status: Int, message: String) {
        guard phase != .closed else { return }
        var text = message
        if text.utf8.count > 200 { text = String(decoding: Array(text.utf8.prefix(200)), as: UTF8.self) }
        let (contentType, body) = configuration.errorBody(status, text)
        let fields = [
            HTTPField(name: "Content-Type", value: contentType),
            HTTPField(name: "Content-Length", value: String(body.count)),
            HTTPField(name: "Date", value: context.dateHeader()),
            HTTPField(name: "Connection", value: "close"),
        ]
        outbound.append(contentsOf: HTTPResponseHead(status: status, fields: fields).serialized())
        // A response to HEAD never has content (RFC 9110 §9.3.2), not even an error's.
        if head?.method != "HEAD" {
            outbound.append(contentsOf: body)
        }
        phase = .closing
        inbound = []
        afterFlush = .shutdownWrite(linger: configuration.lingerTimeout)
        setDeadline(after: configuration.lingerTimeout)
        flush()
    }

    /// Stops reading until the buffered pipeline is processed.
    func pauseReading() {
        guard !readingPaused else { return }
        readingPaused = true
        updateInterest()
    }

    func resumeReading() {
        guard readingPaused else { return }
        readingPaused = false
        updateInterest()
    }
}

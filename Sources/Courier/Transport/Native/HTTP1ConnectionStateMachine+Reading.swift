import CourierHTTP1
import CourierWire
import Foundation

extension HTTP1ConnectionStateMachine {
    /// Processes received plaintext: `bytes` from `cursor` on. Advances `cursor` past what it
    /// used and returns the next thing to do; the driver performs it and calls again with the
    /// same buffer until the action is `.none` (everything taken) or ends the request (`.complete`,
    /// `.fail`, `.retryOnFreshConnection`, `.close`). So one read costs no list of actions.
    ///
    /// A read alone is not progress for the request's timeout: the final head sets it, and
    /// after the head only body payload bytes do (not chunk-size lines, extensions or trailers).
    /// Bytes on an idle connection are an unsolicited response: it cannot be trusted again.
    mutating func bytesRead(_ bytes: UnsafeRawBufferPointer, cursor: inout Int, at now: UInt64) -> Action {
        guard case .busy(let phase) = state, let request else {
            if state == .idle && cursor < bytes.count { return close() }
            cursor = bytes.count
            return .none
        }
        if cursor < bytes.count { receivedResponseBytes = true }
        if phase == .receivingBody {
            return readBody(bytes, cursor: &cursor, request: request, at: now)
        }
        while cursor < bytes.count {
            let parsed: (head: HTTPResponseHead, consumed: Int)?
            do {
                parsed = try parser.parse(UnsafeRawBufferPointer(rebasing: bytes[cursor...]))
            } catch {
                return failRequest(NativeErrors.http(error))
            }
            guard let parsed else {
                cursor = bytes.count
                return .none
            }
            cursor += parsed.consumed
            let head = parsed.head
            guard head.status >= 200 else {
                if head.status == 101 { return failRequest(.badResponse.with(detail: "unexpected 101 Switching Protocols")) }
                interimResponses += 1
                if interimResponses > Self.maxInterimResponses {
                    return failRequest(.badResponse.with(
                        detail: "more than \(Self.maxInterimResponses) interim (1xx) responses before the final one"))
                }
                if head.status == 100, holdsBody { return releaseBody(at: now) }
                continue  // 1xx informational: the final response follows
            }
            withholdBody()
            return beginBody(head, request: request, at: now)
        }
        return .none
    }

    /// Reads body bytes from `cursor`, or completes a body that is complete.
    private mutating func readBody(_ bytes: UnsafeRawBufferPointer, cursor: inout Int, request: Request,
                                   at now: UInt64) -> Action {
        if decoder.isComplete { return finishResponse(extraBytes: cursor < bytes.count) }
        guard cursor < bytes.count else { return .none }
        let payloadBefore = decoder.payloadBytes
        let outcome: (consumed: Int, isComplete: Bool)
        do {
            outcome = try decoder.decode(UnsafeRawBufferPointer(rebasing: bytes[cursor...])) { run in try body.append(run) }
        } catch let error as HTTPConnectionError {
            return failRequest(error)
        } catch let error as HTTP1Error {
            return failRequest(NativeErrors.http(error))
        } catch {
            return failRequest(.badResponse.with(detail: "\(error)", underlying: error))
        }
        cursor += outcome.consumed
        if decoder.payloadBytes != payloadBefore { lastProgress = now }
        framedBodyBytes &+= outcome.consumed
        let limit = request.streamsBody ? Int.max : Self.framedBodyLimit(request.maxBodySize)
        if framedBodyBytes > limit {
            return failRequest(.bodyTooLarge.with(detail: "the body with its chunk framing exceeds \(limit) bytes on the wire"))
        }
        if request.streamsBody, let fresh = body.takeAll() {
            return .deliverBody(fresh, bytesSoFar: Int64(body.wireBytes), expectedTotal: body.declaredLength)
        }
        if request.observesBody, let fresh = body.takeUnobserved() {
            // Completion, if due, comes with the next call.
            return .deliverBody(fresh, bytesSoFar: Int64(body.wireBytes), expectedTotal: body.declaredLength)
        }
        if outcome.isComplete { return finishResponse(extraBytes: cursor < bytes.count) }
        return .none
    }

    /// Sets up the body of a final response head and hands the head out.
    private mutating func beginBody(_ head: HTTPResponseHead, request: Request, at now: UInt64) -> Action {
        let framing: BodyFraming
        do {
            framing = try BodyFraming.forResponse(head, requestMethod: request.method)
        } catch {
            return failRequest(NativeErrors.http(error))
        }
        // The body limit is for bodies collected in memory; a streamed one is the consumer's.
        let limit = request.streamsBody ? Int.max : request.maxBodySize
        var declaredLength: Int64?
        closeDelimited = false
        switch framing {
        case .contentLength(let length):
            if length > limit { return failRequest(NativeErrors.bodyTooLarge(limit: limit, declared: length)) }
            declaredLength = Int64(length)
        case .untilClose:
            closeDelimited = true
        case .none, .chunked:
            break
        }
        // Chunked wins over a Content-Length sent with it (RFC 9112 §6.3), but a server that
        // frames a response two ways cannot be trusted to frame the next one: close after it.
        keepAlive = head.keepAlive && !(framing == .chunked && head.value(for: "Content-Length") != nil)
        decoder = BodyDecoder(framing: framing, limits: configuration.limits)
        framedBodyBytes = 0
        lastProgress = now
        var contentDecoder: ContentDecoder?
        if configuration.decompression, framing != .none, let coding = head.value(for: "Content-Encoding") {
            contentDecoder = ContentDecoder(contentEncoding: coding,
                                            maxOutputBytes: request.streamsBody ? .max : configuration.maxDecompressedBytes,
                                            maxRatio: configuration.maxDecompressionRatio)
        }
        // A streamed body is decoded as its reader takes it, so that a paused reader holds a
        // bounded number of decoded bytes whatever the ratio: the exchange gets the decoder.
        streamedDecoding = request.streamsBody ? contentDecoder.map(StreamedBodyDecoding.init) : nil
        body = HTTP1ResponseBody(limit: limit, declaredLength: declaredLength,
                                 contentDecoder: request.streamsBody ? nil : contentDecoder,
                                 reservesDeclaredLength: !request.streamsBody)
        var fields: [HTTPHeaders.Field] = []
        fields.reserveCapacity(head.fields.count)
        for field in head.fields { fields.append(HTTPHeaders.Field(name: field.name, value: field.value)) }
        var delivered = HTTPResponse.Head(status: HTTPResponse.Status(code: head.status, reason: head.reason),
                                          headers: HTTPHeaders(fields), url: request.url)
        // A decoded body is not what Content-Encoding and Content-Length describe: they go, kept aside.
        if contentDecoder != nil { delivered.describeDecodedBody() }
        self.head = delivered
        state = .busy(.receivingBody)
        return .deliverHead(delivered)
    }

    /// The body is complete: the response, and whether the connection may carry another request.
    private mutating func finishResponse(extraBytes: Bool) -> Action {
        guard let head, let request else { return failRequest(.transportFailed.with(detail: "a body without a head")) }
        do {
            try body.finish()
        } catch {
            return failRequest(NativeErrors.http(error))
        }
        let reusable = !extraBytes && keepAlive && !closeDelimited && write == .written && !request.asksClose
        let response = HTTPResponse(collectedHead: head, body: body.takeData())
        ended(reusable: reusable)
        return .complete(response, reusable: reusable)
    }

    /// The peer closed (or reset, with `error`) the connection.
    mutating func peerClosed(_ error: SocketError?) -> Action {
        guard case .busy(let phase) = state else { return close() }
        switch phase {
        case .sending, .awaitingHead:
            if receivedResponseBytes {
                return failRequest(.connectionLost.with(
                    detail: "the server closed the connection in the middle of the response head", underlying: error))
            }
            return closedBeforeResponse(error)
        case .receivingBody:
            if let error {
                return failRequest(.connectionLost.with(detail: "the connection broke in the middle of the body", underlying: error))
            }
            do {
                try decoder.finishOnClose()
            } catch {
                return failRequest(NativeErrors.http(error))
            }
            keepAlive = false
            return finishResponse(extraBytes: false)
        }
    }

    /// The most bytes a chunked body may take on the wire, framing included: the body limit plus
    /// as much again for chunk-size lines, extensions and trailers (at least 1 MiB), so that a body
    /// of small chunks within the limit is read whole, while padding cannot stretch a response
    /// without bound.
    static func framedBodyLimit(_ maxBodySize: Int) -> Int {
        maxBodySize.addingReportingOverflow(max(maxBodySize, 1 << 20)).overflow ? .max : maxBodySize + max(maxBodySize, 1 << 20)
    }
}

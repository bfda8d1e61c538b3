import CourierHTTP1
import CourierTLS
import CourierWire
import Foundation

extension HTTP1ClientConnection {
    /// Reads what the socket has, into the loop's shared buffer, and processes it.
    ///
    /// Reads again only when a read filled the whole buffer and the exchange goes on, so a small
    /// response costs one `read` call; level-triggered epoll reports the rest.
    ///
    /// A read alone is not progress for the request's timeout: the final response head must
    /// arrive within the timeout of the request's last written byte, however it trickles and
    /// whatever interim (1xx) responses come first; after it, only body payload bytes count
    /// (not chunk-size lines, extensions or trailers).
    func readAvailable() {
        guard let context, let socket else { return }
        let buffer = context.readBuffer
        while state == .ready {
            let result: Socket.IOResult
            do {
                result = try socket.read(into: buffer)
            } catch {
                peerClosed(error)
                return
            }
            switch result {
            case .bytes(let count):
                pool?.progress(at: EventLoop.now())
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                if let tls {
                    tls.feedCiphertext(bytes)
                    drainPlaintext()
                } else {
                    process(bytes)
                }
                // A full buffer may mean more is waiting, unless this read finished the exchange:
                // the connection is parked then, and a caller may already have sent its next
                // request on it directly. That response is read by the next readiness, which
                // adopts the request first; read here, it would look unsolicited.
                if count < buffer.count || exchange == nil { return }
            case .wouldBlock:
                return
            case .closed:
                if let tls {
                    tls.feedEndOfInput()
                    drainPlaintext()
                    if state == .ready { peerClosed(nil) }
                } else {
                    peerClosed(nil)
                }
                return
            }
        }
    }

    /// Decrypts every complete TLS record and processes the plaintext.
    func drainPlaintext() {
        guard let context else { return }
        while state == .ready, let tls {
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
                peerClosed(nil)
                return
            case .failure(let error):
                if error == .uncleanShutdown {
                    peerClosed(nil)
                } else if exchange != nil {
                    fail(NativeErrors.tls(error))
                } else {
                    close()
                }
                return
            }
        }
    }

    /// Processes received (plaintext) bytes for the exchange in progress.
    func process(_ bytes: UnsafeRawBufferPointer) {
        guard let exchange else {
            // Bytes on an idle connection: an unsolicited response. It cannot be trusted again.
            close()
            return
        }
        if !receivedResponseBytes {
            receivedResponseBytes = true
            exchange.timeline.recordResponseStarted(at: EventLoop.now())
        }
        var offset = 0
        while offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch responsePhase {
            case .head:
                let parsed: (head: HTTPResponseHead, consumed: Int)?
                do {
                    parsed = try parser.parse(rest)
                } catch {
                    fail(NativeErrors.http(error))
                    return
                }
                guard let parsed else { return }
                offset += parsed.consumed
                let head = parsed.head
                if head.status < 200 {
                    if head.status == 101 {
                        fail(.badResponse.with(detail: "unexpected 101 Switching Protocols"))
                        return
                    }
                    interimResponses += 1
                    if interimResponses > Self.maxInterimResponses {
                        fail(.badResponse.with(detail: "more than \(Self.maxInterimResponses) interim (1xx) responses before the final one"))
                        return
                    }
                    continue  // 1xx informational: the final response follows
                }
                guard beginBody(head, exchange) else { return }
                if decoder.isComplete {
                    finishResponse(extraBytes: offset < bytes.count)
                    return
                }
            case .body:
                let outcome: (consumed: Int, isComplete: Bool)
                let payloadBefore = decoder.payloadBytes
                do {
                    outcome = try decoder.decode(rest) { run in try self.deliver(run, to: exchange) }
                } catch let error as HTTPConnectionError {
                    fail(error)
                    return
                } catch let error as HTTP1Error {
                    fail(NativeErrors.http(error))
                    return
                } catch {
                    fail(.badResponse.with(detail: "\(error)", underlying: error))
                    return
                }
                offset += outcome.consumed
                if decoder.payloadBytes != payloadBefore { lastProgress = EventLoop.now() }
                framedBodyBytes &+= outcome.consumed
                let limit = Self.framedBodyLimit(exchange.request.maxResponseBodySize)
                if framedBodyBytes > limit {
                    fail(.bodyTooLarge.with(detail: "the body with its chunk framing exceeds \(limit) bytes on the wire"))
                } else if outcome.isComplete {
                    finishResponse(extraBytes: offset < bytes.count)
                }
                return
            }
        }
    }

    /// The most interim (1xx) responses accepted before the final one; more fail the request.
    static let maxInterimResponses = 10

    /// Sets up the body of a final response head. Returns `false` when the exchange failed.
    private func beginBody(_ head: HTTPResponseHead, _ exchange: NativeExchange) -> Bool {
        let framing: BodyFraming
        do {
            framing = try BodyFraming.forResponse(head, requestMethod: exchange.request.method.rawValue)
        } catch {
            fail(NativeErrors.http(error))
            return false
        }
        let limit = exchange.request.maxResponseBodySize
        declaredLength = nil
        closeDelimited = false
        switch framing {
        case .contentLength(let length):
            if length > limit {
                fail(NativeErrors.bodyTooLarge(limit: limit, declared: length))
                return false
            }
            declaredLength = Int64(length)
            if length > 0 { exchange.body.reserveCapacity(min(length, 1 << 20)) }
        case .untilClose:
            closeDelimited = true
        case .none, .chunked:
            break
        }
        // Chunked wins over a Content-Length sent with it (RFC 9112 §6.3), but a server that
        // frames a response two ways cannot be trusted to frame the next one: close after it.
        keepAlive = head.keepAlive && !(framing == .chunked && head.value(for: "Content-Length") != nil)
        decoder = BodyDecoder(framing: framing, limits: settings.limits)
        framedBodyBytes = 0
        lastProgress = EventLoop.now()
        contentDecoder = nil
        if settings.decompression, framing != .none, let coding = head.value(for: "Content-Encoding") {
            contentDecoder = ContentDecoder(contentEncoding: coding, maxOutputBytes: settings.maxDecompressedBytes,
                                            maxRatio: settings.maxDecompressionRatio)
        }
        var fields: [HTTPHeaders.Field] = []
        fields.reserveCapacity(head.fields.count)
        for field in head.fields { fields.append(HTTPHeaders.Field(name: field.name, value: field.value)) }
        let courierHead = HTTPResponse.Head(status: HTTPResponse.Status(code: head.status, reason: head.reason),
                                            headers: HTTPHeaders(fields), url: exchange.request.url)
        exchange.head = courierHead
        responsePhase = .body
        exchange.observer.transportDidReceiveHead(courierHead)
        return true
    }

    /// The most encoded bytes handed to the content decoder at once.
    static let decodeStep = 4096

    /// Adds a run of body bytes (before content decoding) to the exchange.
    private func deliver(_ run: UnsafeRawBufferPointer, to exchange: NativeExchange) throws {
        exchange.wireBodyBytes &+= run.count
        let limit = exchange.request.maxResponseBodySize
        if exchange.wireBodyBytes > limit { throw NativeErrors.bodyTooLarge(limit: limit) }
        if let contentDecoder {
            // Small steps: one step of a compression bomb expands to at most about 4 MiB before
            // the size checks below see it.
            var offset = 0
            while offset < run.count {
                let end = min(offset + Self.decodeStep, run.count)
                let decoded = try contentDecoder.decode(UnsafeRawBufferPointer(rebasing: run[offset..<end]))
                offset = end
                if !decoded.isEmpty {
                    try decoded.withUnsafeBytes { bytes in try append(bytes, to: exchange) }
                }
            }
        } else {
            try append(run, to: exchange)
        }
    }

    private func append(_ bytes: UnsafeRawBufferPointer, to exchange: NativeExchange) throws {
        let limit = exchange.request.maxResponseBodySize
        if exchange.body.count + bytes.count > limit { throw NativeErrors.bodyTooLarge(limit: limit) }
        exchange.body.append(contentsOf: bytes)
        if exchange.observesBody {
            exchange.observer.transportDidReceiveBody(Data(bytes), bytesSoFar: Int64(exchange.wireBodyBytes),
                                                      expectedTotal: declaredLength)
        }
    }

    /// The body is complete: deliver the response and hand the connection back (or close it).
    private func finishResponse(extraBytes: Bool) {
        guard let exchange, let head = exchange.head else { return }
        if let contentDecoder {
            do {
                try contentDecoder.finish()
            } catch {
                fail(NativeErrors.http(error))
                return
            }
        }
        let reusable = !extraBytes && keepAlive && !closeDelimited && writeComplete && !writeClosed && !exchange.asksClose
        completedExchanges += 1
        let response = HTTPResponse(status: head.status, headers: head.headers, body: exchange.body, url: exchange.request.url)
        exchange.body = Data()
        _ = detach()
        if reusable, let pool {
            pool.release(self)
        } else {
            close()
        }
        exchange.finish(.success(response))
    }

    /// The peer closed (or reset) the connection.
    func peerClosed(_ error: SocketError?) {
        guard exchange != nil else {
            close()
            return
        }
        switch responsePhase {
        case .head:
            if receivedResponseBytes {
                fail(.connectionLost.with(detail: "the server closed the connection in the middle of the response head", underlying: error))
            } else {
                peerClosedBeforeResponse(error)
            }
        case .body:
            if let error {
                fail(.connectionLost.with(detail: "the connection broke in the middle of the body", underlying: error))
                return
            }
            do {
                try decoder.finishOnClose()
            } catch {
                fail(NativeErrors.http(error))
                return
            }
            keepAlive = false
            finishResponse(extraBytes: false)
        }
    }

    /// The connection ended before any byte of the response: on a reused connection this is a
    /// stale keep-alive connection, and a request that is safe to repeat goes out once more on a
    /// fresh one.
    func peerClosedBeforeResponse(_ error: SocketError?) {
        let pool = self.pool
        guard let exchange = detach() else { return }
        close()
        let reused = completedExchanges > 0
        if reused, exchange.staleRetries == 0, exchange.isIdempotent || bytesSent == 0, let pool {
            exchange.staleRetries = 1
            pool.retryOnFreshConnection(exchange)
        } else if reused {
            exchange.finish(.failure(.staleConnection.with(
                detail: "\(key) closed the pooled connection; \(exchange.request.method) is not safe to repeat", underlying: error)))
        } else {
            exchange.finish(.failure(.connectionLost.with(
                detail: "\(key) closed the connection without answering", underlying: error)))
        }
    }
}

extension HTTP1ClientConnection {
    /// The most bytes a chunked body may take on the wire, framing included: the body limit plus
    /// as much again for chunk-size lines, extensions and trailers (at least 1 MiB), so that a body
    /// of small chunks within the limit is read whole, while padding cannot stretch a response
    /// without bound.
    static func framedBodyLimit(_ maxBodySize: Int) -> Int {
        maxBodySize.addingReportingOverflow(max(maxBodySize, 1 << 20)).overflow ? .max : maxBodySize + max(maxBodySize, 1 << 20)
    }
}

import CourierHTTP1
import Foundation

extension NativeExchange {
    /// What the connection does after handing over bytes of a streamed body.
    enum StreamedDelivery {
        /// Keep reading.
        case goOn
        /// The reader holds enough: stop reading (and, on HTTP/2, giving the stream's window
        /// back) until its demand.
        case pause
        /// The body cannot be decoded: end the request with the error.
        case fail(HTTPConnectionError)
    }

    /// Bytes of a streamed body arrived on the connection, still content-coded when the body is
    /// (``streamedDecoding``): they are kept, and decoded one step at a time while the reader
    /// takes the steps, so that a reader that pauses holds at most its buffer plus one step
    /// (``StreamedBodyDecoding/step``) of decoded bytes, whatever the compression ratio. An
    /// uncoded body's bytes go to the reader as they are. The observer, if it asked, sees the
    /// decoded bytes, with the body's wire position `bytesSoFar`.
    func deliverStreamed(_ bytes: Data, bytesSoFar: Int64, expectedTotal: Int64?) -> StreamedDelivery {
        guard let stream else { return .goOn }
        streamedProgress = (bytesSoFar, expectedTotal)
        guard streamedDecoding != nil else {
            if observesBody { observer.transportDidReceiveBody(bytes, bytesSoFar: bytesSoFar, expectedTotal: expectedTotal) }
            return stream.yield(bytes) ? .goOn : .pause
        }
        streamedDecoding?.receive(bytes)
        // A reader that holds enough gets no more until its demand, which decodes what waits.
        guard stream.producerMayGoOn else { return .pause }
        return handOutDecoded()
    }

    /// For the reader's demand: decodes the encoded bytes that wait for it, and ends the body
    /// if the connection finished it and none wait any more.
    /// - Returns: whether the connection should read again for the reader (nothing waits, and
    ///   the body goes on); `false` when the reader is full again, or the body ended.
    func decodeWaitingBytes() -> Bool {
        guard streamedDecoding != nil else { return true }
        switch handOutDecoded() {
        case .pause:
            return false
        case .fail(let error):
            failStreamedBody(error)
            return false
        case .goOn:
            if endsWhenDecoded {
                endStreamedBody()
                return false
            }
            return true
        }
    }

    /// The connection finished the streamed body cleanly: the stream ends now, after checking
    /// that a content-coded body ended properly (``HTTPConnectionError/decompressionFailed``
    /// otherwise), or, while encoded bytes still wait for the reader, once they are decoded.
    func endStreamedBody() {
        guard let decoding = streamedDecoding else {
            stream?.finish(nil)
            return
        }
        guard decoding.isDrained else {
            endsWhenDecoded = true
            return
        }
        streamedDecoding = nil
        endsWhenDecoded = false
        do throws(HTTP1Error) {
            try decoding.finish()
            stream?.finish(nil)
        } catch {
            stream?.finish(NativeErrors.http(error))
        }
    }

    /// Decodes the waiting encoded bytes and hands them to the reader one step at a time, until
    /// none wait (`.goOn`), the reader holds enough (`.pause`), or they are corrupt or past a
    /// limit (`.fail`).
    private func handOutDecoded() -> StreamedDelivery {
        guard let stream else { return .goOn }
        while true {
            let chunk: Data?
            do throws(HTTP1Error) {
                chunk = try streamedDecoding?.next()
            } catch {
                streamedDecoding = nil
                endsWhenDecoded = false
                return .fail(NativeErrors.http(error))
            }
            guard let chunk else { return .goOn }
            if observesBody {
                observer.transportDidReceiveBody(chunk, bytesSoFar: streamedProgress.bytesSoFar,
                                                 expectedTotal: streamedProgress.expectedTotal)
            }
            if !stream.yield(chunk) { return .pause }
        }
    }

    /// Ends a streamed body whose waiting bytes cannot be decoded: through its connection while
    /// the connection still carries it (which closes the HTTP/1.1 connection or resets the
    /// HTTP/2 stream, and then finishes the exchange), or at once when the connection was done.
    private func failStreamedBody(_ error: HTTPConnectionError) {
        if phase == .streamingBody, let requestID = poolID {
            if let http2Connection {
                http2Connection.abort(requestID: requestID, with: error)
            } else if let connection, connection.exchange === self {
                connection.abort(requestID: requestID, with: error)
            }
        }
        if phase == .streamingBody {
            finish(.failure(error))
        } else {
            stream?.finish(error)
        }
    }
}

import CourierWire

/// Answers one request of an ``HTTPServer``, from any thread, now or later.
///
/// Every request gets exactly one completion: ``respond(status:reason:headers:body:)``,
/// ``complete(keepAlive:)`` after raw writes, ``closeConnection()``,
/// ``resetConnection()`` or ``shutdownWrite()``. Whatever comes after the first
/// completion is ignored, and so is everything once the connection has closed
/// (for example because the client left): responding to a dead connection is a
/// no-op, never an error.
///
/// Calls made on the connection's event loop take effect at once; calls from other
/// threads hop onto the loop and keep their order.
///
/// The low-level tools (``writeRaw(_:)``, ``closeConnection()``, ``shutdownWrite()``,
/// ``resetConnection()``, ``schedule(after:_:)``) exist to produce faulty responses
/// on purpose: a truncated head, a body shorter than its length, a pause between
/// pieces, a half-closed connection.
public struct HTTPServerResponder: Sendable {
    let connection: LoopBound<HTTPServerConnection>
    let requestNumber: Int

    init(connection: LoopBound<HTTPServerConnection>, requestNumber: Int) {
        self.connection = connection
        self.requestNumber = requestNumber
    }

    /// The event loop that owns the connection; the handler runs on it.
    public var eventLoop: EventLoop { connection.loop }

    /// Sends a complete response and completes the request.
    ///
    /// `Content-Length` (except for 1xx, 204 and 304) and `Date` are added unless
    /// `headers` already has them; `Connection: close` is added when the connection
    /// will close (the client asked for it, the handler put `Connection: close` into
    /// `headers`, or the server is shutting down) and `Connection: keep-alive` for a
    /// persistent HTTP/1.0 connection. The body is not sent for `HEAD` requests.
    ///
    /// A 1xx status is sent as given; the client will then wait for a final response
    /// that never comes (useful to test interim-response handling).
    ///
    /// - Parameters:
    ///   - status: The status code, 100...999.
    ///   - reason: The reason phrase; `nil` (the default) uses the standard one.
    ///   - headers: Header fields in order. Default: none.
    ///   - body: The body. Default: empty.
    public func respond(status: Int, reason: String? = nil, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        let number = requestNumber
        connection.run { $0.respond(requestNumber: number, status: status, reason: reason, headers: headers, body: body) }
    }

    /// Queues raw bytes on the connection, exactly as given, without completing the request.
    ///
    /// Follow with ``complete(keepAlive:)`` (the bytes formed a whole response),
    /// ``closeConnection()`` or ``shutdownWrite()``.
    ///
    /// - Parameter bytes: The bytes to send.
    public func writeRaw(_ bytes: [UInt8]) {
        let number = requestNumber
        connection.run { $0.writeRaw(requestNumber: number, bytes: bytes) }
    }

    /// Completes a request whose response was sent with ``writeRaw(_:)``.
    ///
    /// - Parameter keepAlive: `true` (the default) reads the next request on this
    ///   connection after the bytes are sent; `false` closes it then.
    public func complete(keepAlive: Bool = true) {
        let number = requestNumber
        connection.run { $0.complete(requestNumber: number, keepAlive: keepAlive) }
    }

    /// Runs `work` on the connection's loop once every byte queued so far has been written into
    /// the socket (the kernel's buffers), for a test that counts how far a response got while its
    /// client was not reading. It never runs when the connection closes first; after a flush
    /// that closes the connection it may run, and responder calls then do nothing.
    ///
    /// - Parameter work: What to run (typically more responder calls).
    public func whenFlushed(_ work: @escaping @Sendable () -> Void) {
        let number = requestNumber
        connection.run { $0.whenFlushed(requestNumber: number, work) }
    }

    /// Sends what is queued, then closes the connection (FIN). Completes the request.
    public func closeConnection() {
        let number = requestNumber
        connection.run { $0.closeAfterFlush(requestNumber: number) }
    }

    /// Closes the connection at once with a TCP reset (RST), discarding queued bytes.
    /// Completes the request.
    public func resetConnection() {
        let number = requestNumber
        connection.run { $0.reset(requestNumber: number) }
    }

    /// Sends what is queued, then shuts down the sending side (FIN) while still
    /// reading: further bytes from the client are discarded until it closes or the
    /// idle timeout passes. Completes the request.
    public func shutdownWrite() {
        let number = requestNumber
        connection.run { $0.shutdownWriteAfterFlush(requestNumber: number) }
    }

    /// Runs `work` on the connection's loop after `delay`, for responses sent in pieces.
    ///
    /// - Parameters:
    ///   - delay: How long to wait.
    ///   - work: What to run (typically more responder calls).
    /// - Returns: The timer, for cancelling.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> EventLoop.Timer {
        eventLoop.scheduleTimer(after: delay, work)
    }
}

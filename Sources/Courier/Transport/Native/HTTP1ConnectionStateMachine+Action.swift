import CourierWire
import Foundation

extension HTTP1ConnectionStateMachine {
    /// What the driver must do after an event: one thing per event, so that no event allocates
    /// a list. Reading returns one action per step; the driver calls
    /// ``HTTP1ConnectionStateMachine/bytesRead(_:cursor:at:)`` again until it returns `.none`.
    enum Action {
        /// Nothing to do.
        case none

        // MARK: Establishing

        /// Resolve and connect; make the timer fire no later than the deadline.
        case startConnecting(timerAt: UInt64)
        /// Open the tunnel through the proxy on the connected socket (`CONNECT` or SOCKS5); report
        /// ``HTTP1ConnectionStateMachine/tunnelEstablished(at:)`` or
        /// ``HTTP1ConnectionStateMachine/establishmentFailed(_:)``.
        case startTunnel
        /// Start the TLS handshake on the connected socket.
        case startHandshake
        /// The connection is usable: report it ready to the pool.
        case reportReady
        /// The connect took too long: tell the connector (it reports the failure).
        case timeOutConnector

        // MARK: Writing

        /// Write what is pending of the request; make the timer fire no later than the deadline.
        case send(timerAt: UInt64)
        /// The request's last byte was written: record it, and watch the socket for reading only.
        case requestWritten
        /// Nothing more to write: watch the socket for reading only.
        case watchReadable
        /// The head of a request that expects `100 Continue` was written: hold its body, watch the
        /// socket for reading only, and make the timer fire no later than the deadline (when the
        /// body goes anyway).
        case awaitContinue(timerAt: UInt64)
        /// The server said `100 Continue` (or the wait for it ended): write the body now (from a
        /// read, once the rest of the read's bytes were taken), and make the timer fire no later
        /// than the deadline (the request's silence timeout, counted from now).
        case sendBody(timerAt: UInt64)
        /// Writing failed before any response byte came: watch for reading, read what the server
        /// answered anyway, then report ``HTTP1ConnectionStateMachine/writeFailureDrained(_:)``.
        case readAfterWriteFailure(SocketError?)

        // MARK: Timers

        /// Make the timer fire no later than the deadline (monotonic nanoseconds).
        case armTimer(UInt64)

        // MARK: The response

        /// The final response head arrived: give it to the exchange's observer.
        case deliverHead(HTTPResponse.Head)
        /// Body bytes arrived: give them to the observer, which asked for them (after content
        /// decoding), or to the exchange of a streamed body (still content-coded, if the body
        /// is: the exchange decodes as its reader takes the bytes).
        case deliverBody(Data, bytesSoFar: Int64, expectedTotal: Int64?)
        /// The consumer of a streamed body holds enough: stop reading the socket (writing may go on).
        case stopReading
        /// The consumer wants more: read the socket again; make the timer fire no later than the
        /// deadline.
        case resumeReading(timerAt: UInt64)
        /// The request succeeded. A reusable connection goes back to the pool; otherwise it closes.
        case complete(HTTPResponse, reusable: Bool)
        /// The request failed: end it with the error and close the connection.
        case fail(HTTPConnectionError)
        /// The pooled connection was stale: close it; the request goes out once more on a fresh
        /// connection.
        case retryOnFreshConnection

        // MARK: Closing

        /// Close the connection, which carries no request. `establishmentError` is set when it
        /// never became ready: the pool fails a waiting request with it.
        case close(establishmentError: HTTPConnectionError?)
    }
}

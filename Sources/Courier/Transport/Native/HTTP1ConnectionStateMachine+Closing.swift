import CourierWire

extension HTTP1ConnectionStateMachine {
    // MARK: - Closing

    /// Closes the connection: a request on it fails with `error` (a broken socket, a TLS
    /// failure, the transport shutting down); a connection that never became ready reports that
    /// it closed while connecting.
    mutating func close(failing error: HTTPConnectionError? = nil) -> Action {
        switch state {
        case .closed:
            return .none
        case .busy:
            return failRequest(error ?? .connectionLost.with(detail: "the connection to \(configuration.origin) closed"))
        case .idle:
            state = .closed
            return .close(establishmentError: nil)
        case .initial, .connecting, .tunnelling, .handshaking:
            state = .closed
            return .close(establishmentError: .cannotConnect.with(detail: "closed while connecting to \(configuration.origin)"))
        }
    }

    /// Ends the current request with `error`; the connection closes (its state is unknown).
    mutating func failRequest(_ error: HTTPConnectionError) -> Action {
        state = .closed
        return .fail(error)
    }

    /// The connection ended before any byte of the response: on a reused connection this is a
    /// stale keep-alive connection, and a request that is safe to repeat goes out once more on a
    /// fresh one: an idempotent one, or one the server cannot have acted on (nothing of it was
    /// written, or only the head of one whose body waited for `100 Continue`).
    mutating func closedBeforeResponse(_ error: SocketError?) -> Action {
        state = .closed
        guard let request else { return .close(establishmentError: nil) }
        if isReused, !request.isRetry, request.isIdempotent || bytesSent == 0 || !bodyMayHaveGone {
            return .retryOnFreshConnection
        }
        if isReused {
            return .fail(.staleConnection.with(
                detail: "\(configuration.origin) closed the pooled connection; \(request.method) is not safe to repeat", underlying: error))
        }
        return .fail(.connectionLost.with(detail: "\(configuration.origin) closed the connection without answering", underlying: error))
    }
}

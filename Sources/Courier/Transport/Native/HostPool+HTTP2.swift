import CourierWire

/// The pool's side of HTTP/2 connections: taking one over from the connection that
/// established it, and carrying out the multiplexing events of ``PoolStateMachine``.
extension HostPool {
    /// Starts several requests on one HTTP/2 connection, in queue order, in one write.
    func executeAll(_ ids: [RequestID], on connectionID: ConnectionID) {
        var taken: [NativeExchange] = []
        for id in ids {
            guard let exchange = exchanges.removeValue(forKey: id) else { continue }
            exchange.stopWaitCheck()
            taken.append(exchange)
        }
        guard let connection = http2Connections[connectionID] else {
            // The machine and the pool always agree on open connections; this cannot happen.
            for exchange in taken {
                exchange.finish(.failure(.transportFailed.with(detail: "the pool lost connection \(connectionID)")))
            }
            return
        }
        connection.execute(taken)
    }

    /// `connection` negotiated HTTP/2 (or speaks it by prior knowledge) and handed its socket to
    /// `successor`, which takes its place; it reports ready once the server's SETTINGS arrive.
    func connectionUpgraded(_ connection: HTTP1ClientConnection, to successor: HTTP2ClientConnection) {
        let id = connection.poolID
        guard connections[id] === connection else {
            successor.close(establishmentError: nil)
            return
        }
        connections[id] = nil
        http2Connections[id] = successor
        successor.pool = self
        successor.context = context
    }

    /// An HTTP/2 connection received the server's SETTINGS: it takes up to `capacity` requests.
    func http2ConnectionReady(_ connection: HTTP2ClientConnection, capacity: Int) {
        perform(machine.connectionReadyMultiplexed(connection.poolID, capacity: capacity, at: EventLoop.now()))
    }

    /// The server changed how many requests the connection may carry at once.
    func http2CapacityChanged(_ connection: HTTP2ClientConnection, capacity: Int) {
        perform(machine.capacityChanged(connection.poolID, capacity: capacity, at: EventLoop.now()))
    }

    /// The server sent GOAWAY: the connection takes nothing new.
    func http2ConnectionDraining(_ connection: HTTP2ClientConnection) {
        perform(machine.connectionDraining(connection.poolID))
    }

    /// A request on an HTTP/2 connection ended (the connection ends the exchange right after).
    func http2StreamEnded(_ connection: HTTP2ClientConnection, _ exchange: NativeExchange) {
        guard let id = exchange.poolID else { return }
        perform(machine.streamEnded(id, on: connection.poolID, at: EventLoop.now()))
    }

    /// The server did not process the exchange (GOAWAY, REFUSED_STREAM): it is placed again.
    func http2Requeue(_ connection: HTTP2ClientConnection, _ exchange: NativeExchange) {
        guard let id = exchange.poolID else { return }
        perform(machine.streamEnded(id, on: connection.poolID, at: EventLoop.now()))
        exchanges[id] = exchange
        let previous = exchange.requeues
        exchange.requeues += 1
        perform(machine.requeue(id, previousRequeues: previous, timeout: exchange.timeout, at: EventLoop.now()))
    }

    /// An HTTP/2 connection closed. `establishmentError` is set when it never became ready.
    func http2ConnectionClosed(_ connection: HTTP2ClientConnection, establishmentError: HTTPConnectionError?) {
        let id = connection.poolID
        guard http2Connections[id] === connection else { return }
        http2Connections[id] = nil
        perform(machine.connectionClosed(id, error: establishmentError))
    }
}

import CourierWire

extension HTTP1ClientConnection {
    /// Carries out what the machine decided. `graceful` lets a closing TLS session send
    /// close_notify first.
    func perform(_ action: HTTP1ConnectionStateMachine.Action, graceful: Bool = false) {
        switch action {
        case .none:
            break
        case .startConnecting(let timerAt):
            armWatchdog(deadline: timerAt)
            startConnector()
        case .startTunnel:
            startTunnel()
        case .startHandshake:
            startHandshake()
        case .reportReady:
            becomeReady()
        case .timeOutConnector:
            connector?.timeout()  // reports through connectorFinished
        case .send(let timerAt):
            armWatchdog(deadline: timerAt)
            sendRequest()
        case .requestWritten:
            exchange?.timeline.recordRequestWritten(at: EventLoop.now())
            setInterest(machine.readPaused ? [] : .readable)
        case .watchReadable:
            setInterest(machine.readPaused ? [] : .readable)
        case .awaitContinue(let timerAt):
            armWatchdog(deadline: timerAt)
            setInterest(machine.readPaused ? [] : .readable)
        case .sendBody(let timerAt):
            armWatchdog(deadline: timerAt)
            exchange?.bodyReleased()
            sendHeldBody()
        case .readAfterWriteFailure(let error):
            setInterest(.readable)
            if machine.isEstablished { readAvailable() }
            perform(machine.writeFailureDrained(error))
        case .armTimer(let deadline):
            armWatchdog(deadline: deadline)
        case .deliverHead(let head):
            exchange?.headArrived(head, decoding: machine.takeStreamedDecoding())
        case .deliverBody(let bytes, let soFar, let expected):
            guard let exchange else { return }
            guard exchange.stream != nil else {
                if exchange.observesBody {
                    exchange.observer.transportDidReceiveBody(bytes, bytesSoFar: soFar, expectedTotal: expected)
                }
                return
            }
            switch exchange.deliverStreamed(bytes, bytesSoFar: soFar, expectedTotal: expected) {
            case .goOn:
                break
            case .pause:
                perform(machine.consumerPaused())
            case .fail(let error):
                perform(machine.cancel(with: error))
            }
        case .stopReading:
            setInterest(machine.isWriting ? .writable : [])
        case .resumeReading(let timerAt):
            armWatchdog(deadline: timerAt)
            setInterest(machine.isWriting ? [.readable, .writable] : .readable)
        case .complete(let response, let reusable):
            let exchange = detach()
            if reusable, let pool {
                setInterest(.readable)  // a streamed body may have paused reading; idle needs it
                pool.release(self)
                exchange?.finish(.success(response))
            } else {
                // The caller first: one on another thread prepares its next request while the
                // loop tears the connection down (TLS session freed, socket closed). The loop
                // takes that request only after the pool has heard of the close.
                exchange?.finish(.success(response))
                closeConnection(graceful: false, establishmentError: nil)
            }
        case .fail(let error):
            let exchange = detach()
            closeConnection(graceful: graceful, establishmentError: nil)
            exchange?.finish(.failure(error))
        case .retryOnFreshConnection:
            let pool = self.pool
            let exchange = detach()
            closeConnection(graceful: false, establishmentError: nil)
            guard let exchange else { return }
            exchange.staleRetries = 1
            if let pool {
                pool.retryOnFreshConnection(exchange)
            } else {
                exchange.finish(.failure(NativeErrors.shutDown))
            }
        case .close(let establishmentError):
            closeConnection(graceful: graceful, establishmentError: establishmentError)
        }
    }

    /// Takes the current exchange off the connection, with what its body cost on the wire.
    func detach() -> NativeExchange? {
        let current = exchange
        exchange = nil
        current?.wireBodyBytes = machine.body.wireBytes
        return current
    }

    /// Ends the pool's request `requestID` with `error` if it is the one in progress, and closes
    /// the connection (its state is unknown then).
    func abort(requestID: PoolStateMachine.RequestID, with error: HTTPConnectionError) {
        guard let exchange, exchange.poolID == requestID else { return }
        perform(machine.cancel(with: error))
    }
}

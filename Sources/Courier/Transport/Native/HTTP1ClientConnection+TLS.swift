import CourierTLS
import CourierWire

extension HTTP1ClientConnection {
    /// Starts the TLS handshake on a connected socket (SNI and verification per the context).
    func startTLS(_ context: TLSContext) {
        do {
            tls = try TLSClientSession(context: context, serverName: key.host)
        } catch {
            failEstablishment(NativeErrors.tls(error))
            return
        }
        state = .handshaking
        setInterest(.readable)
        handshakeStep()
    }

    /// Reads handshake bytes from the server and advances the handshake.
    func readHandshake() {
        guard let context, let socket, let tls else { return }
        let buffer = context.readBuffer
        reading: while true {
            let result: Socket.IOResult
            do {
                result = try socket.read(into: buffer)
            } catch {
                failEstablishment(.tlsFailed.with(detail: "the connection to \(key) broke during the TLS handshake", underlying: error))
                return
            }
            switch result {
            case .bytes(let count):
                lastProgress = EventLoop.now()
                tls.feedCiphertext(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                if count < buffer.count { break reading }
            case .wouldBlock:
                break reading
            case .closed:
                tls.feedEndOfInput()
                break reading
            }
        }
        handshakeStep()
    }

    /// Runs the handshake as far as the bytes received allow, and sends what it produced.
    private func handshakeStep() {
        guard let tls else { return }
        let outcome = Result { () throws(TLSError) in try tls.handshake() }
        takeCiphertext()
        flush()
        guard state == .handshaking else { return }
        switch outcome {
        case .success(.complete):
            becomeReady()
            // Application data that arrived with the last handshake flight.
            drainPlaintext()
        case .success(.wantsMoreInput):
            return
        case .failure(let error):
            failEstablishment(NativeErrors.tls(error))
        }
    }
}

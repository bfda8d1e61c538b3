import CourierTLS
import CourierWire

extension HTTP1ClientConnection {
    /// Starts the TLS handshake on a connected socket (SNI and verification per the context).
    func startTLS(_ context: TLSContext) {
        do {
            tls = try TLSClientSession(context: context, serverName: key.host, port: key.port)
        } catch {
            perform(machine.establishmentFailed(NativeErrors.tls(error)))
            return
        }
        setInterest(.readable)
        handshakeStep()
    }

    /// The most reads one readiness event handles during the handshake; level-triggered epoll
    /// reports the rest.
    static let handshakeReadsPerWakeup = 16

    /// Reads handshake bytes from the server and advances the handshake after every read, so the
    /// session never buffers more than one read of unprocessed ciphertext, however fast the peer
    /// sends: a peer that streams garbage fails at its first record.
    func readHandshake() {
        guard let context, let socket, let tls else { return }
        let buffer = context.readBuffer
        for _ in 0..<Self.handshakeReadsPerWakeup where isHandshaking {
            let result: Socket.IOResult
            do {
                result = try socket.read(into: buffer)
            } catch {
                perform(machine.establishmentFailed(.tlsFailed.with(
                    detail: "the connection to \(key) broke during the TLS handshake", underlying: error)))
                return
            }
            switch result {
            case .bytes(let count):
                tls.feedCiphertext(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                handshakeStep()
                if count < buffer.count { return }
            case .wouldBlock:
                return
            case .closed:
                tls.feedEndOfInput()
                handshakeStep()
                return
            }
        }
    }

    /// Runs the handshake as far as the bytes received allow, and sends what it produced.
    private func handshakeStep() {
        guard let tls else { return }
        let outcome = Result { () throws(TLSError) in try tls.handshake() }
        takeCiphertext()
        flush()
        guard isHandshaking else { return }
        switch outcome {
        case .success(.complete):
            perform(machine.handshakeCompleted(at: EventLoop.now()))
            // Application data that arrived with the last handshake flight.
            drainPlaintext()
        case .success(.wantsMoreInput):
            return
        case .failure(let error):
            perform(machine.establishmentFailed(NativeErrors.tls(error)))
        }
    }

    /// Whether the machine is in the TLS handshake.
    private var isHandshaking: Bool {
        if case .handshaking = machine.state { return true }
        return false
    }
}

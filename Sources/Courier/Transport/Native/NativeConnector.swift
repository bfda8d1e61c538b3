import CourierWire

/// Opens the TCP connection of one ``HTTP1ClientConnection`` (to the origin, or to its proxy,
/// ``NativePoolKey/firstHop``): takes the addresses from an
/// override, a literal or DNS, then races them per Happy Eyeballs (RFC 8305) by executing the
/// actions of a ``HappyEyeballsMachine`` with real sockets on the loop.
///
/// Loop-confined. It reports exactly once through its completion, unless cancelled first; every
/// socket it opened is closed by then, except the winner's, which it hands over deregistered.
/// Each step of the connect sequence has one place: DNS starts in ``start(_:)`` and ends in
/// `resolved(_:)`; every connect attempt starts in `startAttempt(_:to:)`; the race ends in
/// `report(_:)`.
final class NativeConnector {
    /// The outcome: the connected socket (no longer registered on the loop; the receiver owns
    /// it) or the error for the request.
    typealias Completion = (Result<Socket, HTTPConnectionError>) -> Void

    private let key: NativePoolKey
    private let loop: EventLoop
    private let settings: NativeSettings
    private var machine: HappyEyeballsMachine
    /// The open sockets of pending attempts, by attempt number.
    private var attempts: [Int: Socket] = [:]
    private var attemptTimer: EventLoop.Timer?
    private var completion: Completion?
    /// Its own handle, for timer and resolver closures; cleared when the race ends.
    private var selfBound: LoopBound<NativeConnector>?
    /// Actions not yet performed: events fed while performing one queue theirs behind it.
    private var queued: [HappyEyeballsMachine.Action] = []
    /// When resolution and the first connect attempt began and ended (``ConnectionTimeline``'s
    /// resolve and connect fields); the connection reads it when the race ends.
    private(set) var timeline = ConnectionTimeline()
    private var performing = false

    /// Creates a connector for `key`'s host and port on `loop`; call ``start(_:)`` on the loop.
    init(key: NativePoolKey, loop: EventLoop, settings: NativeSettings) {
        self.key = key
        self.loop = loop
        self.settings = settings
        self.machine = HappyEyeballsMachine(attemptDelay: settings.connectionAttemptDelay)
    }

    /// Finds the addresses and starts the race. `completion` may run before this returns (a
    /// literal or overridden address that connects or fails at once).
    func start(_ completion: @escaping Completion) {
        let bound = LoopBound(self, on: loop)
        self.completion = completion
        selfBound = bound
        if let path = key.unixSocketPath {
            connectUnixSocket(path)
            return
        }
        let hop = key.firstHop
        if let known = settings.resolver.knownAddresses(host: hop.host, port: hop.port) {
            perform(machine.resolved(known))
            return
        }
        timeline.resolveStart = EventLoop.now()
        settings.resolver.resolve(host: hop.host, port: hop.port, on: loop) { result in
            bound.value.resolved(result)
        }
    }

    /// The connect timeout passed: closes every attempt and reports ``HTTPConnectionError/timedOut``.
    func timeout() {
        perform(machine.timedOut())
    }

    /// Gives up without reporting: closes every attempt and releases the completion.
    func cancel() {
        completion = nil
        perform(machine.cancel())
        finish()
    }

    /// Connects to a Unix domain socket: no name to resolve and no race, since it connects or
    /// fails at once.
    private func connectUnixSocket(_ path: String) {
        timeline.connectStart = EventLoop.now()
        let result = Result { () throws(SocketError) in try Socket.connect(unixPath: path) }
        report(result.mapError { NativeErrors.unixSocket($0, path: path, key: key) })
    }

    private func resolved(_ result: Result<[SocketAddress], SocketError>) {
        timeline.resolveEnd = EventLoop.now()
        switch result {
        case .success(let addresses): perform(machine.resolved(addresses))
        case .failure(let error): perform(machine.resolutionFailed(error))
        }
    }

    // MARK: - Performing the machine's actions

    /// Performs `actions` in order, then whatever the events they cause return.
    private func perform(_ actions: [HappyEyeballsMachine.Action]) {
        queued += actions
        guard !performing else { return }
        performing = true
        // Bounded: each address is attempted once, so the machine returns finitely many actions.
        while !queued.isEmpty {
            let action = queued.removeFirst()
            switch action {
            case .startAttempt(let attempt, let address):
                startAttempt(attempt, to: address)
            case .armAttemptTimer(let generation, let delay):
                attemptTimer?.cancel()
                attemptTimer = selfBound.map { bound in
                    loop.scheduleTimer(after: delay) { bound.value.attemptDelayElapsed(generation: generation) }
                }
            case .cancelAttemptTimer:
                attemptTimer?.cancel()
                attemptTimer = nil
            case .closeAttempt(let attempt):
                if let socket = attempts.removeValue(forKey: attempt) {
                    loop.deregister(fd: socket.descriptor)
                    socket.close()
                }
            case .connected(let attempt):
                guard let socket = attempts.removeValue(forKey: attempt) else {
                    report(.failure(.cannotConnect.with(detail: "\(key): the connected socket was lost")))
                    break
                }
                loop.deregister(fd: socket.descriptor)
                report(.success(socket))
            case .failed(let failure):
                report(.failure(error(for: failure)))
            }
        }
        performing = false
    }

    /// Opens a socket and starts connecting; an attempt that fails at once reports so at once.
    private func startAttempt(_ attempt: Int, to address: SocketAddress) {
        if timeline.connectStart == nil { timeline.connectStart = EventLoop.now() }
        do throws(SocketError) {
            let (socket, result) = try Socket.connect(to: address)
            do throws(SocketError) {
                try loop.register(fd: socket.descriptor, interest: .writable) { [self] _ in
                    self.attemptReady(attempt)
                }
            } catch {
                socket.close()
                throw error
            }
            attempts[attempt] = socket
            if result == .connected { perform(machine.attemptConnected(attempt)) }
        } catch {
            perform(machine.attemptFailed(attempt, error: error))
        }
    }

    /// The attempt delay passed: the next address gets its attempt.
    private func attemptDelayElapsed(generation: Int) {
        perform(machine.attemptDelayElapsed(generation: generation))
    }

    /// An attempt's socket became writable or reported an error: its connect finished.
    private func attemptReady(_ attempt: Int) {
        guard let socket = attempts[attempt] else { return }
        do throws(SocketError) {
            try socket.finishConnect()
        } catch {
            perform(machine.attemptFailed(attempt, error: error))
            return
        }
        perform(machine.attemptConnected(attempt))
    }

    /// The race ended: hands the outcome over, once.
    private func report(_ result: Result<Socket, HTTPConnectionError>) {
        let completion = self.completion
        self.completion = nil
        finish()
        if let completion {
            completion(result)
        } else if case .success(let socket) = result {
            socket.close()
        }
    }

    /// Releases the timer and the connector's own handle.
    private func finish() {
        attemptTimer?.cancel()
        attemptTimer = nil
        selfBound = nil
    }

    /// The request's error for a failed race.
    private func error(for failure: HappyEyeballsMachine.Failure) -> HTTPConnectionError {
        switch failure {
        case .resolutionFailed(let error):
            return NativeErrors.connect(error, key: key)
        case .noAddresses:
            if let proxy = key.proxy { return .proxyUnreachable.with(detail: "\(proxy): no address to connect to") }
            return .cannotResolveHost.with(detail: "\(key.host): no address to connect to")
        case .allAttemptsFailed(let last):
            let tried = machine.addresses.count
            let error = NativeErrors.connect(last, key: key)
            return tried > 1 ? error.with(detail: "\(key): \(tried) addresses tried, the last failed: \(last.description)") : error
        case .timedOut(let last):
            let limit = Duration.nanoseconds(Int64(clamping: settings.connectTimeout))
            let attempt = last.map { "; the last failed attempt: \($0.description)" } ?? ""
            return .timedOut.with(detail: "connecting to \(key) timed out after \(limit)\(attempt)", underlying: last)
        }
    }
}

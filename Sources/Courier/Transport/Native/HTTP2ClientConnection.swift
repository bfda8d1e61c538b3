import CourierHTTP2
import CourierTLS
import CourierWire
import Foundation

/// One HTTP/2 connection of the native transport: the driver of an
/// ``HTTP2ConnectionStateMachine`` on its pool's event loop.
///
/// An ``HTTP1ClientConnection`` establishes the connection (resolve, connect, tunnel, TLS); when
/// ALPN picked `h2`, or HTTP/2 is spoken by prior knowledge, it hands its socket and TLS session
/// over to a new `HTTP2ClientConnection` (``HTTP1ClientConnection/handOverToHTTP2()``), which
/// takes its place in the pool. It writes the preface and SETTINGS, and reports itself ready to
/// the pool when the server's SETTINGS arrive, with the server's stream limit as its capacity.
///
/// The machine decides; this class does the I/O: it reads and decrypts, feeds the machine,
/// writes what the machine asks (coalesced until the end of the loop's turn, so the requests
/// and window updates of one turn leave in one system call, in as few TLS records as their
/// size allows), hands each stream's
/// head and body to its exchange (``HTTP2ResponseAssembler`` applies the limits and content
/// decoding), and runs one watchdog timer for the SETTINGS acknowledgement and each stream's
/// silence timeout.
///
/// Loop-confined: used and closed on its pool's loop thread only. Once closed it is never used
/// again.
final class HTTP2ClientConnection {
    /// One request in flight on the connection.
    struct Stream {
        let exchange: NativeExchange
        var response: HTTP2ResponseAssembler
        /// When its silence timeout ends (progress moves it).
        var deadline: UInt64
        /// Whether its streamed body's consumer stopped reading (no timeout meanwhile).
        var paused = false
        /// Whether the connection had carried a whole response before this stream started: only
        /// then may a lost connection be a stale one, whose unanswered idempotent requests go out again.
        var afterResponse = false
    }

    let key: NativePoolKey
    let loop: EventLoop
    let settings: NativeSettings
    /// Its id in the pool's state machine (the id of the connection it took over from).
    let poolID: PoolStateMachine.ConnectionID
    /// When it resolved, connected and shook hands.
    let timeline: ConnectionTimeline
    /// The pool that owns it; cleared when it closes.
    var pool: HostPool?
    /// The loop's shared buffers.
    var context: NativeLoopContext?
    /// Its own handle, for timer closures; cleared when it closes.
    var selfBound: LoopBound<HTTP2ClientConnection>?

    /// The protocol logic.
    var machine: HTTP2ConnectionStateMachine
    var socket: Socket?
    var tls: TLSClientSession?
    /// The `https://` proxy's session that ``tls`` runs inside, for an origin in its tunnel.
    var proxyTLS: TLSClientSession?
    private var interest = EventLoop.Interest.none
    /// Octets waiting to be written (ciphertext over TLS), from ``outboundOffset``.
    var outbound: [UInt8] = []
    var outboundOffset = 0
    /// Over TLS, frames not yet encrypted: they become one record (or a few) when flushed.
    var pendingPlaintext: [UInt8] = []
    /// Whether a flush waits for the end of the loop's turn.
    var flushScheduled = false
    /// Whether the server stopped taking bytes: nothing more is queued or written while what it
    /// sent before is read (``writeFailed(_:)``).
    private var writesFailed = false

    /// The requests in flight, by stream id.
    var streams: [UInt32: Stream] = [:]
    /// The streams whose body is read from an upload (a file, a stream, a form) as windows allow.
    var uploading: Set<UInt32> = []
    /// The octets written to the socket so far.
    private var octetsWritten = 0
    /// The streams whose HEADERS no write has reached yet, each with the position in the
    /// connection's outgoing octets (counted like ``octetsWritten``) at or after which they
    /// were queued, in the order queued (so positions never decrease): when the connection is
    /// lost, the server cannot have seen them, so they go out on another connection whatever
    /// their method. Streams leave from the front once the writes pass their positions, in
    /// place (a write allocates nothing).
    var unwrittenStreams: [(id: UInt32, position: Int)] = []
    /// The streams whose request is not yet known to be all on the wire, oldest first: only
    /// these are looked at when the queue empties (not every stream in flight).
    var requestsBeingWritten: [UInt32] = []
    /// The stream of each pool request in flight.
    var streamOfRequest: [PoolStateMachine.RequestID: UInt32] = [:]
    /// Whether the pool was told the connection is ready, the capacity it was told, and
    /// whether it was told of a GOAWAY.
    var isReady = false
    var reportedCapacity = 0
    var reportedDraining = false
    /// How many streams were started (a stream after the first runs on a reused connection).
    var streamsStarted = 0
    /// How many streams ended with their response (see ``Stream/afterResponse``).
    var responsesCarried = 0
    /// When the server must have acknowledged our SETTINGS.
    var settingsDeadline: UInt64 = 0
    var watchdog: EventLoop.Timer?
    var watchdogDeadline: UInt64 = 0
    private(set) var isClosed = false

    /// Takes over an established connection.
    /// - Parameters:
    ///   - socket: the connected socket, not registered with the loop.
    ///   - tls: its TLS session (ALPN picked `h2`), or `nil` for h2c.
    ///   - proxyTLS: the `https://` proxy's session that `tls` runs inside, if any.
    ///   - pendingOutput: what the handshake left unwritten, as it goes to the socket.
    init(key: NativePoolKey, loop: EventLoop, settings: NativeSettings, poolID: PoolStateMachine.ConnectionID,
         timeline: ConnectionTimeline, socket: Socket, tls: TLSClientSession?, proxyTLS: TLSClientSession?,
         pendingOutput: [UInt8]) {
        self.key = key
        self.loop = loop
        self.settings = settings
        self.poolID = poolID
        self.timeline = timeline
        self.socket = socket
        self.tls = tls
        self.proxyTLS = proxyTLS
        self.outbound = pendingOutput
        var configuration = HTTP2ConnectionStateMachine.Configuration()
        configuration.maxHeaderListSize = max(settings.limits.maxHeadBytes, 4096)
        // A streamed body's consumer may fall behind while a read's DATA is delivered: stream
        // windows go back only after delivery, so that a stream paused on the way keeps its own.
        configuration.returnsStreamWindowsOnReceive = false
        self.machine = HTTP2ConnectionStateMachine(configuration: configuration)
        settings.census.connection(1)
    }

    deinit {
        settings.census.connection(-1)
    }

    // MARK: - Starting

    /// Registers the socket, writes the preface and SETTINGS, and processes what the server
    /// sent with the end of the TLS handshake.
    func start() {
        guard let socket else { return }
        do {
            try loop.register(fd: socket.descriptor, interest: .readable) { [self] readiness in
                self.handle(readiness)
            }
        } catch {
            socket.close()
            self.socket = nil
            close(establishmentError: NativeErrors.io(error))
            return
        }
        interest = .readable
        settingsDeadline = EventLoop.now() &+ settings.connectTimeout
        armWatchdog(deadline: settingsDeadline)
        perform(machine.start())
        if tls != nil { drainPlaintext() }
        flush()
    }

    // MARK: - Reading

    /// The most reads one readiness event makes; level-triggered epoll reports the rest.
    static let readsPerWakeup = 16

    private func handle(_ readiness: EventLoop.Readiness) {
        guard !isClosed else { return }
        if readiness.contains(.writable) { flush() }
        if !isClosed, !readiness.isDisjoint(with: [.readable, .hangup, .error]) { readAvailable() }
    }

    /// Reads what the socket has and hands it to the machine.
    private func readAvailable() {
        guard let context, let socket else { return }
        let buffer = context.readBuffer
        for _ in 0..<Self.readsPerWakeup where !isClosed {
            let result: Socket.IOResult
            do {
                result = try socket.read(into: buffer)
            } catch {
                lost(.connectionLost.with(detail: "the HTTP/2 connection to \(key) broke", underlying: error))
                return
            }
            switch result {
            case .bytes(let count):
                pool?.progress(at: EventLoop.now())
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                if tls != nil {
                    feedTLS(bytes)
                    drainPlaintext()
                } else {
                    receive(bytes)
                }
                if count < buffer.count {
                    scheduleFlush()
                    return
                }
            case .wouldBlock:
                scheduleFlush()
                return
            case .closed:
                if tls != nil {
                    feedTLS(nil)
                    drainPlaintext()
                }
                lost(.connectionLost.with(detail: "the server closed the HTTP/2 connection to \(key)"))
                return
            }
        }
        scheduleFlush()
    }

    /// Decrypts every complete TLS record and hands the plaintext to the machine.
    private func drainPlaintext() {
        guard let context else { return }
        while !isClosed, let tls {
            let result = Result { () throws(TLSError) in try tls.readPlaintext(into: context.plainBuffer) }
            switch result {
            case .success(.bytes(let count)):
                if count == 0 { return }
                receive(UnsafeRawBufferPointer(rebasing: context.plainBuffer[..<count]))
            case .success(.wantsMoreInput):
                if tls.pendingCiphertextCount > 0 { takeCiphertext() }
                return
            case .success(.closed):
                lost(.connectionLost.with(detail: "the server closed the HTTP/2 connection to \(key)"))
                return
            case .failure(let error) where error == .uncleanShutdown:
                // The socket ended without close_notify: a closed connection (as on HTTP/1.1),
                // not a TLS failure.
                lost(.connectionLost.with(detail: "the server closed the HTTP/2 connection to \(key) without close_notify"))
                return
            case .failure(let error):
                lost(NativeErrors.tls(error))
                return
            }
        }
    }

    /// Feeds plaintext to the machine and carries out its actions: first what it writes, then
    /// the pool hears what changed (a new stream limit, a GOAWAY), then the streams' events.
    /// In that order, a stream that ended in this read frees a slot by the limit the server
    /// set in it: by the old one, the pool would place a waiting request for which the machine
    /// has no stream, and each such try would count as a refusal by the server.
    private func receive(_ bytes: UnsafeRawBufferPointer) {
        let actions = machine.receive(Array(bytes))
        let writes = actions.prefix { if case .write = $0 { true } else { false } }
        perform(Array(writes))
        reportToPool()
        perform(Array(actions.dropFirst(writes.count)))
        perform(machine.returnStreamWindows())
        reportToPool()
        // A WINDOW_UPDATE may have let buffered body out: read more of the uploads.
        if !uploading.isEmpty {
            for id in uploading.sorted() { pumpUpload(id) }
        }
    }

    /// Tells the pool what changed: ready (the server's first SETTINGS), a new stream limit,
    /// a GOAWAY.
    func reportToPool() {
        guard !isClosed, let pool else { return }
        reportDrainingIfNeeded()
        let capacity = machine.peerStreamLimit
        if !isReady, machine.hasReceivedPeerSettings {
            isReady = true
            reportedCapacity = capacity
            pool.http2ConnectionReady(self, capacity: capacity)
        } else if isReady, capacity != reportedCapacity {
            reportedCapacity = capacity
            pool.http2CapacityChanged(self, capacity: capacity)
        }
    }

    /// Tells the pool, once, that the connection takes no new request: after a GOAWAY, before
    /// any request is sent back to the pool, and when the connection is about to close, before
    /// its streams end (each end frees a stream, on which the pool would otherwise place a
    /// waiting request, only for it to come back as refused).
    func reportDrainingIfNeeded() {
        guard machine.isDraining || machine.isClosed, !reportedDraining, let pool else { return }
        reportedDraining = true
        pool.http2ConnectionDraining(self)
    }

    // MARK: - Writing

    /// Queues octets the machine wants written; ``flush()`` writes them. Over TLS they are
    /// encrypted at the flush, together with whatever else was queued by then, or as soon as
    /// 64 KiB wait, so that a large body is not held twice.
    func enqueue(_ bytes: [UInt8]) {
        guard !isClosed, !writesFailed else { return }
        if tls != nil {
            pendingPlaintext.append(contentsOf: bytes)
            if pendingPlaintext.count >= Self.plaintextBatchLimit { encryptPending() }
        } else {
            outbound.append(contentsOf: bytes)
        }
    }

    /// The most plaintext that waits to be encrypted.
    static let plaintextBatchLimit = 64 * 1024

    /// Encrypts the queued plaintext into records at the end of ``outbound``.
    func encryptPending() {
        guard let tls, !pendingPlaintext.isEmpty else { return }
        do throws(TLSError) {
            try tls.writePlaintext(pendingPlaintext)
        } catch {
            lost(NativeErrors.tls(error))
            return
        }
        pendingPlaintext.removeAll(keepingCapacity: pendingPlaintext.capacity <= Self.plaintextBatchLimit)
        takeCiphertext()
    }

    /// Flushes at the end of the loop's turn (once, however often it is asked in the turn), so
    /// that what the turn's events and submitted requests queue leaves together.
    func scheduleFlush() {
        guard !flushScheduled, !isClosed else { return }
        flushScheduled = true
        loop.atEndOfTurn { [self] in
            flushScheduled = false
            flush()
        }
    }

    private func takeCiphertext() {
        guard let tls, let bytes = tls.takeCiphertext() else { return }
        queueForSocket(bytes)
    }

    /// Writes as much of what is queued as the socket takes now.
    func flush() {
        encryptPending()
        guard !isClosed, !writesFailed, let socket else { return }
        while outboundOffset < outbound.count {
            let offset = outboundOffset
            let attempt = outbound.withUnsafeBytes { all in
                Result { () throws(SocketError) in try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
            }
            switch attempt {
            case .success(.bytes(let count)):
                outboundOffset += count
                octetsWritten += count
                let passed = unwrittenStreams.prefix { $0.position < octetsWritten }.count
                if passed > 0 { unwrittenStreams.removeFirst(passed) }
            case .success(.wouldBlock):
                setInterest([.readable, .writable])
                return
            case .success(.closed):
                writeFailed(.connectionLost.with(detail: "the server stopped taking bytes on the HTTP/2 connection to \(key)"))
                return
            case .failure(let error):
                writeFailed(NativeErrors.io(error))
                return
            }
        }
        outbound.removeAll(keepingCapacity: outbound.capacity <= 1 << 20)
        outboundOffset = 0
        setInterest(.readable)
        recordRequestsWritten()
    }

    /// The server stopped taking bytes (`EPIPE`, a reset): what it sent before still counts, so
    /// it is read first (a response it finished before it closed is delivered, as on HTTP/1.1),
    /// with nothing more written; then the connection is lost with `error` (or with what the
    /// read met first).
    private func writeFailed(_ error: HTTPConnectionError) {
        writesFailed = true
        // The connection takes nothing new while what the server sent is read.
        if !reportedDraining, let pool {
            reportedDraining = true
            pool.http2ConnectionDraining(self)
        }
        outbound = []
        outboundOffset = 0
        pendingPlaintext = []
        readAvailable()
        lost(error)
    }

    private func setInterest(_ wanted: EventLoop.Interest) {
        guard wanted != interest, let socket, !isClosed else { return }
        do {
            try loop.modify(fd: socket.descriptor, interest: wanted)
            interest = wanted
        } catch {
            lost(NativeErrors.io(error))
        }
    }

    // MARK: - Closing

    /// The transport under the connection failed or closed: every stream fails with `error`,
    /// except a stale connection's: a request that is safe to repeat, sent on a connection that
    /// had carried a response before and answered with nothing at all, goes out once more on
    /// another connection (as HTTP/1.1 does for a pooled connection the server closed); so does
    /// such a request of which nothing was written (``unwrittenStreams``: placed on the
    /// connection as another stream ended, just before the loss), whatever its method, unless its
    /// body is a stream already read. A stream that started beside others on a connection that
    /// had answered none is not repeated: that connection broke under its first requests, which
    /// the server may have processed.
    func lost(_ error: HTTPConnectionError) {
        guard !isClosed else { return }
        let actions = machine.transportClosed(reason: error.detail ?? "the connection closed")
        reportDrainingIfNeeded()
        var stale: [NativeExchange] = []
        for case .streamFailed(let id, _) in actions {
            if let stream = streams[id], stream.response.head == nil, stream.afterResponse, stream.exchange.staleRetries == 0,
               pool != nil, stream.exchange.isIdempotent || neverWritten(id, stream.exchange) {
                streams[id] = nil
                uploading.remove(id)
                if let requestID = stream.exchange.poolID { streamOfRequest[requestID] = nil }
                stream.exchange.staleRetries = 1
                stale.append(stream.exchange)
            } else {
                endStream(id, with: .failure(error))
            }
        }
        if let pool {
            for exchange in stale { pool.http2Requeue(self, exchange) }
        }
        close(establishmentError: isReady ? nil : error)
    }

    /// Marks stream `id`, about to queue its HEADERS, as not written: its octets come after
    /// everything queued so far (over TLS, the plaintext waiting for encryption is encrypted
    /// after what is already in ``outbound``).
    func queuingHeaders(of id: UInt32) {
        unwrittenStreams.append((id, octetsWritten + outbound.count - outboundOffset))
    }

    /// Whether nothing of stream `id` reached the socket, and its body (a stream already read
    /// into the connection is not) can go again.
    private func neverWritten(_ id: UInt32, _ exchange: NativeExchange) -> Bool {
        unwrittenStreams.contains { $0.id == id } && exchange.request.upload?.wasConsumed != true
    }

    /// Closes for the pool's shutdown or idle expiry: streams fail with the shutdown error; the
    /// server hears GOAWAY(NO_ERROR) and, over TLS, close_notify.
    func shutDown() {
        guard !isClosed else { return }
        enqueue(HTTP2Frame.goAway(lastStreamID: 0, code: .noError, debugData: []).serialized)
        let actions = machine.transportClosed(reason: "shut down")
        for case .streamFailed(let id, _) in actions { endStream(id, with: .failure(NativeErrors.shutDown)) }
        encryptPending()
        if let tls {
            tls.close()
            takeCiphertext()
        }
        closeProxySession()
        writeOnceBeforeClosing()
        close(establishmentError: nil)
    }

    /// One last write of what is queued (GOAWAY, close_notify), without waiting.
    func writeOnceBeforeClosing() {
        encryptPending()
        guard let socket, outboundOffset < outbound.count else { return }
        let offset = outboundOffset
        _ = outbound.withUnsafeBytes { all in
            Result { () throws(SocketError) in try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
        }
    }

    /// Releases the socket, the session and the timer, fails whatever stream is left, and tells
    /// the pool; `establishmentError` is set when the connection never became ready.
    func close(establishmentError: HTTPConnectionError?) {
        guard !isClosed else { return }
        isClosed = true
        if let socket {
            loop.deregister(fd: socket.descriptor)
            socket.close()
        }
        socket = nil
        tls = nil
        proxyTLS = nil
        outbound = []
        outboundOffset = 0
        pendingPlaintext = []
        watchdog?.cancel()
        watchdog = nil
        watchdogDeadline = 0
        selfBound = nil
        let pool = self.pool
        self.pool = nil
        let left = streams
        streams = [:]
        streamOfRequest = [:]
        // The pool forgets the requests of a closed connection; then they end.
        pool?.http2ConnectionClosed(self, establishmentError: establishmentError)
        for (_, stream) in left.sorted(by: { $0.key < $1.key }) {
            stream.exchange.finish(.failure(.connectionLost.with(detail: "the HTTP/2 connection to \(key) closed")))
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CourierWire

/// The part of an ``HTTPServer`` that lives on one event loop: its connections, a
/// shared read buffer and the cached `Date` value. Confined to that loop.
final class LoopContext {
    let loop: EventLoop
    let server: ServerContext
    /// The listening socket, on the first loop only.
    var listener: Socket?
    private var connections: [ObjectIdentifier: HTTPServerConnection] = [:]
    /// One read buffer for all connections of this loop (reads are processed at once).
    let readBuffer: UnsafeMutableRawBufferPointer
    private var cachedDate: (second: Int, text: String) = (-1, "")
    private var acceptPaused = false
    private var nextLoop = 0

    static let readBufferSize = 64 * 1024

    init(loop: EventLoop, server: ServerContext) {
        self.loop = loop
        self.server = server
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: LoopContext.readBufferSize, alignment: 16)
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Takes over an accepted socket: creates its connection and starts reading.
    func adopt(_ socket: Socket, number: Int, remote: SocketAddress?) {
        if server.isShuttingDown.load(ordering: .acquiring) {
            refuse(socket)
            return
        }
        if let size = server.configuration.sendBufferSize {
            try? socket.setOption(level: SOL_SOCKET, name: SO_SNDBUF, value: Int32(clamping: size))
        }
        let connection = HTTPServerConnection(socket: socket, number: number, remote: remote, context: self)
        do {
            // The registration keeps the connection alive until close() deregisters it.
            try loop.register(fd: socket.descriptor, interest: .readable) { readiness in
                connection.handle(readiness)
            }
        } catch {
            refuse(socket)
            return
        }
        connections[ObjectIdentifier(connection)] = connection
        connection.start()
    }

    /// Closes an admitted socket that gets no connection, releasing its place.
    private func refuse(_ socket: Socket) {
        server.connectionClosed()
        socket.close()
    }

    func remove(_ connection: HTTPServerConnection) {
        if connections.removeValue(forKey: ObjectIdentifier(connection)) != nil {
            server.connectionClosed()
        }
    }

    /// Closes the listener (if here) and every connection of this loop.
    func closeAll() {
        if let listener {
            loop.deregister(fd: listener.descriptor)
            listener.close()
            self.listener = nil
        }
        for connection in Array(connections.values) { connection.close() }
    }

    /// Accepts pending connections and spreads them over the server's loops.
    func acceptPending(from listener: Socket, contexts: [LoopBound<LoopContext>]) {
        for _ in 0..<256 {
            let result: Socket.AcceptResult
            do {
                result = try listener.accept()
            } catch {
                // EMFILE, ENFILE, ENOBUFS...: stop accepting for a moment instead of spinning.
                pauseAccepting(listener)
                return
            }
            guard case .accepted(let socket, let remote) = result else { return }
            // Over maxConnections, the new connection is closed before anything is read.
            guard let number = server.admitConnection() else {
                socket.close()
                continue
            }
            if server.configuration.closeConnectionsOnAccept {
                refuse(socket)
                continue
            }
            try? socket.setNoDelay()
            let index = nextLoop % max(contexts.count, 1)
            nextLoop = (nextLoop &+ 1) & 0xFFFF_FFFF
            if contexts.count <= 1 || contexts[index].loop === loop {
                adopt(socket, number: number, remote: remote)
            } else {
                let accepted = contexts[index].run { $0.adopt(socket, number: number, remote: remote) }
                if !accepted { refuse(socket) }
            }
        }
    }

    private func pauseAccepting(_ listener: Socket) {
        guard !acceptPaused else { return }
        acceptPaused = true
        try? loop.modify(fd: listener.descriptor, interest: .none)
        let bound = LoopBound(self, on: loop)
        loop.scheduleTimer(after: .milliseconds(50)) {
            let context = bound.value
            context.acceptPaused = false
            if let current = context.listener {
                try? context.loop.modify(fd: current.descriptor, interest: .readable)
            }
        }
    }

    /// The current `Date` header value (IMF-fixdate), formatted at most once a second.
    func dateHeader() -> String {
        var now = time(nil)
        let second = Int(now)
        if second == cachedDate.second { return cachedDate.text }
        var parts = tm()
        gmtime_r(&now, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let text = "\(days[Int(parts.tm_wday) % 7]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) "
            + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
        cachedDate = (second, text)
        return text
    }
}

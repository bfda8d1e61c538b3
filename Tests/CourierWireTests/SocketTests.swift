import CourierTestServer
import CourierTestSupport
import Dispatch
import Testing
import CourierWire
#if canImport(Glibc)
import Glibc
#endif

/// Waits (bounded) until a non-blocking call stops returning `.wouldBlock`.
func retry<T>(_ body: () throws -> T?, seconds: Double = 5) rethrows -> T? {
    let deadline = DispatchTime.now() + seconds
    while DispatchTime.now() < deadline {
        if let value = try body() { return value }
        usleep(1000)
    }
    return nil
}

func readSome(_ socket: Socket, count: Int = 4096) throws -> Socket.IOResult? {
    var buffer = [UInt8](repeating: 0, count: count)
    return try retry {
        let result = try buffer.withUnsafeMutableBytes { try socket.read(into: $0) }
        return result == .wouldBlock ? nil : result
    }
}

func readString(_ socket: Socket, length: Int) throws -> String {
    var collected: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    _ = try retry { () -> Bool? in
        let result = try buffer.withUnsafeMutableBytes { try socket.read(into: $0) }
        if case .bytes(let count) = result { collected += buffer[0..<count] }
        if result == .closed { return true }
        return collected.count >= length ? true : nil
    }
    return String(decoding: collected, as: UTF8.self)
}

func connectedPair(host: String = "127.0.0.1") throws -> (listener: Socket, client: Socket, server: Socket) {
    let listener = try Socket.listen(host: host, port: 0)
    let port = try listener.localAddress().port
    guard let target = SocketAddress(ip: host, port: port) else { throw SocketError(operation: "test", message: "address") }
    let (client, state) = try Socket.connect(to: target)
    if state == .inProgress {
        _ = retry { () -> Bool? in
            var poller = pollfd(fd: client.descriptor, events: Int16(POLLOUT), revents: 0)
            return poll(&poller, 1, 10) > 0 ? true : nil
        }
        try client.finishConnect()
    }
    let accepted = try retry { () -> Socket? in
        if case .accepted(let socket, _) = try listener.accept() { return socket }
        return nil
    }
    guard let server = accepted else { throw SocketError(operation: "accept", message: "timed out") }
    return (listener, client, server)
}

@Suite("Socket", .ownThread)
struct SocketTests {
    @Test("a listener on port 0 reports the port the kernel picked")
    func listenPortZero() throws {
        let listener = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        let address = try listener.localAddress()
        #expect(address.port > 0)
        #expect(address.host == "127.0.0.1")
        #expect(address.family == .ipv4)
        #expect(try listener.accept() == .wouldBlock)
    }

    @Test("connect, accept, read, write, writev and end of stream over loopback")
    func roundTrip() throws {
        let (listener, client, server) = try connectedPair()
        defer { listener.close(); client.close(); server.close() }
        try client.setNoDelay()
        #expect(try server.remoteAddress() == client.localAddress())
        let sent = try [UInt8]("hello".utf8).withUnsafeBytes { try client.write($0) }
        #expect(sent == .bytes(5))
        #expect(try readString(server, length: 5) == "hello")

        let parts: [[UInt8]] = [Array("one ".utf8), [], Array("two ".utf8), Array("three".utf8)]
        let result = try parts[0].withUnsafeBytes { p0 in
            try parts[1].withUnsafeBytes { p1 in
                try parts[2].withUnsafeBytes { p2 in
                    try parts[3].withUnsafeBytes { p3 in try server.writev([p0, p1, p2, p3]) }
                }
            }
        }
        #expect(result == .bytes(13))
        #expect(try readString(client, length: 13) == "one two three")

        try server.shutdownWrite()
        #expect(try readSome(client) == .closed)
        // The other direction still works after a half-close.
        _ = try [UInt8]("late".utf8).withUnsafeBytes { try client.write($0) }
        #expect(try readString(server, length: 4) == "late")
    }

    @Test("writing to a closed peer reports closed or a reset, never SIGPIPE")
    func brokenPipe() throws {
        let (listener, client, server) = try connectedPair()
        defer { listener.close(); client.close() }
        server.close()
        let chunk = [UInt8](repeating: 7, count: 65536)
        var outcome = "none"
        for _ in 0..<100 {
            do {
                let result = try chunk.withUnsafeBytes { try client.write($0) }
                if result == .closed { outcome = "closed"; break }
            } catch let error as SocketError {
                outcome = error.isConnectionReset || error.isBrokenPipe ? "reset" : "\(error)"
                break
            } catch {
                outcome = "\(error)"
                break
            }
            usleep(1000)
        }
        #expect(outcome == "closed" || outcome == "reset")
    }

    @Test("connecting to a port nobody listens on fails with ECONNREFUSED")
    func refused() throws {
        // Bound but not listening: the port stays ours, so no other test's server takes it and
        // the connect cannot pick it as its own port and reach itself.
        let (descriptor, port) = try LoopbackPort.refusing()
        defer { close(descriptor) }
        let target = try #require(SocketAddress(ip: "127.0.0.1", port: port))
        var refused = false
        do {
            let (socket, state) = try Socket.connect(to: target)
            defer { socket.close() }
            if state == .inProgress {
                var poller = pollfd(fd: socket.descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, 5000)
            }
            do { try socket.finishConnect() } catch { refused = error.isConnectionRefused }
        } catch {
            refused = error.isConnectionRefused
            #expect(error.description.contains("Connection refused"))
        }
        #expect(refused)
    }

    @Test("IPv6 loopback works", .enabled(if: ipv6LoopbackAvailable()))
    func ipv6() throws {
        let (listener, client, server) = try connectedPair(host: "::1")
        defer { listener.close(); client.close(); server.close() }
        #expect(try listener.localAddress().family == .ipv6)
        _ = try [UInt8]("six".utf8).withUnsafeBytes { try client.write($0) }
        #expect(try readString(server, length: 3) == "six")
        #expect(try server.localAddress().description.hasPrefix("[::1]:"))
    }

    @Test("listening on a port in use fails with EADDRINUSE")
    func addressInUse() throws {
        let first = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { first.close() }
        let port = try first.localAddress().port
        #expect {
            try Socket.listen(host: "127.0.0.1", port: port).close()
        } throws: { error in
            (error as? SocketError)?.errno == EADDRINUSE
        }
        #expect(throws: SocketError.self) { try Socket.listen(host: "127.0.0.1", port: 70000) }
    }

    @Test("raising the open file limit never lowers it")
    func fileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let raised = Socket.raiseOpenFileLimit()
        #expect(raised >= Int(clamping: limit.rlim_cur))
    }
}

func ipv6LoopbackAvailable() -> Bool {
    guard let listener = try? Socket.listen(host: "::1", port: 0) else { return false }
    listener.close()
    return true
}

import Courier
import CourierTestSupport
import CourierWire
import Foundation
import Glibc
import Testing

/// The TLS handshake of the native transport against a peer that does not speak TLS.
@Suite("Native transport: TLS handshake input")
struct NativeTransportHandshakeTests {
    @Test("I4 a peer that streams garbage instead of a handshake fails fast with tlsFailed, having been read only a little")
    func garbageStream() async throws {
        let peer = try GarbagePeer()
        defer { peer.close() }
        try await withLeakCheck { leaks throws in
            leaks.watch(port: peer.port)
            let transport = leaks.native()  // connect timeout: 10 s
            defer { transport.shutdown() }
            let url = URL(string: "https://127.0.0.1:\(peer.port)/")!
            let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, url) }
            #expect(error == .tlsFailed, "\(String(describing: error))")
        }
        let (written, open) = try #require(await peer.finished())
        // The peer writes as fast as it can; the client stops at the first record, so only the
        // socket buffers (a few MiB on loopback) take what it sent before the close.
        #expect(written < 32 << 20, "the peer wrote \(written) bytes before the client closed")
        #expect(open < .seconds(2), "the client kept the connection for \(open)")
    }

    @Test("a peer that closes the connection as soon as it accepts it, during the handshake: tlsFailed every time, whether the client's read or its write meets the close first")
    func closedDuringHandshake() async throws {
        let peer = try ProxyChaosPeer(speaks: .http)  // closing at once, it speaks nothing
        defer { peer.stop() }
        await withLeakCheck { leaks in
            leaks.watch(port: peer.port)
            var configuration = NativeTransport.Configuration()
            configuration.proxy = .none
            let transport = leaks.native(configuration)
            defer { transport.shutdown() }
            for attempt in 0..<10 {
                peer.plan(.closeAtOnce)
                let url = URL(string: "https://127.0.0.1:\(peer.port)/\(attempt)")!
                let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, url) }
                #expect(error == .tlsFailed, "attempt \(attempt): \(String(describing: error))")
            }
        }
    }
}

/// A one-connection TCP server on 127.0.0.1 that writes garbage (no TLS record) as fast as the
/// client takes it, until the client closes, 256 MiB were written, or 10 s passed; on a thread of
/// its own, so that its timing does not depend on Swift's cooperative threads.
private final class GarbagePeer: Sendable {
    let port: Int
    private let listener: Socket
    private let outcome = Locked<(written: Int, open: Duration)?>(nil)

    init() throws {
        let listener = try Socket.listen(host: "127.0.0.1", port: 0, backlog: 1)
        self.listener = listener
        port = try listener.localAddress().port
        let thread = Thread { [listener, outcome] in
            guard Self.wait(for: listener, POLLIN), case .accepted(let client, _)? = try? listener.accept() else { return }
            defer { client.close() }
            let clock = ContinuousClock()
            let start = clock.now
            let garbage = [UInt8](repeating: UInt8(ascii: "G"), count: 1 << 20)
            var written = 0
            sending: while written < 256 << 20, clock.now - start < .seconds(10) {
                switch try? garbage.withUnsafeBytes({ try client.write($0) }) {
                case .bytes(let count)?: written += count
                case .wouldBlock?: if !Self.wait(for: client, POLLOUT) { break sending }
                default: break sending  // the client closed (EPIPE, a reset)
                }
            }
            let open = clock.now - start
            outcome.withLock { $0 = (written, open) }
        }
        thread.start()
    }

    /// Waits up to 10 s for `socket` to be ready for `events`.
    private static func wait(for socket: Socket, _ events: Int32) -> Bool {
        var entry = pollfd(fd: socket.descriptor, events: Int16(events), revents: 0)
        return poll(&entry, 1, 10_000) == 1
    }

    /// How much the peer wrote and how long the connection lasted, once it ended (waits up to 15 s).
    func finished() async -> (written: Int, open: Duration)? {
        _ = await eventually(timeout: .seconds(15)) { self.outcome.withLock { $0 } != nil }
        return outcome.withLock { $0 }
    }

    /// Stops accepting.
    func close() {
        listener.close()
    }
}

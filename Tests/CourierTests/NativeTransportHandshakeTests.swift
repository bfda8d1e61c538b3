import Courier
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
}

/// A one-connection TCP server on 127.0.0.1 that writes garbage (no TLS record) as fast as the
/// client takes it, until the client closes, 256 MiB were written, or 10 s passed; on a thread of
/// its own, so that its timing does not depend on Swift's cooperative threads.
private final class GarbagePeer: Sendable {
    let port: Int
    private let listener: Int32
    private let outcome = Locked<(written: Int, open: Duration)?>(nil)

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 1) == 0 else {
            Glibc.close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [listener, outcome] in
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }  // closed before a client came
            defer { Glibc.close(client) }
            let clock = ContinuousClock()
            let start = clock.now
            let garbage = [UInt8](repeating: UInt8(ascii: "G"), count: 1 << 20)
            var written = 0
            while written < 256 << 20, clock.now - start < .seconds(10) {
                let sent = garbage.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 { break }
                written += sent
            }
            let open = clock.now - start
            outcome.withLock { $0 = (written, open) }
        }
        thread.start()
    }

    /// How much the peer wrote and how long the connection lasted, once it ended (waits up to 15 s).
    func finished() async -> (written: Int, open: Duration)? {
        _ = await eventually(timeout: .seconds(15)) { self.outcome.withLock { $0 } != nil }
        return outcome.withLock { $0 }
    }

    /// Stops accepting.
    func close() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }
}

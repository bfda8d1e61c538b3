@testable import Courier
import CourierHTTP1
import Foundation
import Testing

/// The connection machine's `tunnelling` state (a proxy's `CONNECT` or SOCKS5 exchange between
/// the TCP connect and TLS), on a virtual clock.
@Suite("HTTP/1.1 connection state machine: tunnelling through a proxy")
struct HTTP1ConnectionTunnellingTests {
    static let second: UInt64 = 1_000_000_000

    static func machine(tls: Bool) -> HTTP1ConnectionStateMachine {
        HTTP1ConnectionStateMachine(configuration: .init(
            origin: "https://origin.test:443 via http://proxy.test:3128", usesTLS: tls, tunnels: true,
            connectTimeout: 5 * second, limits: HTTP1Limits(), decompression: true, maxDecompressedBytes: 1 << 20,
            maxDecompressionRatio: 100))
    }

    @Test("connect → tunnel → TLS handshake → idle, all under the connect deadline")
    func withTLS() {
        var machine = Self.machine(tls: true)
        _ = machine.start(at: 0)
        guard case .startTunnel = machine.connected(at: 1) else { Issue.record("no tunnel"); return }
        #expect(machine.state == .tunnelling(deadline: 5 * Self.second))
        #expect(!machine.isEstablished)
        guard case .startHandshake = machine.tunnelEstablished(at: 2) else { Issue.record("no handshake"); return }
        #expect(machine.state == .handshaking(deadline: 5 * Self.second))
        guard case .reportReady = machine.handshakeCompleted(at: 3) else { Issue.record("not ready"); return }
        #expect(machine.isIdle)
    }

    @Test("without TLS the open tunnel is ready at once; a late tunnel event does nothing")
    func plain() {
        var machine = Self.machine(tls: false)
        _ = machine.start(at: 0)
        _ = machine.connected(at: 0)
        guard case .reportReady = machine.tunnelEstablished(at: 1) else { Issue.record("not ready"); return }
        guard case .none = machine.tunnelEstablished(at: 2) else { Issue.record("a second ready"); return }
    }

    @Test("a tunnel that takes past the connect deadline times out; a failed one closes with its error")
    func failures() {
        var slow = Self.machine(tls: true)
        _ = slow.start(at: 0)
        _ = slow.connected(at: 0)
        guard case .armTimer(let deadline) = slow.timerFired(at: Self.second) else { Issue.record("no re-arm"); return }
        #expect(deadline == 5 * Self.second)
        guard case .close(let error?) = slow.timerFired(at: 5 * Self.second) else { Issue.record("no timeout"); return }
        #expect(error == .timedOut)
        #expect(error.detail?.contains("tunnel") == true)
        #expect(slow.state == .closed)

        var refused = Self.machine(tls: true)
        _ = refused.start(at: 0)
        _ = refused.connected(at: 0)
        guard case .close(let failure?) = refused.establishmentFailed(.proxyForbidden) else { Issue.record("no close"); return }
        #expect(failure == .proxyForbidden)
        guard case .none = refused.tunnelEstablished(at: 1) else { Issue.record("revived"); return }

        var closing = Self.machine(tls: false)
        _ = closing.start(at: 0)
        _ = closing.connected(at: 0)
        guard case .close(let closed?) = closing.close() else { Issue.record("no close"); return }
        #expect(closed == .cannotConnect)
    }
}

@testable import Courier
import CourierHTTP1
import Foundation
import Testing

/// The `CONNECT` exchange with an HTTP proxy, without sockets: byte strings in, actions out.
@Suite("CONNECT tunnel machine")
struct HTTPConnectTunnelMachineTests {
    static let proxy = Proxy(.http, host: "proxy.test", port: 3128)
    static let authenticated = Proxy(.http, host: "proxy.test", port: 3128,
                                     credentials: ProxyCredentials(username: "ann", password: "s3cret"))

    static func machine(_ proxy: Proxy = proxy, host: String = "origin.test", port: Int = 443,
                        limits: HTTP1Limits = HTTP1Limits()) -> HTTPConnectTunnelMachine {
        HTTPConnectTunnelMachine(host: host, port: port, proxy: proxy, limits: limits)
    }

    static func feed(_ machine: inout HTTPConnectTunnelMachine, _ text: String) -> ProxyTunnelAction {
        Array(text.utf8).withUnsafeBytes { machine.received($0) }
    }

    static func written(_ action: ProxyTunnelAction) -> String? {
        if case .write(let bytes) = action { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    static func error(_ action: ProxyTunnelAction) -> HTTPConnectionError? {
        if case .fail(let error) = action { return error }
        return nil
    }

    @Test("the request names only the origin's authority; credentials go in Proxy-Authorization")
    func request() {
        var plain = Self.machine()
        #expect(Self.written(plain.start()) == "CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
        #expect(plain.start() == .none)
        var withCredentials = Self.machine(Self.authenticated, host: "::1", port: 8443)
        let text = Self.written(withCredentials.start())
        #expect(text == "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\nProxy-Authorization: Basic YW5uOnMzY3JldA==\r\n\r\n")
    }

    @Test("a 2xx answer, whole or byte by byte, after interim answers, opens the tunnel")
    func established() {
        var machine = Self.machine()
        _ = machine.start()
        #expect(Self.feed(&machine, "HTTP/1.1 200 Connection established\r\n\r\n") == .established)
        #expect(machine.state == .open)

        var trickled = Self.machine()
        _ = trickled.start()
        let answer = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\nVia: test\r\n\r\n"
        var actions: [ProxyTunnelAction] = []
        for byte in answer.utf8 { actions.append([byte].withUnsafeBytes { trickled.received($0) }) }
        #expect(actions.dropLast().allSatisfy { $0 == .none })
        #expect(actions.last == .established)
    }

    @Test("each refusal is its own error, naming the proxy and status but never the credentials",
          arguments: [(407, HTTPConnectionError.proxyAuthenticationRequired), (403, .proxyForbidden), (502, .proxyCannotReachOrigin),
                      (503, .proxyCannotReachOrigin), (504, .proxyCannotReachOrigin), (400, .proxyRejected), (500, .proxyRejected),
                      (301, .proxyRejected)])
    func refusals(status: Int, expected: HTTPConnectionError) throws {
        var machine = Self.machine(Self.authenticated)
        _ = machine.start()
        let action = Self.feed(&machine, "HTTP/1.1 \(status) No\r\nProxy-Authenticate: Basic realm=\"x\"\r\nContent-Length: 5\r\n\r\nnope!")
        let error = try #require(Self.error(action))
        #expect(error == expected)
        #expect(error.description.contains("proxy.test:3128") && error.description.contains("\(status)"))
        #expect(!error.description.contains("s3cret") && !error.description.contains("YW5uOnMzY3JldA"))
        #expect(machine.state == .failed)
    }

    @Test("a 407 says whether credentials were sent")
    func authenticationDetail() throws {
        var machine = Self.machine()
        _ = machine.start()
        let error = try #require(Self.error(Self.feed(&machine, "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")))
        #expect(error == .proxyAuthenticationRequired)
        #expect(error.detail?.contains("no credentials were configured") == true)
    }

    @Test("a close before or during the answer is proxyClosedConnection; after the tunnel opened it is not the machine's")
    func closed() {
        var silent = Self.machine()
        _ = silent.start()
        #expect(Self.error(silent.peerClosed()) == .proxyClosedConnection)
        var partial = Self.machine()
        _ = partial.start()
        #expect(Self.feed(&partial, "HTTP/1.1 200 Conn") == .none)
        #expect(Self.error(partial.peerClosed()) == .proxyClosedConnection)
        var open = Self.machine()
        _ = open.start()
        _ = Self.feed(&open, "HTTP/1.1 200 OK\r\n\r\n")
        #expect(open.peerClosed() == .none)
    }

    @Test("garbage, an oversized head, too many interim answers and bytes after the 2xx are proxyBadResponse")
    func malformed() {
        var garbage = Self.machine()
        _ = garbage.start()
        #expect(Self.error(Self.feed(&garbage, "SSH-2.0-OpenSSH\r\n\r\n")) == .proxyBadResponse)

        var huge = Self.machine(limits: HTTP1Limits(maxHeadBytes: 256, maxFieldCount: 10))
        _ = huge.start()
        #expect(Self.error(Self.feed(&huge, "HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 300))) == .proxyBadResponse)

        var interim = Self.machine()
        _ = interim.start()
        #expect(Self.error(Self.feed(&interim, String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 11))) == .proxyBadResponse)

        var extra = Self.machine()
        _ = extra.start()
        #expect(Self.error(Self.feed(&extra, "HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK")) == .proxyBadResponse)

        var afterOpen = Self.machine()
        _ = afterOpen.start()
        _ = Self.feed(&afterOpen, "HTTP/1.1 200 OK\r\n\r\n")
        #expect(Self.error(Self.feed(&afterOpen, "x")) == .proxyBadResponse)
    }
}

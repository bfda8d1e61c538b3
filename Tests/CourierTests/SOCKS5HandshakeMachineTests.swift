@testable import Courier
import CourierWire
import Foundation
import Testing

/// The SOCKS5 handshake (RFC 1928, RFC 1929) without sockets: bytes in, actions out.
@Suite("SOCKS5 handshake machine")
struct SOCKS5HandshakeMachineTests {
    typealias Machine = SOCKS5HandshakeMachine
    static let credentials = ProxyCredentials(username: "ann", password: "s3cret")

    static func machine(_ destination: Machine.Destination = .name("origin.test"), port: Int = 443,
                        credentials: ProxyCredentials? = nil) -> Machine {
        Machine(destination: destination, port: port, proxy: Proxy(.socks5h, host: "socks.test", port: 1080, credentials: credentials))
    }

    static func feed(_ machine: inout Machine, _ bytes: [UInt8]) -> ProxyTunnelAction {
        bytes.withUnsafeBytes { machine.received($0) }
    }

    static func error(_ action: ProxyTunnelAction) -> HTTPConnectionError? {
        if case .fail(let error) = action { return error }
        return nil
    }

    /// The CONNECT request for `origin.test:443` by name.
    static let connectByName: [UInt8] = [5, 1, 0, 3, 11] + Array("origin.test".utf8) + [0x01, 0xBB]
    /// A success reply bound to 127.0.0.1:1080.
    static let success: [UInt8] = [5, 0, 0, 1, 127, 0, 0, 1, 0x04, 0x38]

    @Test("no authentication, a domain name (socks5h): greeting, CONNECT by name, success")
    func noAuthentication() {
        var machine = Self.machine()
        #expect(machine.start() == .write([5, 1, 0]))
        #expect(Self.feed(&machine, [5, 0]) == .write(Self.connectByName))
        #expect(Self.feed(&machine, Array(Self.success.prefix(3))) == .none)
        #expect(Self.feed(&machine, Array(Self.success.dropFirst(3))) == .established)
        #expect(machine.state == .open)
    }

    @Test("IPv4 and IPv6 addresses are sent as ATYP 1 and 4 with the port in network order")
    func addresses() throws {
        var v4 = Self.machine(.address(try #require(SocketAddress(ip: "10.1.2.3", port: 0))), port: 8080)
        _ = v4.start()
        #expect(Self.feed(&v4, [5, 0]) == .write([5, 1, 0, 1, 10, 1, 2, 3, 0x1F, 0x90]))
        var v6 = Self.machine(.address(try #require(SocketAddress(ip: "::1", port: 0))), port: 80)
        _ = v6.start()
        #expect(Self.feed(&v6, [5, 0]) == .write([5, 1, 0, 4] + [UInt8](repeating: 0, count: 15) + [1, 0, 80]))
        // A reply bound to an IPv6 address or a name is read whole, by its length.
        #expect(Self.feed(&v6, [5, 0, 0, 4] + [UInt8](repeating: 0, count: 16) + [0, 1]) == .established)
        var named = Self.machine()
        _ = named.start()
        _ = Self.feed(&named, [5, 0])
        #expect(Self.feed(&named, [5, 0, 0, 3, 4] + Array("host".utf8) + [0, 1]) == .established)
    }

    @Test("username and password (RFC 1929): offered, sent, accepted")
    func usernamePassword() {
        var machine = Self.machine(credentials: Self.credentials)
        #expect(machine.start() == .write([5, 2, 0, 2]))
        #expect(Self.feed(&machine, [5, 2]) == .write([1, 3] + Array("ann".utf8) + [6] + Array("s3cret".utf8)))
        #expect(machine.state == .awaitingAuthentication)
        #expect(Self.feed(&machine, [1, 0]) == .write(Self.connectByName))
        #expect(Self.feed(&machine, Self.success) == .established)
    }

    @Test("authentication failures: no acceptable method, a password refused, a password wanted but none configured")
    func authenticationFailures() throws {
        var none = Self.machine(credentials: Self.credentials)
        _ = none.start()
        #expect(Self.error(Self.feed(&none, [5, 0xFF])) == .proxyAuthenticationRequired)
        var refused = Self.machine(credentials: Self.credentials)
        _ = refused.start()
        _ = Self.feed(&refused, [5, 2])
        let error = try #require(Self.error(Self.feed(&refused, [1, 1])))
        #expect(error == .proxyAuthenticationRequired)
        #expect(!error.description.contains("s3cret") && !error.description.contains("ann"))
        var missing = Self.machine()
        _ = missing.start()
        #expect(Self.error(Self.feed(&missing, [5, 2])) == .proxyAuthenticationRequired)
    }

    @Test("each RFC 1928 reply code is its own clear error", arguments: [
        (UInt8(1), HTTPConnectionError.proxyRejected, "general SOCKS server failure"),
        (2, .proxyForbidden, "connection not allowed by ruleset"),
        (3, .proxyCannotReachOrigin, "Network unreachable"),
        (4, .proxyCannotReachOrigin, "Host unreachable"),
        (5, .proxyCannotReachOrigin, "Connection refused"),
        (6, .proxyCannotReachOrigin, "TTL expired"),
        (7, .proxyRejected, "Command not supported"),
        (8, .proxyRejected, "Address type not supported"),
        (9, .proxyRejected, "unassigned reply code"),
    ])
    func replyCodes(code: UInt8, expected: HTTPConnectionError, words: String) throws {
        var machine = Self.machine()
        _ = machine.start()
        _ = Self.feed(&machine, [5, 0])
        let error = try #require(Self.error(Self.feed(&machine, [5, code, 0, 1, 0, 0, 0, 0, 0, 0])))
        #expect(error == expected)
        #expect(error.detail?.contains(words) == true, "\(error)")
        #expect(error.detail?.contains("origin.test:443") == true)
        #expect(machine.state == .failed)
    }

    @Test("protocol violations are proxyBadResponse; a close before the reply is proxyClosedConnection")
    func violations() {
        var version = Self.machine()
        _ = version.start()
        #expect(Self.error(Self.feed(&version, [4, 0])) == .proxyBadResponse)
        var unoffered = Self.machine()
        _ = unoffered.start()
        #expect(Self.error(Self.feed(&unoffered, [5, 1])) == .proxyBadResponse)
        var long = Self.machine()
        _ = long.start()
        #expect(Self.error(Self.feed(&long, [5, 0, 0])) == .proxyBadResponse)
        var addressType = Self.machine()
        _ = addressType.start()
        _ = Self.feed(&addressType, [5, 0])
        #expect(Self.error(Self.feed(&addressType, [5, 0, 0, 9])) == .proxyBadResponse)
        var trailing = Self.machine()
        _ = trailing.start()
        _ = Self.feed(&trailing, [5, 0])
        #expect(Self.error(Self.feed(&trailing, Self.success + [0x16])) == .proxyBadResponse)
        var closed = Self.machine()
        _ = closed.start()
        _ = Self.feed(&closed, [5, 0])
        #expect(Self.error(closed.peerClosed()) == .proxyClosedConnection)
        #expect(closed.peerClosed() == .none)
    }

    @Test("credentials or a name RFC 1928/1929 cannot carry fail before anything is sent")
    func limits() {
        var longName = Self.machine(.name(String(repeating: "a", count: 256)))
        #expect(Self.error(longName.start()) == .invalidURL)
        var emptyPassword = Self.machine(credentials: ProxyCredentials(username: "ann", password: ""))
        #expect(Self.error(emptyPassword.start()) == .invalidRequest)
    }
}

@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The native transport through real proxies: squid (HTTP forwarding, `CONNECT`, Basic proxy
/// authentication) and dante (SOCKS5, with and without username and password).
@Suite("Native transport: proxies (squid, dante)")
struct NativeTransportProxyTests {
    static let page = Data(String(repeating: "tunnelled ", count: 2000).utf8)

    private func transport(_ leaks: LeakCheck, _ proxy: ProxyConfiguration, tls: TLSOptions = TLSOptions()) -> NativeTransport {
        var configuration = NativeTransport.Configuration(tls: tls)
        configuration.proxy = proxy
        return leaks.native(configuration)
    }

    private func echo(_ response: HTTPResponse) throws -> Echo {
        try JSONDecoder().decode(Echo.self, from: response.body)
    }

    // MARK: - squid

    @Test("http through squid goes in absolute form; connections through it are pooled apart from direct ones",
          .enabled(if: ProxyPeer.squidInstalled, ProxyPeer.squidSkipReason))
    func squidForwarding() async throws {
        let squid = try await ProxyPeer.squid()
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: squid.port)
            // 127.0.0.1 goes through squid; localhost (NO_PROXY) goes direct.
            let transport = transport(leaks, ProxyConfiguration(all: squid.proxy(.http), noProxy: NoProxyList("localhost")))
            defer { transport.shutdown() }
            for _ in 0..<3 {
                let proxied = try echo(try await fetch(transport, server.url("/echo/a?b=1")))
                #expect(proxied.path == "/echo/a" && proxied.query == "b=1")
                #expect(proxied.header("Via")?.contains("squid") == true, "\(proxied.headers)")
            }
            let direct = try echo(try await fetch(transport, URL(string: "http://localhost:\(server.port)/echo")!))
            #expect(direct.header("Via") == nil)
            #expect(transport.originCount == 2)
            transport.shutdown()  // squid logs a request when its transaction ends
            #expect(await eventually(timeout: .seconds(5)) { squid.requestLog.contains("GET http://127.0.0.1:\(server.port)/echo/a") },  // squid strips the query from its log
                    "\(squid.requestLog)")
            #expect(!squid.requestLog.contains("localhost"))
        }
    }

    @Test("https through squid: CONNECT, then TLS to the origin, verified against the origin's name",
          .enabled(if: ProxyPeer.squidInstalled && Nginx.isInstalled && TestCertificates.isAvailable, ProxyPeer.squidSkipReason))
    func squidTunnel() async throws {
        let squid = try await ProxyPeer.squid()
        defer { squid.stop() }
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(files: ["page.txt": Self.page], tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        let wrong = try await Nginx.start(files: ["page.txt": Self.page], tls: (certificates.wrongHost.certificate, certificates.wrongHost.key))
        defer { wrong.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: squid.port)
            let transport = transport(leaks, ProxyConfiguration(all: squid.proxy(.http)),
                                      tls: TLSOptions(trustRoots: .pem(certificates.caPEM)))
            defer { transport.shutdown() }
            for _ in 0..<2 {
                #expect(try await fetch(transport, nginx.url("/page.txt")).body == Self.page)
            }
            let byName = try await fetch(transport, URL(string: "https://localhost:\(nginx.port)/page.txt")!)
            #expect(byName.body == Self.page)
            let mismatch = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, wrong.url("/page.txt")) }
            #expect(mismatch == .hostnameMismatch, "\(String(describing: mismatch))")
            transport.shutdown()  // squid logs a tunnel when it closes
            #expect(await eventually(timeout: .seconds(5)) {
                squid.requestLog.contains("CONNECT 127.0.0.1:\(nginx.port)") && squid.requestLog.contains("CONNECT localhost:\(nginx.port)")
            }, "\(squid.requestLog)")
        }
    }

    @Test("squid with Basic proxy authentication: 407 without credentials, success with them; the origin never sees them",
          .enabled(if: ProxyPeer.squidInstalled, ProxyPeer.squidSkipReason))
    func squidAuthentication() async throws {
        let squid = try await ProxyPeer.squid(authenticated: true)
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: squid.port)
            let anonymous = transport(leaks, ProxyConfiguration(all: squid.proxy(.http)))
            defer { anonymous.shutdown() }
            #expect(try await fetch(anonymous, server.url("/echo")).status.code == 407)
            let tunnel = await failure { () async throws(HTTPConnectionError) in try await fetch(anonymous, URL(string: "https://127.0.0.1:\(server.port)/")!) }
            #expect(tunnel == .proxyAuthenticationRequired, "\(String(describing: tunnel))")

            // Credentials from a proxy URL, percent-encoded (the password holds a colon).
            let proxy = try Proxy(url: "http://courier:pr0xy%3Asecret@127.0.0.1:\(squid.port)")
            let authenticated = transport(leaks, ProxyConfiguration(http: proxy, https: nil, noProxy: NoProxyList("localhost")))
            defer { authenticated.shutdown() }
            let proxied = try echo(try await fetch(authenticated, server.url("/echo")))
            #expect(proxied.header("Via")?.contains("squid") == true)
            #expect(proxied.header("Proxy-Authorization") == nil)
            let direct = try echo(try await fetch(authenticated, URL(string: "http://localhost:\(server.port)/echo")!))
            #expect(direct.header("Proxy-Authorization") == nil && direct.header("Via") == nil)

            let refused = transport(leaks, ProxyConfiguration(all: Proxy(.http, host: "127.0.0.1", port: squid.port,
                                                                        credentials: ProxyCredentials(username: "courier", password: "wrong"))))
            defer { refused.shutdown() }
            let wrong = await failure { () async throws(HTTPConnectionError) in try await fetch(refused, URL(string: "https://127.0.0.1:\(server.port)/")!) }
            #expect(wrong == .proxyAuthenticationRequired)
            #expect(wrong?.description.contains("wrong") == false)
            #expect(wrong?.detail?.contains("credentials were refused") == true)
        }
    }

    @Test("a proxy that is not listening: proxyUnreachable, naming the proxy")
    func unreachable() async {
        await withLeakCheck { leaks in
            let transport = transport(leaks, ProxyConfiguration(all: Proxy(.socks5h, host: "127.0.0.1", port: 1)))
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, URL(string: "http://example.invalid/")!) }
            #expect(error == .proxyUnreachable, "\(String(describing: error))")
            #expect(error?.detail?.contains("socks5h://127.0.0.1:1") == true)
        }
    }

    // MARK: - dante

    @Test("SOCKS5 without authentication through danted: socks5h (remote DNS), socks5 (local DNS), IP addresses, https",
          .enabled(if: ProxyPeer.danteInstalled && Nginx.isInstalled && TestCertificates.isAvailable, ProxyPeer.danteSkipReason))
    func danteNoAuthentication() async throws {
        let dante = try await ProxyPeer.dante()
        defer { dante.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(files: ["page.txt": Self.page], tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: dante.port)
            for kind in [Proxy.Kind.socks5h, .socks5] {
                let transport = transport(leaks, ProxyConfiguration(all: dante.proxy(kind)), tls: TLSOptions(trustRoots: .pem(certificates.caPEM)))
                defer { transport.shutdown() }
                for host in ["localhost", "127.0.0.1"] {
                    let response = try echo(try await fetch(transport, URL(string: "http://\(host):\(server.port)/echo/\(kind)")!))
                    #expect(response.path == "/echo/\(kind)")
                }
                let secure = try await fetch(transport, URL(string: "https://localhost:\(nginx.port)/page.txt")!)
                #expect(secure.body == Self.page)
                #expect(dante.requestLog.contains(".\(server.port)"), "\(dante.requestLog)")
                let closed = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, URL(string: "http://127.0.0.1:1/")!) }
                #expect(closed == .proxyCannotReachOrigin || closed == .proxyRejected, "\(String(describing: closed))")
            }
        }
    }

    @Test("SOCKS5 username and password (RFC 1929) through danted: accepted, refused, missing",
          .enabled(if: ProxyPeer.danteInstalled && ProxyPeer.socksUserExists, ProxyPeer.socksUserSkipReason))
    func danteAuthentication() async throws {
        let dante = try await ProxyPeer.dante(authenticated: true)
        defer { dante.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: dante.port)
            let good = transport(leaks, ProxyConfiguration(all: dante.proxy(.socks5h, credentials: ProxyPeer.socksUser)))
            defer { good.shutdown() }
            let accepted = try echo(try await fetch(good, server.url("/echo")))
            #expect(accepted.path == "/echo")
            #expect(dante.requestLog.contains(".\(server.port)"), "\(dante.requestLog)")
            let bad = transport(leaks, ProxyConfiguration(all: dante.proxy(.socks5h, credentials: ProxyCredentials(username: "courier-socks",
                                                                                                                 password: "nope"))))
            defer { bad.shutdown() }
            let refused = await failure { () async throws(HTTPConnectionError) in try await fetch(bad, server.url("/echo")) }
            #expect(refused == .proxyAuthenticationRequired, "\(String(describing: refused))")
            #expect(refused?.description.contains("nope") == false)
            let none = transport(leaks, ProxyConfiguration(all: dante.proxy(.socks5h)))
            defer { none.shutdown() }
            let missing = await failure { () async throws(HTTPConnectionError) in try await fetch(none, server.url("/echo")) }
            #expect(missing == .proxyAuthenticationRequired, "\(String(describing: missing))")
        }
    }
}

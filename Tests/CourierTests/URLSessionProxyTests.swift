@testable import Courier
import CourierTestSupport
import CourierTestServer
import Foundation
import Glibc
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// URLSessionTransport and proxies: FoundationNetworking on Linux ignores
/// `connectionProxyDictionary`, so a proxied request is refused instead of going direct.
@Suite("URLSession transport: proxy settings (squid)")
struct URLSessionProxyTests {
    @Test("a request the settings send through a proxy is unsupportedByTransport and reaches neither squid nor the origin; an exception goes direct",
          .enabled(if: ProxyPeer.squidInstalled, ProxyPeer.squidSkipReason))
    func refusedNotBypassed() async throws {
        let squid = try await ProxyPeer.squid()
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let kinds: [Proxy] = [squid.proxy(.http), squid.proxy(.https), squid.proxy(.socks5h)]
            for proxy in kinds {
                let transport = URLSessionTransport(proxy: ProxyConfiguration(all: proxy, noProxy: NoProxyList("localhost")))
                let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, server.url("/echo/proxied")) }
                #expect(error == .unsupportedByTransport, "\(proxy): \(String(describing: error))")
                #expect(error?.detail?.contains("\(proxy)") == true && error?.detail?.contains("connectionProxyDictionary") == true)
                let direct = try await fetch(transport, URL(string: "http://localhost:\(server.port)/echo/direct")!)
                #expect(try JSONDecoder().decode(Echo.self, from: direct.body).header("Via") == nil)
            }
            #expect(server.requestCount(path: "/echo/proxied") == 0)
            #expect(server.requestCount(path: "/echo/direct") == 3)
            #expect(!squid.requestLog.contains("/echo"), "\(squid.requestLog)")
        }
    }

    @Test("the platform fact behind it: FoundationNetworking sends a session with a connectionProxyDictionary direct (if this fails, corelibs now honours it: map the settings)",
          .enabled(if: ProxyPeer.squidInstalled, ProxyPeer.squidSkipReason))
    func connectionProxyDictionaryIgnored() async throws {
        let squid = try await ProxyPeer.squid()
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.connectionProxyDictionary = ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": squid.port]
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (data, _) = try await session.data(from: server.url("/echo/dictionary"))
        let echo = try JSONDecoder().decode(Echo.self, from: data)
        #expect(echo.header("Via") == nil, "went through squid: \(echo.headers)")
        #expect(!squid.requestLog.contains("/echo/dictionary"))
    }

    @Test("libcurl under FoundationNetworking reads http_proxy from the process environment by itself (in a child process, whose environment the test may change)",
          .enabled(if: ProxyPeer.squidInstalled, ProxyPeer.squidSkipReason))
    func environmentHonouredByLibcurl() async throws {
        try await runInChildProcess(Self.self, timeout: .seconds(60)) {
            let squid = try await ProxyPeer.squid()
            defer { squid.stop() }
            let server = try TestServer()
            defer { server.shutdown() }
            setenv("http_proxy", "http://127.0.0.1:\(squid.port)", 1)
            unsetenv("no_proxy")
            unsetenv("NO_PROXY")
            let response = try await fetch(URLSessionTransport(), server.url("/echo/environment"))
            let echo = try JSONDecoder().decode(Echo.self, from: response.body)
            #expect(echo.header("Via")?.contains("squid") == true, "\(echo.headers)")
        } check: { outcome in
            #expect(outcome.ranOneTest && outcome.status == 0, "\(outcome.output.suffix(2_000))")
        }
    }
}

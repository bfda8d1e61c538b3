@testable import Courier
import Foundation
import Testing

/// Where a request goes through a proxy, and what its head says: absolute form and
/// `Proxy-Authorization` only when an HTTP proxy forwards it; origin form and no proxy
/// credentials through a tunnel or direct, so they never reach an origin.
@Suite("Request targets through proxies")
struct ProxyRequestTargetTests {
    static let credentials = ProxyCredentials(username: "ann", password: "s3cret")
    static let basic = "Basic YW5uOnMzY3JldA=="

    static func head(_ url: String, _ proxies: ProxyConfiguration, headers: HTTPHeaders = [:]) throws -> (NativeRequestTarget, String) {
        let request = TransportRequest(method: .get, url: URL(string: url)!, headers: headers, body: Data(),
                                       timeout: .seconds(5), maxResponseBodySize: 1 << 20)
        let target = try NativeRequestTarget(url: request.url, proxies: proxies)
        let (wire, _) = try NativeRequestEncoder.encode(request, target: target, acceptEncoding: false)
        return (target, String(decoding: wire, as: UTF8.self))
    }

    @Test("http through an HTTP proxy: absolute form, Proxy-Authorization replacing the caller's, pooled by (origin, proxy)")
    func forwarded() throws {
        let proxy = Proxy(.http, host: "proxy.test", port: 3128, credentials: Self.credentials)
        let (target, head) = try Self.head("http://Origin.test:8080/a/b?c=1#frag", ProxyConfiguration(all: proxy),
                                           headers: ["Proxy-Authorization": "Basic b3RoZXI6b3RoZXI="])
        #expect(head.hasPrefix("GET http://Origin.test:8080/a/b?c=1 HTTP/1.1\r\nHost: Origin.test:8080\r\n"))
        #expect(head.contains("Proxy-Authorization: \(Self.basic)\r\n"))
        #expect(!head.contains("b3RoZXI6b3RoZXI="))
        #expect(target.key.forwardsThroughProxy && !target.key.tunnels)
        #expect(target.key.firstHop.host == "proxy.test" && target.key.firstHop.port == 3128)
        #expect(target.key != NativePoolKey(secure: false, host: "origin.test", port: 8080))
        #expect("\(target.key)" == "http://origin.test:8080 via http://proxy.test:3128")
    }

    @Test("https through an HTTP proxy and anything through SOCKS5: origin form, no proxy credentials in the request")
    func tunnelled() throws {
        let http = Proxy(.http, host: "proxy.test", port: 3128, credentials: Self.credentials)
        let (secure, secureHead) = try Self.head("https://origin.test/x", ProxyConfiguration(all: http))
        #expect(secureHead.hasPrefix("GET /x HTTP/1.1\r\n"))
        #expect(!secureHead.contains("Proxy-Authorization") && !secureHead.contains("s3cret"))
        #expect(secure.key.tunnels && secure.proxyAuthorization == nil)

        let socks = Proxy(.socks5h, host: "socks.test", port: 1080, credentials: Self.credentials)
        let (plain, plainHead) = try Self.head("http://origin.test/y", ProxyConfiguration(all: socks))
        #expect(plainHead.hasPrefix("GET /y HTTP/1.1\r\n"))
        #expect(!plainHead.contains("Proxy-Authorization"))
        #expect(plain.key.tunnels && plain.key.firstHop.host == "socks.test" && plain.key.firstHop.port == 1080)
    }

    @Test("direct (no proxy, or NO_PROXY): origin form, the same pool key as before proxies existed")
    func direct() throws {
        let proxy = Proxy(.http, host: "proxy.test", port: 3128, credentials: Self.credentials)
        let (target, head) = try Self.head("http://internal.corp/z", ProxyConfiguration(all: proxy, noProxy: NoProxyList(".corp")))
        #expect(head.hasPrefix("GET /z HTTP/1.1\r\n") && !head.contains("Proxy-Authorization"))
        #expect(target.key == NativePoolKey(secure: false, host: "internal.corp", port: 80))
        #expect(!target.key.tunnels && !target.key.forwardsThroughProxy)
    }
}

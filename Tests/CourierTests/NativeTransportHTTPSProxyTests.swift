@testable import Courier
import CourierTestSupport
import CourierTestServer
import CourierTLS
import Foundation
import Testing

/// The native transport through an `https://` proxy: squid listening with TLS (`https_port`,
/// Debian's squid is built with GnuTLS, which serves it), its certificate made at test time.
@Suite("Native transport: proxies reached over TLS (squid https_port)")
struct NativeTransportHTTPSProxyTests {
    static let page = Data(String(repeating: "inside two TLS sessions ", count: 3000).utf8)

    private func transport(_ leaks: LeakCheck, _ proxy: Proxy, tls: TLSOptions) -> NativeTransport {
        var configuration = NativeTransport.Configuration(tls: tls)
        configuration.proxy = ProxyConfiguration(all: proxy)
        return leaks.native(configuration)
    }

    @Test("http forwarded over TLS to the proxy; https in a CONNECT tunnel with a second TLS session, verified against the origin's name",
          .enabled(if: ProxyPeer.squidInstalled && Nginx.isInstalled && TestCertificates.isAvailable, ProxyPeer.squidSkipReason))
    func squidOverTLS() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let squid = try await ProxyPeer.squid(tlsFiles: (certificates.valid.certificate, certificates.valid.key))
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        let nginx = try await Nginx.start(files: ["page.txt": Self.page], tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        let wrong = try await Nginx.start(files: ["page.txt": Self.page], tls: (certificates.wrongHost.certificate, certificates.wrongHost.key))
        defer { wrong.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: squid.port)
            let trusted = TLSOptions(trustRoots: .pem(certificates.caPEM))
            let transport = transport(leaks, squid.proxy(.https, tls: trusted), tls: trusted)
            defer { transport.shutdown() }
            for _ in 0..<2 {
                let echo = try JSONDecoder().decode(Echo.self, from: try await fetch(transport, server.url("/echo/plain")).body)
                #expect(echo.path == "/echo/plain")
                #expect(echo.header("Via")?.contains("squid") == true, "\(echo.headers)")
            }
            for _ in 0..<2 {
                #expect(try await fetch(transport, nginx.url("/page.txt")).body == Self.page)
            }
            #expect(try await fetch(transport, URL(string: "https://localhost:\(nginx.port)/page.txt")!).body == Self.page)
            let mismatch = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, wrong.url("/page.txt")) }
            #expect(mismatch == .hostnameMismatch, "the origin's own check, inside the tunnel: \(String(describing: mismatch))")
            transport.shutdown()  // squid logs a tunnel when it closes
            #expect(await eventually(timeout: .seconds(5)) {
                squid.requestLog.contains("GET http://127.0.0.1:\(server.port)/echo/plain")
                    && squid.requestLog.contains("CONNECT 127.0.0.1:\(nginx.port)")
                    && squid.requestLog.contains("CONNECT localhost:\(nginx.port)")
            }, "\(squid.requestLog)")
        }
    }

    @Test("an origin that speaks HTTP/2, in a CONNECT tunnel through an https:// proxy: HTTP/2 inside the tunnel, automatic and by prior knowledge, many streams on one connection",
          .enabled(if: ProxyPeer.squidInstalled && Nginx.isInstalled && TestCertificates.isAvailable, ProxyPeer.squidSkipReason))
    func http2OriginThroughTLSProxy() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let squid = try await ProxyPeer.squid(tlsFiles: (certificates.valid.certificate, certificates.valid.key))
        defer { squid.stop() }
        let nginx = try await Nginx.start(files: ["page.txt": Self.page], tls: (certificates.valid.certificate, certificates.valid.key),
                                          http2: true)
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: squid.port)
            let trusted = TLSOptions(trustRoots: .pem(certificates.caPEM))
            for version in [NativeTransport.HTTPVersionPolicy.automatic, .http2PriorKnowledge] {
                var configuration = NativeTransport.Configuration(tls: trusted)
                configuration.proxy = ProxyConfiguration(all: squid.proxy(.https, tls: trusted))
                configuration.httpVersion = version
                let transport = leaks.native(configuration)
                let tunnelled = leaks.track(HTTPConnection(baseURL: nginx.url("/"), configuration: .init(transport: transport, cache: nil)))
                // One request opens the connection; then 16 at once share it as streams.
                var first = HTTPRequest(.get, "/page.txt")
                first.timeout = .seconds(5)
                let opening = try await tunnelled.send(first)
                #expect(opening.body == Self.page, "\(version)")
                #expect(opening.metrics?.httpVersion == "HTTP/2", "\(version)")
                let responses = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
                    for _ in 0..<16 {
                        group.addTask {
                            var request = HTTPRequest(.get, "/page.txt")
                            request.timeout = .seconds(5)
                            return try await tunnelled.send(request)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(responses.count == 16)
                #expect(responses.allSatisfy { $0.body == Self.page && $0.metrics?.httpVersion == "HTTP/2" }, "\(version)")
                #expect(responses.allSatisfy { $0.metrics?.reusedConnection == true }, "\(version): every stream on the first connection")
                transport.shutdown()  // squid logs a tunnel when it closes
            }
            #expect(await eventually(timeout: .seconds(5)) {
                squid.requestLog.components(separatedBy: "CONNECT 127.0.0.1:\(nginx.port)").count - 1 == 2
            }, "one tunnel per transport: \(squid.requestLog)")
        }
    }

    @Test("HTTP/2 in the https:// proxy's tunnel carries request bodies (3 MB from memory, from a file and from a stream, with downloads at once) to nghttpd, which echoes them on one connection; shutting down sends GOAWAY through the tunnel",
          .enabled(if: ProxyPeer.squidInstalled && NGHTTPD.isInstalled && TestCertificates.isAvailable, ProxyPeer.squidSkipReason))
    func http2UploadsThroughTLSProxy() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let squid = try await ProxyPeer.squid(tlsFiles: (certificates.valid.certificate, certificates.valid.key))
        defer { squid.stop() }
        let big = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) })
        let server = try await NGHTTPD.start(files: ["big.bin": big], tls: (certificates.valid.certificate, certificates.valid.key))
        defer { server.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-h2-proxy-upload-\(UUID().uuidString)")
        try big.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withLeakCheck { leaks in
            leaks.watch(port: squid.port)
            let trusted = TLSOptions(trustRoots: .pem(certificates.caPEM))
            let transport = transport(leaks, squid.proxy(.https, tls: trusted), tls: trusted)
            let connection = leaks.track(HTTPConnection(baseURL: server.url("/"), configuration: .init(transport: transport, cache: nil)))
            let opening = try await connection.get("/big.bin")
            #expect(opening.body == big && opening.metrics?.httpVersion == "HTTP/2")
            let chunks = stride(from: 0, to: big.count, by: 100_000).map { Data(big[$0..<min($0 + 100_000, big.count)]) }
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        let body: HTTPRequest.Body = switch index % 4 {
                        case 0: .data(big, contentType: "application/octet-stream")
                        case 1: try .file(file)
                        case 2: .stream(AsyncStream { continuation in
                            for chunk in chunks { continuation.yield(chunk) }
                            continuation.finish()
                        })
                        default: .none
                        }
                        let request = index % 4 == 3 ? HTTPRequest(.get, "/big.bin") : HTTPRequest(.post, "/echo", body: body)
                        let response = try await connection.send(request)
                        return response.body == big && response.metrics?.httpVersion == "HTTP/2"
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results == Array(repeating: true, count: 12))
            #expect(server.sessionCount() == 1, "nghttpd saw \(server.sessionCount()) connections")
            transport.shutdown()
            #expect(await eventually(timeout: .seconds(5)) { server.log().contains("recv GOAWAY") }, "nghttpd heard no GOAWAY")
        }
    }

    @Test("plain http forwarded by an https:// proxy is HTTP/1.1 even with .http2PriorKnowledge, as through an http:// proxy",
          .enabled(if: ProxyPeer.squidInstalled && TestCertificates.isAvailable, ProxyPeer.squidSkipReason))
    func forwardedThroughTLSProxyIsHTTP1() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let squid = try await ProxyPeer.squid(tlsFiles: (certificates.valid.certificate, certificates.valid.key))
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: squid.port)
            let trusted = TLSOptions(trustRoots: .pem(certificates.caPEM))
            var configuration = NativeTransport.Configuration(tls: trusted)
            configuration.proxy = ProxyConfiguration(all: squid.proxy(.https, tls: trusted))
            configuration.httpVersion = .http2PriorKnowledge
            let transport = leaks.native(configuration)
            defer { transport.shutdown() }
            let connection = leaks.track(HTTPConnection(baseURL: server.url("/"), configuration: .init(transport: transport, cache: nil)))
            let response = try await connection.get("/echo/plain")
            #expect(response.status.code == 200)
            #expect(response.metrics?.httpVersion == "HTTP/1.1")
            let echo = try JSONDecoder().decode(Echo.self, from: response.body)
            #expect(echo.header("Via")?.contains("squid") == true, "\(echo.headers)")
        }
    }

    @Test("the proxy's certificate is checked with the proxy's own TLS options, not the origins': proxyTLSFailed",
          .enabled(if: ProxyPeer.squidInstalled && TestCertificates.isAvailable, ProxyPeer.squidSkipReason))
    func proxyCertificateUntrusted() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let squid = try await ProxyPeer.squid(tlsFiles: (certificates.valid.certificate, certificates.valid.key))
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: squid.port)
            // The origins' trust roots hold the CA; the proxy's (the system's) do not.
            let transport = transport(leaks, squid.proxy(.https, credentials: ProxyCredentials(username: "u", password: "pw-secret")),
                                      tls: TLSOptions(trustRoots: .pem(certificates.caPEM)))
            defer { transport.shutdown() }
            for url in [server.url("/echo"), URL(string: "https://127.0.0.1:\(server.port)/")!] {
                let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, url) }
                #expect(error == .proxyTLSFailed, "\(url): \(String(describing: error))")
                #expect(error?.detail?.contains("https://127.0.0.1:\(squid.port)") == true, "\(String(describing: error?.detail))")
                #expect(error?.description.contains("pw-secret") == false)
            }
            #expect(server.requestCount(path: "/echo") == 0)
        }
    }

    @Test("a proxy whose certificate names another host: proxyTLSFailed (checked against the proxy's name)",
          .enabled(if: ProxyPeer.squidInstalled && TestCertificates.isAvailable, ProxyPeer.squidSkipReason))
    func proxyCertificateForAnotherHost() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let squid = try await ProxyPeer.squid(tlsFiles: (certificates.wrongHost.certificate, certificates.wrongHost.key))
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: squid.port)
            let trusted = TLSOptions(trustRoots: .pem(certificates.caPEM))
            let transport = transport(leaks, squid.proxy(.https, tls: trusted), tls: trusted)
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, server.url("/echo")) }
            #expect(error == .proxyTLSFailed, "\(String(describing: error))")
            #expect((error?.underlying as? TLSError) == .hostnameMismatch, "\(String(describing: error?.underlying))")
        }
    }

    @Test("an https:// proxy URL: port 443 by default, TLS options carried, described without credentials")
    func proxyURL() throws {
        let options = TLSOptions(trustRoots: .pem(Data("not used here".utf8)))
        let proxy = try Proxy(url: "https://user:pw@Proxy.Example", tls: options)
        #expect(proxy.kind == .https && proxy.port == 443 && proxy.host == "proxy.example" && proxy.tls == options)
        #expect(proxy.description == "https://proxy.example:443")
        #expect(Proxy(.https, host: "p").port == 443 && Proxy(.http, host: "p").port == 1080)
        let fromEnvironment = try ProxyConfiguration.environment(["https_proxy": "https://proxy.example:8443"])
            .proxy(for: URL(string: "https://example.com/")!)
        #expect(fromEnvironment?.kind == .https && fromEnvironment?.port == 8443)
        let forwarded = try NativeRequestTarget(url: URL(string: "http://example.com/a")!, proxies: ProxyConfiguration(all: proxy))
        #expect(forwarded.key.forwardsThroughProxy && forwarded.key.tlsToProxy && !forwarded.key.tunnels)
        #expect(forwarded.path == "http://example.com/a" && forwarded.proxyAuthorization != nil)
        let tunnelled = try NativeRequestTarget(url: URL(string: "https://example.com/a")!, proxies: ProxyConfiguration(all: proxy))
        #expect(tunnelled.key.tunnels && tunnelled.key.tlsToProxy && tunnelled.proxyAuthorization == nil)
    }
}

import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Reliability catalogue, proxy faults: a proxy that refuses, answers `CONNECT` with 403, 407 or
/// 502, closes mid-handshake, trickles, or sends bytes the origin never sent. Each ends in its
/// own error with exactly one terminal callback, a connection that still serves (its follow-up
/// `GET /echo` goes direct: only `https` goes through the proxy) and no leak. P1–P5, P7 and P10
/// are native only; P6 and P8 also run on URLSession, which cannot send through a proxy on Linux
/// (FoundationNetworking ignores `connectionProxyDictionary`) and must refuse with
/// `unsupportedByTransport` rather than go direct. URLSession has no Unix socket routes (P7).
/// P9 runs against real peers (squid's `https_port`, nginx with http2) and skips visibly
/// without them.
@Suite("Catalogue P: proxy faults")
struct ProxyFaultCases {
    /// Runs `GET https://127.0.0.1:9/x` through the proxy on `proxyPort` (misbehaving test
    /// server, or a closed port) and returns its outcome.
    private func runThroughProxy(port proxyPort: Int, watching proxy: TestServer?, kind: Proxy.Kind = .http,
                                 on transportKind: TransportUnderTest = .native,
                                 authenticator: (any ProxyAuthenticator)? = nil,
                                 connectTimeout: Duration = .seconds(10),
                                 sourceLocation: SourceLocation = #_sourceLocation) async throws -> CaseOutcome {
        let server = try TestServer()
        defer { server.shutdown() }
        let made = WeakReference<NativeTransport>()
        var configuration = NativeTransport.Configuration(connectTimeout: connectTimeout)
        configuration.proxy = ProxyConfiguration(http: nil, https: Proxy(kind, host: "127.0.0.1", port: proxyPort,
                                                                          credentials: ProxyCredentials(username: "u", password: "secret-pw")))
        configuration.proxyAuthenticator = authenticator
        return try await runCase(transportKind, on: server, HTTPRequest(.get, "https://127.0.0.1:9/x"),
                                 configure: { connection in
                                     if transportKind == .urlSession {
                                         connection.transport = URLSessionTransport(proxy: configuration.proxy)
                                         return
                                     }
                                     let transport = NativeTransport(configuration: configuration)
                                     made.value = transport
                                     connection.transport = transport
                                 },
                                 during: { context, _ in
                                     if let transport = made.value { context.leaks.track(transport) }
                                     if let proxy { context.leaks.watch(proxy) }
                                 },
                                 sourceLocation: sourceLocation)
    }

    private func misbehaving(_ fault: TestServer.ProxyFault) throws -> TestServer {
        var configuration = TestServer.Configuration()
        configuration.proxyFault = fault
        return try TestServer(configuration: configuration)
    }

    @Test("P1 the proxy refuses the connection: proxyUnreachable")
    func refused() async throws {
        let outcome = try await runThroughProxy(port: 1, watching: nil)
        #expect(outcome.error == .proxyUnreachable, "\(outcome.result)")
        #expect(outcome.error?.description.contains("secret-pw") == false)
    }

    @Test("P2 CONNECT answered 407, 403, 502: proxyAuthenticationRequired, proxyForbidden, proxyCannotReachOrigin",
          arguments: [(407, HTTPConnectionError.proxyAuthenticationRequired), (403, .proxyForbidden), (502, .proxyCannotReachOrigin)])
    func refusedTunnel(status: Int, expected: HTTPConnectionError) async throws {
        let proxy = try misbehaving(.status(status))
        defer { proxy.shutdown() }
        let outcome = try await runThroughProxy(port: proxy.port, watching: proxy)
        #expect(outcome.error == expected, "\(outcome.result)")
        #expect(outcome.error?.description.contains("\(status)") == true)
        #expect(outcome.error?.description.contains("secret-pw") == false)
    }

    @Test("P3 the proxy closes before or in the middle of its answer: proxyClosedConnection",
          arguments: [TestServer.ProxyFault.closeBeforeAnswer, .closeMidAnswer])
    func closedMidHandshake(fault: TestServer.ProxyFault) async throws {
        let proxy = try misbehaving(fault)
        defer { proxy.shutdown() }
        let outcome = try await runThroughProxy(port: proxy.port, watching: proxy)
        #expect(outcome.error == .proxyClosedConnection, "\(outcome.result)")
    }

    @Test("P4 the proxy trickles a head that never ends: timedOut at the connect timeout")
    func trickle() async throws {
        let proxy = try misbehaving(.trickle(interval: .milliseconds(50)))
        defer { proxy.shutdown() }
        let started = ContinuousClock.now
        let outcome = try await runThroughProxy(port: proxy.port, watching: proxy, connectTimeout: .seconds(1))
        #expect(outcome.error == .timedOut, "\(outcome.result)")
        #expect(outcome.error?.detail?.contains("tunnel") == true)
        #expect(ContinuousClock.now - started < .seconds(8))
    }

    @Test("P5 bytes after the 200 that the origin never sent: proxyBadResponse")
    func bytesAfterEstablished() async throws {
        let proxy = try misbehaving(.bytesAfterEstablished)
        defer { proxy.shutdown() }
        let outcome = try await runThroughProxy(port: proxy.port, watching: proxy)
        #expect(outcome.error == .proxyBadResponse, "\(outcome.result)")
    }

    @Test("P6 the TLS handshake with an https:// proxy fails (it answers in plain HTTP): proxyTLSFailed; URLSession: unsupportedByTransport",
          arguments: TransportUnderTest.allCases)
    func proxyTLSHandshakeFails(transport: TransportUnderTest) async throws {
        let plain = try TestServer()
        defer { plain.shutdown() }
        let outcome = try await runThroughProxy(port: plain.port, watching: plain, kind: .https, on: transport)
        if transport == .urlSession {
            #expect(outcome.error == .unsupportedByTransport, "\(outcome.result)")
            #expect(plain.connectionsAccepted == 0)
            return
        }
        #expect(outcome.error == .proxyTLSFailed, "\(outcome.result)")
        #expect(outcome.error?.detail?.contains("https://127.0.0.1:\(plain.port)") == true)
        #expect(outcome.error?.description.contains("secret-pw") == false)
    }

    @Test("P7 a Unix socket route whose socket is missing: unixSocketNotFound")
    func unixSocketMissing() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let made = WeakReference<NativeTransport>()
        var configuration = NativeTransport.Configuration()
        configuration.unixSockets = [try .init(host: "missing.test", path: "/tmp/courier-missing-\(UUID().uuidString.prefix(8)).sock")]
        let outcome = try await runCase(.native, on: server, HTTPRequest(.get, "http://missing.test/x"),
                                        configure: { connection in
                                            let transport = NativeTransport(configuration: configuration)
                                            made.value = transport
                                            connection.transport = transport
                                        },
                                        during: { context, _ in
                                            if let transport = made.value { context.leaks.track(transport) }
                                        })
        #expect(outcome.error == .unixSocketNotFound, "\(outcome.result)")
        #expect(outcome.error?.detail?.contains("courier-missing-") == true)
    }

    @Test("P10 an https:// proxy that closes the connection during the TLS handshake with it: proxyTLSFailed naming the proxy, every time, for a forwarded and a tunnelled request")
    func httpsProxyClosesDuringHandshake() async throws {
        let peer = try ProxyChaosPeer(speaks: .http)
        defer { peer.stop() }
        await withLeakCheck { leaks in
            leaks.watch(port: peer.port)
            var configuration = NativeTransport.Configuration()
            configuration.proxy = ProxyConfiguration(all: Proxy(.https, host: "127.0.0.1", port: peer.port,
                                                                credentials: ProxyCredentials(username: "u", password: "secret-pw")))
            let transport = leaks.native(configuration)
            let connection = leaks.track(HTTPConnection(baseURL: URL(string: "http://127.0.0.1:9")!,
                                                        configuration: .init(timeout: .seconds(10), transport: transport, cache: nil)))
            for attempt in 0..<20 {
                // The peer closes as soon as it accepts, without reading: the client's write or
                // its read meets the close (a reset once the ClientHello is there).
                peer.plan(.closeAtOnce)
                let url = attempt % 2 == 0 ? "http://127.0.0.1:9/forwarded" : "https://127.0.0.1:9/tunnelled"
                let error = await failure { () async throws(HTTPConnectionError) in try await connection.get(url) }
                #expect(error == .proxyTLSFailed, "\(url), attempt \(attempt): \(String(describing: error))")
                #expect(error?.detail?.contains("https://127.0.0.1:\(peer.port)") == true, "\(String(describing: error?.detail))")
                #expect(error?.description.contains("secret-pw") == false)
            }
            #expect(peer.log.accepted == 20)
        }
    }

    @Test("P9 the https:// proxy dies while an HTTP/2 body streams through its tunnel: the stream ends with connectionLost, the next request with proxyUnreachable; URLSession: unsupportedByTransport",
          .enabled(if: ProxyPeer.squidInstalled && Nginx.isInstalled && TestCertificates.isAvailable, ProxyPeer.squidSkipReason),
          arguments: TransportUnderTest.allCases)
    func proxyDiesUnderHTTP2Stream(transport transportKind: TransportUnderTest) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let squid = try await ProxyPeer.squid(tlsFiles: (certificates.valid.certificate, certificates.valid.key))
        defer { squid.stop() }
        let large = Data(repeating: 0x61, count: 32 << 20)
        let nginx = try await Nginx.start(files: ["large.bin": large], tls: (certificates.valid.certificate, certificates.valid.key),
                                          http2: true)
        defer { nginx.stop() }
        await withLeakCheck { leaks in
            let trusted = TLSOptions(trustRoots: .pem(certificates.caPEM))
            let proxies = ProxyConfiguration(all: squid.proxy(.https, tls: trusted))
            var configuration = NativeTransport.Configuration(tls: trusted)
            configuration.proxy = proxies
            let native = transportKind == .native ? leaks.native(configuration) : nil
            defer { native?.shutdown() }
            let transport: any Transport = native ?? URLSessionTransport(proxy: proxies)
            let connection = leaks.track(HTTPConnection(baseURL: nginx.url("/"), configuration: .init(transport: transport, cache: nil)))
            var request = HTTPRequest(.get, "/large.bin")
            request.timeout = .seconds(10)
            let streamed: HTTPStreamingResponse
            do throws(HTTPConnectionError) {
                streamed = try await connection.stream(request)
            } catch {
                #expect(transportKind == .urlSession && error == .unsupportedByTransport, "\(error)")
                return
            }
            #expect(transportKind == .native)
            #expect(streamed.head.status.code == 200)
            var received = 0
            var ending: HTTPConnectionError?
            do throws(HTTPConnectionError) {
                var iterator = streamed.body.makeAsyncIterator()
                while let chunk = try await iterator.next() {
                    received += chunk.count
                    // The consumer holds back after its first chunk while the proxy dies.
                    if received == chunk.count { squid.stop() }
                }
            } catch {
                ending = error
            }
            #expect(received < large.count, "the body cannot all have arrived before the proxy died")
            #expect(ending == .connectionLost, "\(String(describing: ending))")
            let next = await failure { () async throws(HTTPConnectionError) in try await connection.get("/large.bin") }
            #expect(next == .proxyUnreachable, "\(String(describing: next))")
        }
    }

    @Test("P8 the proxy answers 407 again after its authenticator supplied credentials: proxyAuthenticationFailed, one refresh; URLSession: unsupportedByTransport",
          arguments: TransportUnderTest.allCases)
    func refusedAfterRefresh(transport: TransportUnderTest) async throws {
        let proxy = try misbehaving(.status(407))
        defer { proxy.shutdown() }
        let refreshes = Mutex(0)
        let authenticator = ProxyCredentialsProvider { _ in
            refreshes.withLock { $0 += 1 }
            return ProxyCredentials(username: "u", password: "fresh-secret")
        }
        let outcome = try await runThroughProxy(port: proxy.port, watching: proxy, on: transport, authenticator: authenticator)
        if transport == .urlSession {
            #expect(outcome.error == .unsupportedByTransport, "\(outcome.result)")
            #expect(refreshes.withLock { $0 } == 0)
            return
        }
        #expect(outcome.error == .proxyAuthenticationFailed, "\(outcome.result)")
        #expect(refreshes.withLock { $0 } == 1)
        #expect(proxy.connectionsAccepted == 2, "the CONNECT, and its one replay")
        #expect(outcome.error?.description.contains("fresh-secret") == false && outcome.error?.description.contains("secret-pw") == false)
    }
}

@testable import Courier
import CourierTestSupport
import CourierTestServer
import Foundation
import Synchronization
import Testing

/// The proxy re-authentication queue (``ProxyAuthenticator``) against squid requiring Basic
/// proxy authentication: one refresh for every request held on a 407, a second 407 after it,
/// giving up, and where the credentials must never show.
@Suite("Native transport: the 407 proxy-authenticator queue (squid)")
struct NativeTransportProxyAuthenticatorTests {
    /// An authenticator that counts its calls, keeps the challenges it saw, and answers after a
    /// short pause (so that concurrent requests meet the refresh while it runs).
    final class CountingAuthenticator: ProxyAuthenticator {
        let answer: ProxyCredentials?
        let calls = Mutex(0)
        let seen = Mutex<[ProxyChallenge]>([])
        init(answer: ProxyCredentials?) { self.answer = answer }

        func credentials(for challenge: ProxyChallenge) async throws -> ProxyCredentials? {
            calls.withLock { $0 += 1 }
            seen.withLock { $0.append(challenge) }
            try await Task.sleep(for: .milliseconds(100))
            return answer
        }
    }

    private func transport(_ leaks: LeakCheck, _ squid: ProxyPeer, _ authenticator: any ProxyAuthenticator,
                           tls: TLSOptions = TLSOptions()) -> NativeTransport {
        var configuration = NativeTransport.Configuration(tls: tls)
        configuration.proxy = ProxyConfiguration(all: squid.proxy(.http))
        configuration.proxyAuthenticator = authenticator
        return leaks.native(configuration)
    }

    @Test("a 407 holds the proxy's requests, asks the authenticator once, and replays them; later requests use the new credentials",
          .enabled(if: ProxyPeer.squidInstalled && Nginx.isInstalled && TestCertificates.isAvailable, ProxyPeer.squidSkipReason))
    func oneRefreshForAll() async throws {
        let squid = try await ProxyPeer.squid(authenticated: true)
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(files: ["page.txt": Data("tunnelled".utf8)], tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: squid.port)
            let authenticator = CountingAuthenticator(answer: ProxyPeer.squidUser)
            let transport = transport(leaks, squid, authenticator, tls: TLSOptions(trustRoots: .pem(certificates.caPEM)))
            defer { transport.shutdown() }
            let echoes = try await withThrowingTaskGroup(of: Echo.self) { group in
                for index in 0..<5 {
                    group.addTask { try JSONDecoder().decode(Echo.self, from: try await fetch(transport, server.url("/echo/\(index)")).body) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(echoes.count == 5)
            #expect(echoes.allSatisfy { $0.header("Via")?.contains("squid") == true && $0.header("Proxy-Authorization") == nil })
            #expect(authenticator.calls.withLock { $0 } == 1, "one refresh for five held requests")
            let challenge = try #require(authenticator.seen.withLock { $0.first })
            #expect(challenge.challenges.contains { $0.contains("Basic") && $0.contains("courier-tests") }, "\(challenge.challenges)")
            #expect(challenge.refused == nil && challenge.proxy.credentials == nil)
            // Tunnels to an https origin: the queue's credentials are current, so no refresh.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        let body = try await fetch(transport, nginx.url("/page.txt")).body
                        #expect(body == Data("tunnelled".utf8))
                    }
                }
                try await group.waitForAll()
            }
            #expect(authenticator.calls.withLock { $0 } == 1)
        }
    }

    @Test("a CONNECT 407 is refreshed the same way",
          .enabled(if: ProxyPeer.squidInstalled && Nginx.isInstalled && TestCertificates.isAvailable, ProxyPeer.squidSkipReason))
    func tunnelRefresh() async throws {
        let squid = try await ProxyPeer.squid(authenticated: true)
        defer { squid.stop() }
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(files: ["page.txt": Data("tunnelled".utf8)], tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: squid.port)
            let authenticator = CountingAuthenticator(answer: ProxyPeer.squidUser)
            let transport = transport(leaks, squid, authenticator, tls: TLSOptions(trustRoots: .pem(certificates.caPEM)))
            defer { transport.shutdown() }
            let body = try await fetch(transport, nginx.url("/page.txt")).body
            #expect(body == Data("tunnelled".utf8))
            #expect(authenticator.calls.withLock { $0 } == 1)
            #expect(authenticator.seen.withLock { $0.first?.challenges.isEmpty == false })
        }
    }

    @Test("refused again after the refresh: proxyAuthenticationFailed; an authenticator that gives up leaves the 407",
          .enabled(if: ProxyPeer.squidInstalled, ProxyPeer.squidSkipReason))
    func refusedAgainAndGivingUp() async throws {
        let squid = try await ProxyPeer.squid(authenticated: true)
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: squid.port)
            let wrong = CountingAuthenticator(answer: ProxyCredentials(username: "courier", password: "wr0ng-pass"))
            let refused = transport(leaks, squid, wrong)
            defer { refused.shutdown() }
            for url in [server.url("/echo"), URL(string: "https://127.0.0.1:\(server.port)/")!] {
                let error = await failure { () async throws(HTTPConnectionError) in try await fetch(refused, url) }
                #expect(error == .proxyAuthenticationFailed, "\(url): \(String(describing: error))")
                #expect(error?.description.contains("wr0ng-pass") == false)
            }
            // One refresh per request that met a 407 with the current credentials: two requests, two refreshes.
            #expect(wrong.calls.withLock { $0 } == 2)
            #expect(wrong.seen.withLock { $0.last?.refused?.password } == "wr0ng-pass")

            let givingUp = CountingAuthenticator(answer: nil)
            let plain = transport(leaks, squid, givingUp)
            defer { plain.shutdown() }
            let status = try await fetch(plain, server.url("/echo")).status.code
            #expect(status == 407)
            let tunnel = await failure { () async throws(HTTPConnectionError) in
                try await fetch(plain, URL(string: "https://127.0.0.1:\(server.port)/")!)
            }
            #expect(tunnel == .proxyAuthenticationRequired, "\(String(describing: tunnel))")
            #expect(server.requestCount(path: "/echo") == 0)
        }
    }

    @Test("proxy credentials from the authenticator reach neither the origin, the event monitor, metrics, errors, the curl command nor the HAR file",
          .enabled(if: ProxyPeer.squidInstalled, ProxyPeer.squidSkipReason))
    func credentialsNeverShow() async throws {
        let squid = try await ProxyPeer.squid(authenticated: true)
        defer { squid.stop() }
        let server = try TestServer()
        defer { server.shutdown() }
        let recorder = HARRecorder()
        let events = Mutex<[String]>([])
        try await withLeakCheck { leaks in
            leaks.watch(server)
            leaks.watch(port: squid.port)
            let transport = transport(leaks, squid, CountingAuthenticator(answer: ProxyPeer.squidUser))
            defer { transport.shutdown() }
            var configuration = HTTPConnection.Configuration()
            configuration.transport = transport
            configuration.harRecorder = recorder
            configuration.eventMonitor = EventMonitor { event in events.withLock { $0.append("\(event)") } }
            let connection = HTTPConnection(baseURL: server.baseURL, configuration: configuration)
            let request = HTTPRequest(.get, "/echo/secret-check")
            let response = try await connection.send(request)
            let echo = try JSONDecoder().decode(Echo.self, from: response.body)
            #expect(echo.header("Proxy-Authorization") == nil && echo.header("Via")?.contains("squid") == true)
            let basic = ProxyPeer.squidUser.basicAuthorization.dropFirst("Basic ".count)
            let texts = [String(decoding: try recorder.harData(), as: UTF8.self), events.withLock { $0.joined(separator: "\n") },
                         "\(response.metrics as Any)", "\(response)", try connection.curlCommand(for: request, includingCredentials: true)]
            for text in texts {
                #expect(!text.contains(ProxyPeer.squidUser.password) && !text.contains(basic) && !text.lowercased().contains("proxy-authorization"),
                        "\(text.prefix(300))")
            }
            #expect(!events.withLock { $0 }.isEmpty)
        }
    }
}

import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Reliability catalogue, section F: redirects, on both transports (Courier follows redirects
/// itself; both transports hand every 3xx back to its pipeline).
@Suite("Catalogue F: redirects")
struct RedirectCases {
    /// `/hop/<n>` redirects to `/hop/<n-1>` with `status`; `/hop/0` answers "arrived".
    private func addChain(to server: TestServer, status: Int = 302) {
        server.route("/hop/*") { request in
            let n = Int(request.path.split(separator: "/").last ?? "") ?? 0
            return n > 0 ? .response(status: status, headers: [("Location", "/hop/\(n - 1)")]) : .text("arrived")
        }
    }

    @Test("F1 a chain within the limit is followed; one over the limit fails with tooManyRedirects", arguments: TransportUnderTest.allCases)
    func chains(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        addChain(to: server)
        let outcomes = try await runCase(transport, on: server, [HTTPRequest(.get, "/hop/5"), HTTPRequest(.get, "/hop/6")],
                                         configure: { $0.redirectPolicy = .follow(limit: 5) })
        #expect(outcomes[0].response?.text == "arrived" && outcomes[0].response?.metrics?.redirects == 5, "\(outcomes[0].result)")
        #expect(outcomes[1].error == .tooManyRedirects, "\(outcomes[1].result)")
    }

    @Test("F2 a redirect cycle is detected", arguments: TransportUnderTest.allCases)
    func cycle(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/ping") { _ in .response(status: 302, headers: [("Location", "/pong")]) }
        server.route("/pong") { _ in .response(status: 302, headers: [("Location", "/ping")]) }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/ping"))
        #expect(outcome.error == .redirectCycle, "\(outcome.result)")
        #expect(server.requestCount(path: "/ping") == 1)
    }

    @Test("F3 301/302/303 turn POST into GET without a body; 307/308 keep both", arguments: TransportUnderTest.allCases)
    func methodRewrite(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let statuses = [301, 302, 303, 307, 308]
        for status in statuses {
            server.route("/moved/\(status)") { _ in .response(status: status, headers: [("Location", "/echo/\(status)")]) }
        }
        let requests = statuses.map { HTTPRequest(.post, "/moved/\($0)", body: .text("payload")) }
        let outcomes = try await runCase(transport, on: server, requests)
        for (status, outcome) in zip(statuses, outcomes) {
            let echo = try #require(try outcome.response?.decode(Echo.self), "\(status): \(outcome.result)")
            let keeps = status >= 307
            #expect(echo.method == (keeps ? "POST" : "GET"), "\(status)")
            #expect(echo.body == (keeps ? "payload" : ""), "\(status)")
            #expect(keeps || echo.header("Content-Type") == nil, "\(status)")
        }
    }

    @Test("F4 Authorization and cookies are not sent to another origin; they stay within one", arguments: TransportUnderTest.allCases)
    func crossOrigin(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        let other = try TestServer()
        defer { server.shutdown(); other.shutdown() }
        let elsewhere = other.url("/echo/elsewhere").absoluteString
        server.route("/away") { _ in .response(status: 302, headers: [("Location", elsewhere)]) }
        server.route("/stay") { _ in .response(status: 307, headers: [("Location", "/echo/here")]) }
        let secrets: HTTPHeaders = ["Authorization": "Bearer s3cret", "Cookie": "session=1", "X-Trace": "keep"]
        let outcomes = try await runCase(transport, on: server, [HTTPRequest(.get, "/away", headers: secrets), HTTPRequest(.get, "/stay", headers: secrets)],
                                         during: { context, _ in context.leaks.watch(other) })
        let away = try #require(try outcomes[0].response?.decode(Echo.self), "\(outcomes[0].result)")
        #expect(away.path == "/echo/elsewhere" && away.header("Authorization") == nil && away.header("Cookie") == nil)
        #expect(away.header("X-Trace") == "keep")
        let stay = try #require(try outcomes[1].response?.decode(Echo.self), "\(outcomes[1].result)")
        #expect(stay.header("Authorization") == "Bearer s3cret" && stay.header("Cookie") == "session=1")
    }

    @Test("F4 an https → http redirect is refused by default (native transport, nginx with a test CA)",
          .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable, "nginx and openssl are needed"))
    func downgradeRefused() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(server: "location /down { return 302 \(server.url("/echo/plain").absoluteString); }",
                                          tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        let trusting = NativeTransport.Configuration(tls: TLSOptions(trustRoots: .pem(certificates.caPEM)))
        let refused = try await runCase(.native, on: server, HTTPRequest(.get, nginx.url("/down").absoluteString),
                                        configure: { $0.transport = NativeTransport(configuration: trusting) },
                                        during: { context, _ in context.leaks.watch(port: nginx.port) })
        #expect(refused.error == .redirectRefused, "\(refused.result)")
        #expect(server.requestCount(path: "/echo/plain") == 0)
        let allowed = try await runCase(.native, on: server, HTTPRequest(.get, nginx.url("/down").absoluteString),
                                        configure: { $0.transport = NativeTransport(configuration: trusting); $0.redirectPolicy = .follow(allowingInsecureDowngrade: true) })
        #expect(allowed.response?.url.path == "/echo/plain", "\(allowed.result)")
    }

    @Test("F5 a redirect without Location is the response itself; an unusable Location fails clearly", arguments: TransportUnderTest.allCases)
    func badLocation(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/nowhere") { _ in .response(status: 302) }
        server.route("/ftp") { _ in .response(status: 301, headers: [("Location", "ftp://files.example/x")]) }
        server.route("/garbage") { _ in .response(status: 302, headers: [("Location", "http://[::1")]) }
        let outcomes = try await runCase(transport, on: server, [HTTPRequest(.get, "/nowhere"), HTTPRequest(.get, "/ftp"), HTTPRequest(.get, "/garbage")])
        #expect(outcomes[0].error == .unacceptableStatus && outcomes[0].status == 302, "\(outcomes[0].result)")
        #expect(outcomes[1].error == .redirectRefused, "\(outcomes[1].result)")
        #expect(outcomes[2].error == .redirectRefused || outcomes[2].error == .invalidURL, "\(outcomes[2].result)")
    }
}

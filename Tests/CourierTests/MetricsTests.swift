import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Per-request metrics and the event monitor.
@Suite("Metrics and monitoring")
struct MetricsTests {
    final class MetricsListener: HTTPConnectionDelegate {
        let order = Mutex<[String]>([])
        let collected = Mutex<RequestMetrics?>(nil)
        func connection(_ connection: HTTPConnection, request id: RequestID, didCollect metrics: RequestMetrics) {
            order.withLock { $0.append("metrics") }
            collected.withLock { $0 = metrics }
        }
        func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
            order.withLock { $0.append("finish") }
        }
    }

    @Test("metrics reach the delegate before the terminal call and ride on the response", arguments: TransportUnderTest.allCases)
    func metricsDelivered(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport)
            let listener = leaks.track(MetricsListener())
            connection.delegate = listener
            let response = try await connection.post("/echo", body: .text(String(repeating: "x", count: 1000)))
            let metrics = try #require(response.metrics)
            #expect(metrics.attempts == 1)
            #expect(metrics.redirects == 0)
            #expect(metrics.bytesSent >= 1000)
            #expect(metrics.bytesReceived >= Int64(response.body.count))
            #expect(metrics.complete > .zero)
            #expect(metrics.firstByte != nil)
            #expect(await eventually { listener.order.withLock { $0 } == ["metrics", "finish"] })
            #expect(listener.collected.withLock { $0?.attempts } == 1)
        }
    }

    /// Checks that the phases of `metrics` follow one another within the request's total time.
    static func expectOrdered(_ metrics: RequestMetrics, sourceLocation: SourceLocation = #_sourceLocation) {
        let phases = [metrics.queued, metrics.dnsLookup, metrics.connect, metrics.tlsHandshake, metrics.requestSent, metrics.firstByte]
        #expect(phases.allSatisfy { ($0 ?? .zero) >= .zero }, "\(phases)", sourceLocation: sourceLocation)
        let opening = (metrics.dnsLookup ?? .zero) + (metrics.connect ?? .zero) + (metrics.tlsHandshake ?? .zero)
        #expect(opening <= (metrics.queued ?? .zero), "\(metrics)", sourceLocation: sourceLocation)
        let sequence = (metrics.queued ?? .zero) + (metrics.requestSent ?? .zero) + (metrics.firstByte ?? .zero)
        #expect(sequence <= metrics.complete, "\(sequence) > \(metrics.complete)", sourceLocation: sourceLocation)
    }

    @Test("a fresh HTTPS connection reports every phase; a reused one reports no connection phases",
          .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable, "nginx and openssl are needed for the TLS tests"))
    func httpsPhases() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let page = Data(String(repeating: "timed ", count: 500).utf8)
        // By name, so that the host is resolved.
        let nginx = try await Nginx.start(files: ["page.txt": page], tls: (certificates.valid.certificate, certificates.valid.key),
                                          host: "localhost")
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: nginx.port)
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            // No cache: nginx's Last-Modified makes the file heuristically fresh for a moment,
            // and a cache hit has no transport phases to report.
            let connection = leaks.track(HTTPConnection(baseURL: nginx.baseURL, configuration: .init(transport: transport, cache: nil)))

            let fresh = try #require(try await connection.get("/page.txt").metrics)
            #expect(!fresh.reusedConnection)
            #expect(fresh.queued != nil)
            #expect(fresh.dnsLookup != nil)
            #expect(fresh.connect != nil)
            #expect(fresh.tlsHandshake != nil)
            #expect(fresh.requestSent != nil)
            #expect(fresh.firstByte != nil)
            Self.expectOrdered(fresh)

            let reused = try #require(try await connection.get("/page.txt").metrics)
            #expect(reused.reusedConnection)
            #expect(reused.dnsLookup == nil)
            #expect(reused.connect == nil)
            #expect(reused.tlsHandshake == nil)
            #expect(reused.queued != nil)
            #expect(reused.requestSent != nil)
            #expect(reused.firstByte != nil)
            Self.expectOrdered(reused)
        }
    }

    @Test("plain HTTP to a numeric address: no DNS or TLS phase; URLSession reports no connection phases",
          arguments: TransportUnderTest.allCases)
    func plainPhases(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let connection = leaks.connection(server, transport)
            let fresh = try #require(try await connection.get("/echo").metrics)
            let reused = try #require(try await connection.get("/echo").metrics)
            for metrics in [fresh, reused] {
                #expect(metrics.dnsLookup == nil)
                #expect(metrics.tlsHandshake == nil)
                #expect(metrics.firstByte != nil)
                Self.expectOrdered(metrics)
            }
            switch transport {
            case .native:
                #expect(!fresh.reusedConnection)
                #expect(fresh.connect != nil)
                #expect(reused.reusedConnection)
                #expect(reused.connect == nil)
                #expect([fresh, reused].allSatisfy { $0.queued != nil && $0.requestSent != nil })
            case .urlSession:
                // FoundationNetworking reports no timings on Linux.
                #expect([fresh, reused].allSatisfy { $0.queued == nil && $0.connect == nil && $0.requestSent == nil })
                #expect(!reused.reusedConnection)
            }
        }
    }

    @Test("the event monitor hears every request with credentials redacted", arguments: TransportUnderTest.allCases)
    func monitorRedacts(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let lines = Mutex<[String]>([])
            let monitor = EventMonitor { event in lines.withLock { $0.append(event.description) } }
            let connection = leaks.connection(server, transport) { $0.eventMonitor = monitor }
            _ = try await connection.get("/echo", query: [.init("access_token", "tok-123"), .init("page", "2")],
                                         headers: ["Authorization": "Bearer s3cret-token", "X-Magic-Auth": "key-456", "Accept": "text/plain"])
            await #expect(throws: HTTPConnectionError.unacceptableStatus) { try await connection.get("/status/404") }
            let log = lines.withLock { $0 }.joined(separator: "\n")
            #expect(log.contains("GET"))
            #expect(log.contains("page=2"))
            #expect(log.contains("Accept: text/plain"))
            #expect(log.contains("← 200"))
            #expect(log.contains("404"))
            for secret in ["tok-123", "s3cret-token", "key-456"] {
                #expect(!log.contains(secret), "\(secret) leaked into the log")
            }
        }
    }
}

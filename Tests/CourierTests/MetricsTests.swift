import Courier
import CourierTestServer
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

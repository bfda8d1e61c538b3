import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Secrets never reach a log line or an error description (security review M1, L6, I13).
@Suite("Redaction of secrets")
struct RedactionTests {
    /// A monitor that keeps every event's description.
    final class LogLines: Sendable {
        private let lines = Mutex<[String]>([])
        var monitor: EventMonitor { EventMonitor { [self] event in lines.withLock { $0.append(event.description) } } }
        var text: String { lines.withLock { $0 }.joined(separator: "\n") }
    }

    @Test("M1 the event monitor shows Api-Key and the connection's default headers as <redacted>")
    func monitorRedactsKeyHeaders() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let log = LogLines()
            let connection = leaks.connection(server, .native) { configuration in
                configuration.eventMonitor = log.monitor
                configuration.headers = ["X-Tenant": "tenant-secret-1"]
            }
            let echo = try await connection.get("/echo", headers: ["Api-Key": "api-secret-2", "X-Trace": "trace-7"]).decode(Echo.self)
            #expect(echo.header("Api-Key") == "api-secret-2")
            #expect(echo.header("X-Tenant") == "tenant-secret-1")
            #expect(log.text.contains("Api-Key: <redacted>"))
            #expect(log.text.contains("X-Tenant: <redacted>"))
            #expect(log.text.contains("X-Trace: trace-7"))
            #expect(!log.text.contains("api-secret-2"))
            #expect(!log.text.contains("tenant-secret-1"))
        }
    }

    @Test("M1 names that suggest a credential are sensitive")
    func sensitiveNames() {
        for name in ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Magic-Auth", "X-API-Key", "Api-Key",
                     "Apikey", "X-Auth-Key", "X-Session-Id", "X-Password", "Ocp-Apim-Subscription-Key", "X-Credential",
                     "X-Access-Token", "Client-Secret"] {
            #expect(HTTPHeaders.isSensitive(name), "\(name)")
        }
        for name in ["Accept", "Content-Type", "User-Agent", "X-Trace", "Host", "Cache-Control",
                     "Idempotency-Key", "Sec-WebSocket-Key", "WWW-Authenticate"] {
            #expect(!HTTPHeaders.isSensitive(name), "\(name)")
        }
    }

    @Test("L6 a secret in a URL appears in no event and no error description",
          arguments: TransportUnderTest.allCases)
    func urlSecretsRedacted(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let log = LogLines()
            let connection = leaks.connection(server, transport) { configuration in
                configuration.eventMonitor = log.monitor
                configuration.retryPolicy = .exponentialBackoff(maxAttempts: 2)
                configuration.clock = RecordingClock()
            }
            server.route("/loop") { _ in .response(status: 302, headers: [("Location", "/loop?api_key=s3cret")]) }
            var descriptions: [String] = []
            for target in ["/status/404?access_token=s3cret", "/status/503?access_token=s3cret", "/loop?api_key=s3cret"] {
                do {
                    _ = try await connection.get(target)
                    Issue.record("\(target) succeeded")
                } catch {
                    descriptions.append("\(error)")
                }
            }
            #expect(descriptions.count == 3)
            #expect(log.text.contains("↻"))  // the 503 was retried, and the retry was reported
            #expect(log.text.contains("access_token=redacted"))
            for text in descriptions + [log.text] {
                #expect(!text.contains("s3cret"), "\(text)")
            }
        }
    }

    @Test("I13 a header field's description and debug description redact a credential")
    func fieldDescriptionRedacts() {
        let headers: HTTPHeaders = ["Api-Key": "k-secret", "Accept": "text/plain"]
        let field = headers.fields[0]
        #expect("\(field)" == "Api-Key: <redacted>")
        #expect(String(reflecting: field) == "Api-Key: <redacted>")
        #expect("\(headers.fields[1])" == "Accept: text/plain")
        let printed = "\(headers.fields)"
        #expect(!printed.contains("k-secret"))
        #expect(printed.contains("text/plain"))
    }
}

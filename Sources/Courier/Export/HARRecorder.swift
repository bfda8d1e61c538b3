import Foundation
import Synchronization

/// Records a connection's exchanges as an HTTP Archive (HAR 1.2), for debugging with a
/// browser's network panel or any HAR viewer.
///
/// Attach it through ``HTTPConnection/Configuration/harRecorder``; it then keeps one entry for
/// every request the connection puts on the wire: each attempt of a retry and each hop of a
/// redirect, as sent (the cookie jar's cookies included) and as answered. A failed attempt is
/// an entry with status 0 and the failure as its status text. Answers from the cache, which
/// never reach the wire, are not recorded.
///
/// Credentials are always redacted: the values of credential fields (as
/// ``TransportRequest/isCredential(_:)`` says, and `Set-Cookie`), passwords in URLs,
/// secret-looking query values, cookie values, and secret-looking members of JSON and form
/// bodies (`password`, `access_token`, …). Bodies are kept up to ``maximumBodySize`` bytes
/// each (a cut body says so in its `comment`), and at most ``maximumEntries`` entries, the
/// oldest going first. Text bodies are kept as text, others in base64.
///
/// What the archive cannot know is marked as HAR allows: `headersSize` is -1 (the bytes of the
/// head are not kept), an optional phase that did not happen or was not measured (`blocked`,
/// `dns`, `connect`, `ssl`) is -1 and a required one (`send`, `wait`) 0 (``URLSessionTransport``
/// measures only the wait for the first byte), and `httpVersion` is `HTTP/1.1`, the version
/// Courier's native transport speaks (a transport does not report the version it used).
///
/// ```swift
/// let recorder = HARRecorder()
/// var configuration = HTTPConnection.Configuration()
/// configuration.harRecorder = recorder
/// // … use a connection made with it, then:
/// try recorder.harData().write(to: URL(fileURLWithPath: "/tmp/session.har"))
/// ```
public final class HARRecorder: Sendable {
    /// The most body bytes kept per request and per response.
    public let maximumBodySize: Int
    /// The most entries kept; older ones are dropped.
    public let maximumEntries: Int
    private let exchanges = Mutex<[HARExchange]>([])

    /// Creates a recorder.
    /// - Parameters:
    ///   - maximumBodySize: the most body bytes kept per request and response; 64 KiB by default.
    ///   - maximumEntries: the most entries kept; 1000 by default.
    public init(maximumBodySize: Int = 64 << 10, maximumEntries: Int = 1_000) {
        self.maximumBodySize = max(0, maximumBodySize)
        self.maximumEntries = max(1, maximumEntries)
    }

    /// How many entries are held.
    public var count: Int { exchanges.withLock { $0.count } }

    /// Forgets every entry.
    public func removeAll() {
        exchanges.withLock { $0.removeAll() }
    }

    /// The archive, as the JSON text of a HAR 1.2 file: `log.version`, `log.creator` and one
    /// `log.entries[]` member per exchange, oldest first.
    /// - Throws: an error of `JSONSerialization` (not expected: every value is a string or number).
    public func harData() throws -> Data {
        let entries = exchanges.withLock { $0 }.map { $0.json(maximumBodySize: maximumBodySize) }
        let log: [String: Any] = [
            "log": [
                "version": "1.2",
                "creator": ["name": "Courier", "version": "1.0"],
                "entries": entries,
            ] as [String: Any],
        ]
        return try JSONSerialization.data(withJSONObject: log, options: [.prettyPrinted, .sortedKeys])
    }

    /// Records one attempt: what was sent, and what came back or why nothing did.
    func record(_ request: TransportRequest, started: Date, elapsed: Duration,
                outcome: Result<HTTPResponse, HTTPConnectionError>, metrics: RequestMetrics?) {
        let contentType = request.headers["Content-Type"]
        let requestBody = BodyRedaction.redacted(request.body, contentType: contentType)
        var exchange = HARExchange(
            started: started, method: request.method.rawValue, url: Redaction.url(request.url),
            requestHeaders: Redaction.headers(of: request),
            requestCookieNames: request.headers.values(for: "Cookie").flatMap(Self.cookieNames),
            requestBody: requestBody.prefix(maximumBodySize), requestBodySize: request.body.count,
            requestContentType: contentType, status: 0, statusText: "", responseHeaders: [:], responseCookies: [],
            responseBody: Data(), responseBodySize: 0, responseContentType: nil, redirectURL: "",
            timings: HARExchange.Timings(metrics, elapsed: elapsed))
        switch outcome {
        case .success(let response):
            let type = response.headers["Content-Type"]
            exchange.status = response.status.code
            exchange.statusText = response.status.reason
            exchange.responseHeaders = Redaction.headers(response.headers)
            exchange.responseCookies = response.headers.values(for: "Set-Cookie").compactMap(SetCookie.init)
            exchange.responseBody = BodyRedaction.redacted(response.body, contentType: type).prefix(maximumBodySize)
            exchange.responseBodySize = response.body.count
            exchange.responseContentType = type
            if let location = response.headers["Location"],
               let target = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: request.url)?.absoluteURL {
                exchange.redirectURL = Redaction.url(target)
            }
        case .failure(let error):
            exchange.statusText = error.description
            exchange.timings = HARExchange.Timings(nil, elapsed: elapsed)
        }
        exchanges.withLock { list in
            list.append(exchange)
            if list.count > maximumEntries { list.removeFirst(list.count - maximumEntries) }
        }
    }

    /// The names in a `Cookie` field value (`a=1; b=2` gives `a`, `b`).
    private static func cookieNames(_ value: String) -> [String] {
        value.split(separator: ";").compactMap { pair in
            let name = pair.prefix { $0 != "=" }.trimmingCharacters(in: .whitespaces)
            return name.isEmpty ? nil : name
        }
    }
}

/// The innermost stage of a connection with a ``HARRecorder``: times each attempt and records it.
struct HARStage: PipelineStage {
    let recorder: HARRecorder

    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        let started = Date()
        let start = ContinuousClock.now
        do {
            let response = try await next(request)
            recorder.record(request, started: started, elapsed: ContinuousClock.now - start, outcome: .success(response),
                            metrics: context.metrics.snapshot())
            return response
        } catch {
            recorder.record(request, started: started, elapsed: ContinuousClock.now - start, outcome: .failure(error), metrics: nil)
            throw error
        }
    }
}

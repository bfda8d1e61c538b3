import Foundation

/// One hook that hears every request and response of a connection, for logging or tracing.
///
/// Credentials are always redacted before the monitor sees anything: the values of header fields
/// whose names suggest a secret (`Authorization`, `Cookie`, `X-Magic-Auth`, `Api-Key`, …) and of
/// the connection's default headers become `<redacted>`, and so do passwords in URLs and query
/// parameters whose names suggest a secret (`token`, `key`, `password`, …), in every event,
/// error descriptions included.
///
/// ```swift
/// let monitor = EventMonitor { event in print(event) }
/// let connection = HTTPConnection(baseURL: url, configuration: .init(eventMonitor: monitor))
/// ```
///
/// The handler is called in order for each request, on whatever thread reports the event: one
/// of Courier's, or, for an `async` caller's request, the thread its caller's task runs on.
/// Keep it quick.
public struct EventMonitor: Sendable {
    private let handler: @Sendable (Event) -> Void

    /// Creates a monitor.
    /// - Parameter handler: receives every event.
    public init(_ handler: @escaping @Sendable (Event) -> Void) {
        self.handler = handler
    }

    func report(_ event: Event) { handler(event) }

    /// Something that happened to a request.
    public enum Event: Sendable, CustomStringConvertible {
        /// A request started, with its redacted method, URL and headers.
        case started(RequestID, method: String, url: String, headers: HTTPHeaders)
        /// An attempt failed and will be retried.
        case retrying(RequestID, attempt: Int, delay: Duration, reason: String)
        /// A redirect is being followed.
        case redirected(RequestID, status: Int, to: String)
        /// A response ended the request successfully.
        case finished(RequestID, status: Int, headers: HTTPHeaders, metrics: RequestMetrics)
        /// The request failed.
        case failed(RequestID, error: String, metrics: RequestMetrics)
        /// The request was cancelled.
        case cancelled(RequestID)
        /// The request failed and nobody was there to hear it: it was started with closures but
        /// no error closure (or completion), and the connection had no delegate. Reported after
        /// ``failed(_:error:metrics:)``, so that no failure vanishes; see
        /// ``HTTPConnection/unhandledFailureLog`` for connections without a monitor.
        case unhandledFailure(RequestID, error: String)

        /// One log line, credentials redacted.
        public var description: String {
            switch self {
            case .started(let id, let method, let url, let headers):
                let fields = headers.fields.map { "\($0.name): \($0.value)" }.joined(separator: "; ")
                return "\(id) → \(method) \(url)" + (fields.isEmpty ? "" : " [\(fields)]")
            case .retrying(let id, let attempt, let delay, let reason):
                return "\(id) ↻ attempt \(attempt) in \(delay): \(reason)"
            case .redirected(let id, let status, let to):
                return "\(id) ↪ \(status) to \(to)"
            case .finished(let id, let status, _, let metrics):
                return "\(id) ← \(status) (\(metrics))"
            case .failed(let id, let error, let metrics):
                return "\(id) ✗ \(error) (\(metrics))"
            case .cancelled(let id):
                return "\(id) cancelled"
            case .unhandledFailure(let id, let error):
                return "\(id) failed with no error closure and no delegate: \(error)"
            }
        }
    }
}

/// Removes credentials from what is logged.
enum Redaction {
    /// The headers with every credential value (``HTTPHeaders/isSensitive(_:)``) replaced by `<redacted>`.
    static func headers(_ headers: HTTPHeaders) -> HTTPHeaders {
        redacting(headers) { HTTPHeaders.isSensitive($0) }
    }

    /// The request's headers with the value of every field that carries a credential in it
    /// (``TransportRequest/isCredential(_:)``) replaced by `<redacted>`.
    static func headers(of request: TransportRequest) -> HTTPHeaders {
        redacting(request.headers) { request.isCredential($0) }
    }

    private static func redacting(_ headers: HTTPHeaders, where isSecret: (String) -> Bool) -> HTTPHeaders {
        HTTPHeaders(headers.fields.map { field in
            HTTPHeaders.Field(name: field.name, value: isSecret(field.name) ? "<redacted>" : field.value)
        })
    }

    /// The URL with its password and secret-looking query values replaced by `<redacted>`.
    static func url(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "<unparseable URL>" }
        if components.password != nil { components.password = "redacted" }
        if let items = components.queryItems {
            components.queryItems = items.map { item in
                let name = item.name.lowercased()
                let secret = HTTPHeaders.secretWords.contains { name.contains($0) }
                return secret ? URLQueryItem(name: item.name, value: "redacted") : item
            }
        }
        return components.string ?? "<unparseable URL>"
    }
}

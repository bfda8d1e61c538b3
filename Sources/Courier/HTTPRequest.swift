import Foundation

/// A description of one HTTP request: method, target, query, headers, body and per-request settings.
///
/// `HTTPRequest` is a value: build it, copy it, change the copy. The target is either a path
/// resolved against the connection's `baseURL` (`"/rooms"`, `"rooms/1"`) or an absolute URL
/// (`"https://example.com/rooms"`). Settings left `nil` fall back to the connection's, then to
/// the global defaults on ``HTTPConnection``.
///
/// ```swift
/// var request = HTTPRequest(.post, "/rooms", body: .form(["room[name]": "Lobby"]))
/// request.timeout = .seconds(5)
/// ```
public struct HTTPRequest: Sendable {
    /// The method: GET, POST, or any other token.
    public var method: Method
    /// A path relative to the connection's base URL, or an absolute URL.
    public var target: String
    /// Query items appended to the URL in order, percent-encoded.
    public var query: [QueryItem]
    /// Header fields sent with the request, after the connection's default headers.
    public var headers: HTTPHeaders
    /// The body; `.none` by default.
    public var body: Body

    /// The timeout for each attempt (the longest silence allowed while connecting or waiting
    /// for bytes); `nil` uses the connection's, then ``HTTPConnection/defaultTimeout``.
    public var timeout: Duration?
    /// The cache policy; `nil` uses the connection's, then ``HTTPConnection/defaultCachePolicy``.
    public var cachePolicy: CachePolicy?
    /// Whether the request keeps itself alive; `nil` means ``Lifetime/managed``.
    public var lifetime: Lifetime?
    /// The automatic retry policy; `nil` uses the connection's, then ``HTTPConnection/defaultRetryPolicy``.
    public var retryPolicy: RetryPolicy?
    /// The largest response body accepted, in bytes; `nil` uses the connection's limit.
    public var maxResponseBodySize: Int?
    /// How redirects are followed; `nil` uses the connection's ``HTTPConnection/redirectPolicy``.
    public var redirectPolicy: RedirectPolicy?
    /// The longest the whole request may take, from its start to its end: authentication waits,
    /// every attempt, backoff and redirects included. On top of the per-attempt ``timeout``.
    /// When it passes, the request fails with ``HTTPConnectionError/deadlineExceeded``.
    /// `nil` uses the connection's ``HTTPConnection/deadline``.
    public var deadline: Duration?
    /// Called on the connection's callback queue as a body that is not in memory (a stream, a
    /// file, a multipart form) goes out: the body bytes sent so far and the total, if known. At
    /// most once per 1% of the total or per 100 ms, whichever comes first, and always the last
    /// report (the one that reaches the total, or for a body of unknown length the last one,
    /// delivered before the request's terminal callback); `nil` by default.
    public var onUploadProgress: (@Sendable (_ bytesSent: Int64, _ expectedTotal: Int64?) -> Void)?

    /// Creates a request.
    /// - Parameters:
    ///   - method: the HTTP method; GET by default.
    ///   - target: a path relative to the base URL, or an absolute URL.
    ///   - query: query items, in order; none by default.
    ///   - headers: header fields; none by default.
    ///   - body: the body; `.none` by default.
    public init(
        _ method: Method = .get,
        _ target: String,
        query: [QueryItem] = [],
        headers: HTTPHeaders = [:],
        body: Body = .none
    ) {
        self.method = method
        self.target = target
        self.query = query
        self.headers = headers
        self.body = body
    }
}

extension HTTPRequest {
    /// Whether a request keeps itself alive until it ends.
    public enum Lifetime: Sendable, Equatable {
        /// The request keeps itself, and its connection, alive until its terminal callback,
        /// even when nothing else references the connection (fire-and-forget).
        case managed
        /// The request lives only as long as its ``HTTPConnection``: when the connection is
        /// released, the request is cancelled and delivers no callback at all. This applies to
        /// the closure style; an `async` caller holds the connection while it awaits (it is
        /// calling a method on it), so cancel its Swift task instead.
        case unmanaged
    }

    /// One query item: a name and an optional value (`?flag` has no value).
    public struct QueryItem: Sendable, Equatable, ExpressibleByStringLiteral {
        /// The name, unencoded.
        public var name: String
        /// The value, unencoded; `nil` for a bare name.
        public var value: String?

        /// Creates a query item.
        public init(_ name: String, _ value: String?) {
            self.name = name
            self.value = value
        }

        /// Creates a query item with a name and no value.
        public init(stringLiteral name: String) {
            self.init(name, nil)
        }
    }
}

extension Array where Element == HTTPRequest.QueryItem {
    /// Builds ordered query items from a literal such as `["since": "42", "q": "a b"]`.
    public static func from(_ pairs: KeyValuePairs<String, String>) -> Self {
        pairs.map { HTTPRequest.QueryItem($0.key, $0.value) }
    }
}

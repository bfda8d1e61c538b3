import Foundation

/// One exchange a ``HARRecorder`` keeps: a request as it was sent (one attempt, one hop) and its
/// response or failure, with credentials already redacted and bodies already cut to the
/// recorder's limit. It becomes one HAR 1.2 `entries[]` member.
struct HARExchange: Sendable {
    var started: Date
    var method: String
    /// The redacted URL.
    var url: String
    var requestHeaders: HTTPHeaders
    /// The names of the cookies the request's `Cookie` field carried (their values are credentials).
    var requestCookieNames: [String]
    var requestBody: Data
    var requestBodySize: Int
    var requestContentType: String?
    /// The status; 0 when the attempt failed without a response.
    var status: Int
    /// The reason phrase, or the failure's description.
    var statusText: String
    var responseHeaders: HTTPHeaders
    /// The `Set-Cookie` fields, parsed, for `response.cookies`.
    var responseCookies: [SetCookie]
    var responseBody: Data
    var responseBodySize: Int
    var responseContentType: String?
    /// The redirect target named by `Location`, or empty.
    var redirectURL: String
    var timings: Timings

    /// HAR's phases in milliseconds; -1 for a phase that did not happen or was not measured.
    struct Timings: Sendable {
        var blocked = -1.0
        var dns = -1.0
        var connect = -1.0
        var ssl = -1.0
        var send = 0.0
        var wait = 0.0
        var receive = 0.0

        /// The whole exchange: the sum of the phases that happened (`ssl` is inside `connect`).
        var total: Double {
            [blocked, dns, connect, send, wait, receive].filter { $0 > 0 }.reduce(0, +)
        }

        /// The phases from the transport's metrics, fitted into `elapsed`, the time the stage saw.
        init(_ metrics: RequestMetrics?, elapsed: Duration) {
            let all = elapsed.milliseconds
            guard let metrics else {
                wait = all
                return
            }
            dns = metrics.dnsLookup?.milliseconds ?? -1
            connect = metrics.connect.map { $0.milliseconds + (metrics.tlsHandshake?.milliseconds ?? 0) } ?? -1
            ssl = metrics.tlsHandshake?.milliseconds ?? -1
            if let queued = metrics.queued?.milliseconds {
                blocked = max(0, queued - max(dns, 0) - max(connect, 0))
            }
            send = metrics.requestSent?.milliseconds ?? 0
            wait = metrics.firstByte?.milliseconds ?? 0
            receive = max(0, all - total)
        }

        init() {}
    }

    /// The `entries[]` member.
    func json(maximumBodySize: Int) -> [String: Any] {
        let queryString: [[String: Any]] = URLComponents(string: url)?.queryItems?.map {
            ["name": $0.name, "value": $0.value ?? ""]
        } ?? []
        var request: [String: Any] = [
            "method": method, "url": url, "httpVersion": "HTTP/1.1",
            "headers": Self.json(requestHeaders), "queryString": queryString,
            "cookies": requestCookieNames.map { ["name": $0, "value": "<redacted>"] },
            "headersSize": -1, "bodySize": requestBodySize,
        ]
        if requestBodySize > 0 {
            var postData: [String: Any] = ["mimeType": requestContentType ?? "",
                                           "text": Self.text(requestBody) ?? requestBody.base64EncodedString()]
            if requestBody.count < requestBodySize { postData["comment"] = "cut to the first \(requestBody.count) bytes" }
            request["postData"] = postData
        }
        var content: [String: Any] = ["size": responseBodySize, "mimeType": responseContentType ?? ""]
        if !responseBody.isEmpty {
            if let text = Self.text(responseBody) {
                content["text"] = text
            } else {
                content["text"] = responseBody.base64EncodedString()
                content["encoding"] = "base64"
            }
            if responseBody.count < responseBodySize { content["comment"] = "cut to the first \(responseBody.count) bytes" }
        }
        let response: [String: Any] = [
            "status": status, "statusText": statusText, "httpVersion": status == 0 ? "" : "HTTP/1.1",
            "headers": Self.json(responseHeaders), "cookies": responseCookies.map(Self.json),
            "content": content, "redirectURL": redirectURL, "headersSize": -1, "bodySize": responseBodySize,
        ]
        let timingsJSON: [String: Any] = [
            "blocked": timings.blocked, "dns": timings.dns, "connect": timings.connect, "ssl": timings.ssl,
            "send": timings.send, "wait": timings.wait, "receive": timings.receive,
        ]
        return [
            "startedDateTime": Self.iso8601(started), "time": timings.total,
            "request": request, "response": response, "cache": [String: Any](), "timings": timingsJSON,
        ]
    }

    private static func json(_ headers: HTTPHeaders) -> [[String: Any]] {
        headers.map { ["name": $0.name, "value": $0.value] }
    }

    private static func json(_ cookie: SetCookie) -> [String: Any] {
        var result: [String: Any] = ["name": cookie.name, "value": "<redacted>", "httpOnly": cookie.isHTTPOnly,
                                     "secure": cookie.isSecure]
        if let path = cookie.path { result["path"] = path }
        if let domain = cookie.domain { result["domain"] = domain }
        if let expires = cookie.expires { result["expires"] = iso8601(expires) }
        return result
    }

    /// The body as text when it is UTF-8 without control characters other than tab and line
    /// ends; `nil` for anything else, which goes in base64.
    private static func text(_ data: Data) -> String? {
        guard !data.contains(where: { ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D) || $0 == 0x7F }) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// ISO 8601 with milliseconds, in UTC, as HAR wants.
    static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

extension Duration {
    /// The duration in milliseconds.
    var milliseconds: Double { timeInterval * 1_000 }
}

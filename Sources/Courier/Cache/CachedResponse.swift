import Foundation

/// A stored response with what RFC 9111 needs to judge it: when it was requested and received,
/// and the request header values it varies on.
struct CachedResponse: Sendable, Codable {
    var status: Int
    var reason: String
    var headers: [[String]]
    var body: Data
    var url: URL
    /// The request header values named by `Vary`, lower-cased names.
    var varyValues: [String: String]
    /// When the request was sent (RFC 9111 `request_time`).
    var requestTime: Date
    /// When the response arrived (`response_time`).
    var responseTime: Date

    init(_ response: HTTPResponse, request: TransportRequest, requestTime: Date, responseTime: Date) {
        status = response.status.code
        reason = response.status.reason
        headers = response.headers.fields.filter { !Self.neverStored($0.name) }.map { [$0.name, $0.value] }
        body = response.body
        url = response.url
        varyValues = Self.varyValues(of: request.headers, names: Self.varyNames(HTTPHeaders(headers.map { ($0[0], $0[1]) })))
        self.requestTime = requestTime
        self.responseTime = responseTime
    }

    var httpHeaders: HTTPHeaders { HTTPHeaders(headers.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }) }

    var cacheControl: CacheControl { CacheControl(httpHeaders) }

    var byteCount: Int { body.count + headers.reduce(0) { $0 + $1.reduce(0) { $0 + $1.utf8.count } } + 256 }

    /// The response as delivered from the cache.
    func response(source: HTTPResponse.Source) -> HTTPResponse {
        var response = HTTPResponse(status: .init(code: status, reason: reason), headers: httpHeaders, body: body, url: url)
        response.source = source
        return response
    }

    // MARK: - Freshness (RFC 9111 §4.2)

    /// How long the response is fresh for: in a shared cache `s-maxage` first, then `max-age`,
    /// else `Expires − Date`, else a heuristic of 10% of `Date − Last-Modified` (at most a day) for
    /// the statuses that allow one.
    func freshnessLifetime(sharedCache: Bool) -> TimeInterval {
        let headers = httpHeaders
        let control = CacheControl(headers)
        if sharedCache, let sharedMaxAge = control.sharedMaxAge { return TimeInterval(sharedMaxAge) }
        if let maxAge = control.maxAge { return TimeInterval(maxAge) }
        if let expiresText = headers["Expires"] {
            guard let expires = HTTPDate.parse(expiresText) else { return 0 }  // an invalid Expires means already expired
            return expires.timeIntervalSince(dateValue)
        }
        guard Self.heuristicallyCacheable.contains(status),
              let modified = headers["Last-Modified"].flatMap(HTTPDate.parse) else { return 0 }
        return min(86_400, max(0, dateValue.timeIntervalSince(modified)) / 10)
    }

    /// The response's current age at `now`.
    func currentAge(now: Date) -> TimeInterval {
        let ageValue = httpHeaders["Age"].flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        let apparentAge = max(0, responseTime.timeIntervalSince(dateValue))
        let responseDelay = responseTime.timeIntervalSince(requestTime)
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        return correctedInitialAge + now.timeIntervalSince(responseTime)
    }

    func isFresh(now: Date, sharedCache: Bool) -> Bool {
        freshnessLifetime(sharedCache: sharedCache) > currentAge(now: now)
    }

    private var dateValue: Date {
        httpHeaders["Date"].flatMap(HTTPDate.parse) ?? responseTime
    }

    // MARK: - Validators and Vary

    var entityTag: String? { httpHeaders["ETag"] }
    var lastModified: String? { httpHeaders["Last-Modified"] }
    var hasValidator: Bool { entityTag != nil || lastModified != nil }

    /// Whether the stored variant answers a request with these headers (RFC 9111 §4.1).
    func matchesVary(of request: HTTPHeaders) -> Bool {
        let names = Self.varyNames(httpHeaders)
        if names.contains("*") { return false }
        return Self.varyValues(of: request, names: names) == varyValues
    }

    /// Takes the headers of a 304 into the stored response (RFC 9111 §4.3.4).
    mutating func update(with notModified: HTTPResponse, requestTime: Date, responseTime: Date) {
        var merged = httpHeaders
        let updates = notModified.headers.filter {
            !["content-length", "content-encoding", "transfer-encoding"].contains($0.name.lowercased()) && !Self.neverStored($0.name)
        }
        for field in updates { merged.remove(field.name) }
        for field in updates { merged.add(field.value, for: field.name) }
        headers = merged.fields.map { [$0.name, $0.value] }
        self.requestTime = requestTime
        self.responseTime = responseTime
    }

    /// Fields a cache never keeps: cookies set for one client must never be replayed to another,
    /// nor to the same client after it has dropped them.
    static func neverStored(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower == "set-cookie" || lower == "set-cookie2"
    }

    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    static func varyNames(_ headers: HTTPHeaders) -> [String] {
        headers.values(for: "Vary").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
            .sorted()
    }

    static func varyValues(of request: HTTPHeaders, names: [String]) -> [String: String] {
        Dictionary(names.filter { $0 != "*" }.map { ($0, request.values(for: $0).joined(separator: ",")) },
                   uniquingKeysWith: { first, _ in first })
    }
}

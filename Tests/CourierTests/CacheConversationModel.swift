@testable import Courier
import Foundation

/// `Cache-Control` directives as a cache conversation picks them for a response.
struct PickedDirectives: Equatable {
    var maxAge: Int?
    var sharedMaxAge: Int?
    var isPrivate = false
    var isPublic = false
    var noStore = false
    var noCache = false
    var mustRevalidate = false

    /// The field value, or `nil` for no directive at all.
    var text: String? {
        var parts: [String] = []
        if let maxAge { parts.append("max-age=\(maxAge)") }
        if let sharedMaxAge { parts.append("s-maxage=\(sharedMaxAge)") }
        if isPrivate { parts.append("private") }
        if isPublic { parts.append("public") }
        if noStore { parts.append("no-store") }
        if noCache { parts.append("no-cache") }
        if mustRevalidate { parts.append("must-revalidate") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// The names of the directives in a `Cache-Control` value (the model's own reading).
    static func names(_ value: String?) -> Set<String> {
        Set((value ?? "").split(separator: ",").map { $0.split(separator: "=")[0].trimmingCharacters(in: .whitespaces).lowercased() })
    }

    /// Whether they let a cache keep the response to a request with credentials, as ``HTTPCache``
    /// documents: `public`, `must-revalidate`, and in a shared cache `s-maxage`.
    func allowCredentialed(shared: Bool) -> Bool {
        isPublic || mustRevalidate || (shared && sharedMaxAge != nil)
    }
}

/// A response's caching fields as a conversation picks them; times are relative to its `Date`.
struct PickedResponse {
    enum Expires: Equatable {
        /// `Expires` this many seconds after `Date`.
        case after(Int)
        /// `Expires: 0`, which is not a date: already expired.
        case invalid
    }

    var status = 200
    var control = PickedDirectives()
    var expires: Expires?
    /// `Last-Modified` this many seconds before `Date`.
    var lastModifiedAgo: Int?
    var etag: String?
    /// The names `Vary` lists, as sent.
    var vary: [String] = []
    var setCookie: String?
    /// `Age`, sent only on answers without validators (see ``ModelEntry/age(now:)``).
    var age: Int?

    /// The statuses a cache may keep (RFC 9110 §15.1's heuristically cacheable ones, `206` aside).
    static let storableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The header fields, for a response dated `date`.
    func headers(date: Date) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if let text = control.text { headers.add(text, for: "Cache-Control") }
        switch expires {
        case .after(let seconds): headers.add(HTTPDate.format(date + TimeInterval(seconds)), for: "Expires")
        case .invalid: headers.add("0", for: "Expires")
        case nil: break
        }
        if let lastModifiedAgo { headers.add(HTTPDate.format(date - TimeInterval(lastModifiedAgo)), for: "Last-Modified") }
        if let etag { headers.add(etag, for: "ETag") }
        if !vary.isEmpty { headers.add(vary.joined(separator: ", "), for: "Vary") }
        if let setCookie { headers.add(setCookie, for: "Set-Cookie") }
        if let age { headers.add("\(age)", for: "Age") }
        return headers
    }
}

/// One request as a conversation picks it.
struct PickedRequest {
    /// Which of the conversation's connections sends it: 0 has no default headers, 1 sends
    /// `X-Tenant: blue` with every request (a default header: it partitions the cache).
    var connection = 0
    /// An index in ``CacheConversation/paths``.
    var path = 0
    var method = HTTPRequest.Method.get
    /// The request's own fields: credentials, fields `Vary` may name, `Cache-Control`.
    var fields: [(name: String, value: String)] = []
    var policy: CachePolicy?

    static let tenant = (name: "X-Tenant", value: "blue")
    /// The names of the fields the cache must take for credentials.
    static let credentialNames: Set<String> = ["authorization", "cookie", "x-api-key"]

    /// Every field the cache sees, the connection's default header included.
    var allFields: [(name: String, value: String)] { connection == 1 ? fields + [Self.tenant] : fields }

    /// The value of a field (case-insensitive), all values joined with commas; `""` when absent.
    func value(_ name: String) -> String {
        allFields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value).joined(separator: ",")
    }

    /// Whom the request speaks for: its credentials and default headers, sorted.
    var identity: [String] {
        allFields.filter { Self.credentialNames.contains($0.name.lowercased()) || $0.name == Self.tenant.name }
            .map { $0.name.lowercased() + ":" + $0.value }.sorted()
    }

    var carriesCredential: Bool { allFields.contains { Self.credentialNames.contains($0.name.lowercased()) } }
    var isUnsafe: Bool { [.post, .put, .patch, .delete].contains(method) }
    var noStore: Bool { value("Cache-Control") == "no-store" }
    /// `no-cache` or `max-age=0`: the request wants no stored answer without revalidation.
    var wantsValidation: Bool { ["no-cache", "max-age=0"].contains(value("Cache-Control")) }
    var effectivePolicy: CachePolicy { policy ?? .useProtocolCachePolicy }

    /// The values of the named fields, as the cache keeps them for `Vary`.
    func varyValues(_ names: [String]) -> [String: String] {
        Dictionary(names.map { $0.lowercased() }.filter { $0 != "*" }.map { ($0, value($0)) }, uniquingKeysWith: { a, _ in a })
    }
}

/// Where the model keeps a request's entries: its URL and whom it speaks for.
struct ModelKey: Hashable {
    var path: Int
    var identity: [String]
    var carriesCredential: Bool
}

/// A stored response as the model expects the cache to hold it.
struct ModelEntry {
    let tag: String
    let response: PickedResponse
    let body: Data
    let varyValues: [String: String]
    /// The directives now: a `304` may bring new ones.
    var control: PickedDirectives
    /// The `Date` of the response, which is also when it arrived; a `304` moves both.
    var date: Date
    let expiresAt: Date?
    let lastModified: Date?

    init(tag: String, response: PickedResponse, body: Data, request: PickedRequest, date: Date) {
        self.tag = tag
        self.response = response
        self.body = body
        varyValues = request.varyValues(response.vary)
        control = response.control
        self.date = date
        if case .after(let seconds) = response.expires { expiresAt = date + TimeInterval(seconds) } else { expiresAt = nil }
        lastModified = response.lastModifiedAgo.map { date - TimeInterval($0) }
    }

    var lastModifiedText: String? { lastModified.map(HTTPDate.format) }
    var hasValidator: Bool { response.etag != nil || lastModified != nil }

    /// The freshness lifetime as ``HTTPCache`` documents it: `s-maxage` (shared), `max-age`,
    /// `Expires − Date` (an invalid `Expires`: 0), or 10% of `Date − Last-Modified`, at most a day.
    func lifetime(shared: Bool) -> TimeInterval {
        if shared, let sharedMaxAge = control.sharedMaxAge { return TimeInterval(sharedMaxAge) }
        if let maxAge = control.maxAge { return TimeInterval(maxAge) }
        if response.expires == .invalid { return 0 }
        if let expiresAt { return expiresAt.timeIntervalSince(date) }
        guard PickedResponse.storableStatuses.contains(response.status), let lastModified else { return 0 }
        return min(86_400, max(0, date.timeIntervalSince(lastModified)) / 10)
    }

    /// The age (RFC 9111 §4.2.3) where `Date` is when the response arrived and the exchange takes
    /// no time: its `Age` plus the time since. (`Age` comes only on answers without validators,
    /// which are never revalidated: whether a `304` resets it is a question the model avoids.)
    func age(now: Date) -> TimeInterval {
        TimeInterval(response.age ?? 0) + now.timeIntervalSince(date)
    }

    /// Fresh while the lifetime exceeds the age.
    func isFresh(now: Date, shared: Bool) -> Bool {
        lifetime(shared: shared) > age(now: now)
    }

    func matches(_ request: PickedRequest) -> Bool {
        !response.vary.contains("*") && request.varyValues(response.vary) == varyValues
    }
}

import Foundation

/// One file of the built-in web app, held in memory: its path, media type, bytes and entity tag.
///
/// ``response(to:)`` answers a `GET` for it: 200 with the bytes, or 304 with no body when the
/// request's `If-None-Match` names the asset's ``etag``. Both carry `ETag`,
/// `Cache-Control: no-cache` (a browser keeps the file but asks again before each use, so a new
/// server binary is picked up at once); ``ChatCaveAPI`` adds ``WebApp/securityHeaders``.
struct WebAsset: Sendable {
    /// The path it is served at, e.g. `/app.js`.
    let path: String
    /// The `Content-Type` value, e.g. `text/javascript; charset=utf-8`.
    let contentType: String
    /// The bytes.
    let body: [UInt8]
    /// A strong entity tag derived from the bytes (quoted, as sent in `ETag`).
    let etag: String
    /// Extra fields sent with it, e.g. `Vary: Accept` for the page at `/`.
    let extraHeaders: [(name: String, value: String)]

    /// Creates an asset from its text; the entity tag is a 64-bit FNV-1a hash of the UTF-8 bytes.
    init(path: String, contentType: String, text: String, extraHeaders: [(name: String, value: String)] = []) {
        self.path = path
        self.contentType = contentType
        self.body = Array(text.utf8)
        self.extraHeaders = extraHeaders
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        etag = "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// The answer to a request for this asset: 304 when `If-None-Match` matches, else 200.
    func response(to request: APIRequest) -> APIResponse {
        var headers = [(name: "ETag", value: etag), (name: "Cache-Control", value: "no-cache")] + extraHeaders
        if let condition = request.header("If-None-Match"), Self.matches(condition, etag: etag) {
            return APIResponse(status: 304, headers: headers, body: [])
        }
        headers.insert((name: "Content-Type", value: contentType), at: 0)
        return APIResponse(status: 200, headers: headers, body: body)
    }

    /// Whether an `If-None-Match` value names `etag`: `*`, or a comma-separated list of tags
    /// compared weakly (a `W/` prefix is ignored), as RFC 9110 §13.1.2 asks.
    static func matches(_ condition: String, etag: String) -> Bool {
        let trimmed = condition.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" { return true }
        return trimmed.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }
}

import CourierTLS
import Foundation

/// Where a request's responses are kept in an ``HTTPCache``: the URL without its fragment, and a
/// partition for the credentials the request carries.
///
/// Requests without credentials share the URL's anonymous partition. A request that carries any
/// credential (``TransportRequest/isCredential(_:)``: `Authorization`, `Cookie`, API-key headers,
/// anything an authenticator applied) gets a partition named by the HMAC-SHA256 of those fields
/// under the cache's own random key, so a response stored for one credential can never answer a
/// request with another credential, or with none, and the credential itself is never kept.
struct CacheKey: Hashable, Sendable {
    /// The URL without its fragment.
    let url: String
    /// The hex HMAC of the request's credential fields; `nil` for a request without credentials.
    let partition: String?

    /// The key of a request, partitioned under `secret`.
    init(_ request: TransportRequest, secret: [UInt8]) {
        url = Self.urlKey(request.url)
        let credentials = request.headers.fields
            .filter { request.isCredential($0.name) }
            .map { $0.name.lowercased() + ":" + $0.value }
            .sorted()
        partition = credentials.isEmpty
            ? nil
            : Self.hex(Digest.hmacSHA256(key: secret, Array(credentials.joined(separator: "\n").utf8)))
    }

    /// The anonymous key of a URL.
    init(url: URL) {
        self.url = Self.urlKey(url)
        partition = nil
    }

    /// The key as the stores index it: the URL, then a NUL and the partition when there is one.
    var storageKey: String { partition.map { url + "\u{0}" + $0 } ?? url }

    /// Whether `storageKey` belongs to this URL, in any partition.
    static func storageKey(_ key: String, isFor url: String) -> Bool {
        key == url || key.hasPrefix(url + "\u{0}")
    }

    private static func urlKey(_ url: URL) -> String {
        let text = url.absoluteString
        return text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}

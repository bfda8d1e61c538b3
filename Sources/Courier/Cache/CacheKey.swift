import CourierTLS
import Foundation

/// Where a request's responses are kept in an ``HTTPCache``: the URL without its fragment, and a
/// partition for the credentials and default headers the request carries.
///
/// - A request that carries a credential (``TransportRequest/carriesCredentials``: `Authorization`,
///   `Cookie`, API-key headers, anything an authenticator applied) gets a partition named by the
///   HMAC-SHA256 of those fields under the cache's own random key: a response stored for one
///   credential never answers a request with another credential, or with none, and the credential
///   itself is never kept. Such entries stay in memory.
/// - The connection's other default headers (which Courier treats as possible credentials,
///   ``TransportRequest/isCredential(_:)``) partition by their SHA-256, which stays the same across
///   runs, so those entries may go to disk.
/// - Requests with neither share the URL's anonymous partition.
struct CacheKey: Hashable, Sendable {
    /// The URL without its fragment.
    let url: String
    /// The hex HMAC of the request's credential fields; `nil` when it carries none.
    let credentialPartition: String?
    /// The hex SHA-256 of the request's other default-header fields; `nil` when there are none.
    let defaultsPartition: String?

    /// The key of a request, with credentials partitioned under `secret`.
    init(_ request: TransportRequest, secret: [UInt8]) {
        url = Self.urlKey(request.url)
        var credentials: [String] = []
        var defaults: [String] = []
        for field in request.headers where request.isCredential(field.name) {
            let line = field.name.lowercased() + ":" + field.value
            if request.isCertainCredential(field.name) { credentials.append(line) } else { defaults.append(line) }
        }
        credentialPartition = credentials.isEmpty
            ? nil : Digest.hex(Digest.hmacSHA256(key: secret, Array(credentials.sorted().joined(separator: "\n").utf8)))
        defaultsPartition = defaults.isEmpty ? nil : Digest.hex(Digest.sha256(Array(defaults.sorted().joined(separator: "\n").utf8)))
    }

    /// The anonymous key of a URL.
    init(url: URL) {
        self.url = Self.urlKey(url)
        credentialPartition = nil
        defaultsPartition = nil
    }

    /// Whether entries under this key may be written to disk: no credential partition.
    var isPersistable: Bool { credentialPartition == nil }

    /// The key as the stores index it: the URL, then, when partitioned, a NUL and the partitions.
    var storageKey: String {
        guard credentialPartition != nil || defaultsPartition != nil else { return url }
        return url + "\u{0}" + (credentialPartition ?? "") + "/" + (defaultsPartition ?? "")
    }

    /// Whether `storageKey` belongs to this URL, in any partition.
    static func storageKey(_ key: String, isFor url: String) -> Bool {
        key == url || key.hasPrefix(url + "\u{0}")
    }

    private static func urlKey(_ url: URL) -> String {
        let text = url.absoluteString
        return text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
    }
}

import Foundation
import Synchronization

/// A private HTTP cache with RFC 9111 semantics, in memory and optionally on disk.
///
/// On Linux, URLSession never caches; Courier's cache is a stage of the request pipeline, so it
/// works the same on every transport. Which requests use it, and how, is the ``CachePolicy``
/// (global, per connection, per request).
///
/// What is stored: successful-enough GET responses (the statuses RFC 9111 lets a cache keep)
/// that carry freshness information (`max-age`, `Expires`, a heuristic from `Last-Modified`) or
/// a validator (`ETag`, `Last-Modified`), unless `no-store` says otherwise. A response to a
/// request with `Authorization` is stored only when `Cache-Control` allows it explicitly
/// (`public`, `must-revalidate`). `private` responses are stored: this is a private cache, and
/// `s-maxage` is ignored. One variant is kept per set of `Vary` values (at most 8 per URL);
/// `Vary: *` is never served. A successful POST, PUT, PATCH or DELETE drops the URL's entries.
///
/// ```swift
/// let cache = HTTPCache(memoryCapacity: 8 << 20, directory: cachesURL)
/// let connection = HTTPConnection(baseURL: url, configuration: .init(cache: cache))
/// ```
public final class HTTPCache: Sendable {
    /// Counts of what the cache did.
    public struct Statistics: Sendable, Equatable {
        /// Requests answered from the cache without the network.
        public var hits = 0
        /// Requests the cache could not answer.
        public var misses = 0
        /// Requests answered from the cache after the server confirmed the entry (304).
        public var revalidations = 0
        /// Responses stored.
        public var stores = 0
    }

    /// The cache connections use unless configured otherwise: in memory, 16 MiB.
    public static let shared = HTTPCache()

    private let memory: Mutex<MemoryCacheStore>
    private let disk: DiskCacheStore?
    private let counters = Mutex(Statistics())
    private let clock: @Sendable () -> Date

    /// Creates a cache.
    /// - Parameters:
    ///   - memoryCapacity: the most bytes kept in memory; 16 MiB by default.
    ///   - directory: where to keep responses on disk, surviving restarts; `nil` (memory only) by default.
    ///   - diskCapacity: the most bytes kept on disk; 128 MiB by default.
    ///   - now: the clock freshness is judged by; `Date()` by default (tests inject their own).
    public init(memoryCapacity: Int = 16 << 20, directory: URL? = nil, diskCapacity: Int = 128 << 20,
                now: @escaping @Sendable () -> Date = { Date() }) {
        memory = Mutex(MemoryCacheStore(capacity: memoryCapacity))
        disk = directory.map { DiskCacheStore(directory: $0, capacity: diskCapacity) }
        clock = now
    }

    /// What the cache has done so far.
    public var statistics: Statistics { counters.withLock { $0 } }

    /// The bytes held in memory.
    public var memoryBytes: Int { memory.withLock { $0.totalBytes } }

    /// Whether a response for this URL is stored (any variant, fresh or not).
    public func containsResponse(for url: URL) -> Bool {
        variants(for: Self.key(url)) != nil
    }

    /// Forgets every stored response, in memory and on disk.
    public func removeAll() {
        memory.withLock { $0.removeAll() }
        disk?.removeAll()
    }

    // MARK: - Used by the cache stage

    func now() -> Date { clock() }

    func lookup(_ request: TransportRequest) -> CachedResponse? {
        variants(for: Self.key(request.url))?.first { $0.matchesVary(of: request.headers) }
    }

    func store(_ entry: CachedResponse) {
        let key = Self.key(entry.url)
        var variants = (self.variants(for: key) ?? []).filter { $0.varyValues != entry.varyValues }
        variants.insert(entry, at: 0)
        variants = Array(variants.prefix(8))
        memory.withLock { $0.set(variants, for: key) }
        disk?.set(variants, for: key)
        count { $0.stores += 1 }
    }

    func invalidate(_ url: URL) {
        let key = Self.key(url)
        memory.withLock { $0.remove(key) }
        disk?.remove(key)
    }

    func count(_ change: (inout Statistics) -> Void) {
        counters.withLock { change(&$0) }
    }

    private func variants(for key: String) -> [CachedResponse]? {
        if let found = memory.withLock({ $0.variants(for: key) }) { return found }
        guard let found = disk?.variants(for: key) else { return nil }
        memory.withLock { $0.set(found, for: key) }
        return found
    }

    /// The URL without its fragment.
    static func key(_ url: URL) -> String {
        let text = url.absoluteString
        return text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
    }
}

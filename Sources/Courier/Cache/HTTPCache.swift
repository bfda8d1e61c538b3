import Foundation
import Synchronization

/// An HTTP cache with RFC 9111 semantics, in memory and optionally on disk.
///
/// On Linux, URLSession never caches; Courier's cache is a stage of the request pipeline, so it
/// works the same on every transport. Which requests use it, and how, is the ``CachePolicy``
/// (global, per connection, per request).
///
/// What is stored: successful-enough GET responses (the statuses RFC 9111 lets a cache keep)
/// that carry freshness information (`max-age`, `Expires`, a heuristic from `Last-Modified`) or
/// a validator (`ETag`, `Last-Modified`), unless `no-store` says otherwise. `Set-Cookie` is never
/// stored, so it is never replayed. One variant is kept per set of `Vary` values (at most 8 per
/// URL); `Vary: *` is never served. A successful POST, PUT, PATCH or DELETE drops the URL's entries.
///
/// Credentials never mix:
/// - A response to a request that carries a credential (`Authorization`, `Cookie`, an API-key
///   header, any field an ``Authenticator`` applied: ``TransportRequest/isCredential(_:)``) is
///   stored only when `Cache-Control` allows it explicitly (`public`, `must-revalidate`, and in a
///   shared cache `s-maxage`).
/// - Entries are partitioned by a keyed hash of the request's credentials, so a response stored
///   for one credential never answers a request with another credential, or with none.
/// - A ``Scope/shared`` cache follows RFC 9111's shared-cache rules on top: it never stores a
///   `private` response, and `s-maxage` sets its freshness.
/// - Only responses to requests without credentials, for URLs without a password or a
///   secret-looking query parameter, are written to disk.
///
/// These rules are judged again when a `304` updates a stored response with its fields: a
/// response the `304` made `no-store`, `private` (in a shared cache) or, for a request with
/// credentials, no longer explicitly cacheable answers that request and is then dropped.
///
/// Each connection has a private cache of its own by default
/// (``HTTPConnection/Configuration/cache``). Share one between connections that act for the
/// same user, or make it ``Scope/shared``:
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

    /// Whom a cache serves (RFC 9111 §1).
    public enum Scope: Sendable, Equatable {
        /// One user: `private` responses are stored, `s-maxage` is ignored.
        case `private`
        /// Several users, like a proxy's cache: `private` responses are never stored, and
        /// `s-maxage` overrides `max-age`.
        case shared
    }

    /// One cache in memory (16 MiB) for the whole process, with the ``Scope/shared`` rules; pass
    /// it in ``HTTPConnection/Configuration/cache`` to let connections share responses.
    public static let shared = HTTPCache(scope: .shared)

    /// Whom this cache serves.
    public let scope: Scope
    /// The largest streamed response body (``HTTPConnection/stream(_:)``, downloads excepted)
    /// the cache stores, gathered as it passes to its reader; a longer one is not stored.
    public let maxStreamedBodySize: Int

    private let memory: Mutex<MemoryCacheStore>
    private let disk: DiskCacheStore?
    /// Held across every change of what is stored: a store or removal (which reads the URL's
    /// variants, then writes them back changed), an invalidation, a wipe, and the copy of an entry
    /// found on disk into memory. Without it, a change could write back variants that another
    /// change dropped in between (a response to a `GET` stored while a `POST` invalidated its URL
    /// brought the other variants from before the `POST` back). A lookup that finds its entry in
    /// memory does not take it. It is held across the disk's reads and writes of one entry, and
    /// across the listing of file names of an invalidation or a wipe, not across a trim of the
    /// disk to its capacity (eviction may drop any entry at any time).
    private let changes = Mutex(())

    /// Whether responses are also kept on disk: a directory was given and passed its check.
    public var isPersistent: Bool { disk != nil }
    /// How many times the disk's directory was measured file by file (``DiskCacheUsage/scans``);
    /// `nil` without a disk.
    var diskScans: Int? { disk?.usage.scans }
    private let counters = Mutex(Statistics())
    private let clock: @Sendable () -> Date
    /// The key of the credential partitions' HMAC: random, never stored.
    private let partitionSecret: [UInt8] = (0..<32).map { _ in UInt8.random(in: .min ... .max) }

    /// Creates a cache.
    /// - Parameters:
    ///   - memoryCapacity: the most bytes kept in memory; 16 MiB by default.
    ///   - directory: where to keep responses on disk, surviving restarts; `nil` (memory only) by
    ///     default. It is created with mode 0700 when missing; a directory owned by another user, or
    ///     writable by group or others, is refused and the cache stays in memory only.
    ///   - diskCapacity: the most bytes kept on disk; 128 MiB by default.
    ///   - scope: whom the cache serves; ``Scope/private`` by default.
    ///   - now: the clock freshness is judged by; `Date()` by default (tests inject their own).
    ///   - maxStreamedBodySize: the largest streamed body stored; 1 MiB by default.
    public init(memoryCapacity: Int = 16 << 20, directory: URL? = nil, diskCapacity: Int = 128 << 20,
                scope: Scope = .private, now: @escaping @Sendable () -> Date = { Date() },
                maxStreamedBodySize: Int = 1 << 20) {
        self.scope = scope
        self.maxStreamedBodySize = max(0, maxStreamedBodySize)
        memory = Mutex(MemoryCacheStore(capacity: memoryCapacity))
        disk = directory.flatMap { DiskCacheStore(directory: $0, capacity: diskCapacity) }
        clock = now
    }

    /// What the cache has done so far.
    public var statistics: Statistics { counters.withLock { $0 } }

    /// The bytes held in memory.
    public var memoryBytes: Int { memory.withLock { $0.totalBytes } }

    /// Whether a response for this URL is stored (any variant and credential partition, fresh or not).
    public func containsResponse(for url: URL) -> Bool {
        let anonymous = CacheKey(url: url)
        if variants(for: anonymous) != nil { return true }
        return memory.withLock { $0.keys.contains { CacheKey.storageKey($0, isFor: anonymous.url) } }
    }

    /// Forgets every stored response, in memory and on disk.
    public func removeAll() {
        changes.withLock { _ in
            memory.withLock { $0.removeAll() }
            disk?.removeAll()
        }
    }

    // MARK: - Used by the cache stage

    func now() -> Date { clock() }

    /// The key of a request's entries: its URL and credential partition.
    func key(for request: TransportRequest) -> CacheKey {
        CacheKey(request, secret: partitionSecret)
    }

    func lookup(_ request: TransportRequest) -> CachedResponse? {
        variants(for: key(for: request))?.first { $0.matchesVary(of: request.headers) }
    }

    /// Stores a response to `request` (the stage has checked that it may be stored).
    func store(_ entry: CachedResponse, for request: TransportRequest) {
        let key = key(for: request)
        let persists = key.isPersistable && !Self.urlCarriesSecrets(request.url)
        changes.withLock { _ in
            var variants = (storedVariants(for: key) ?? []).filter { $0.varyValues != entry.varyValues }
            variants.insert(entry, at: 0)
            variants = Array(variants.prefix(8))
            memory.withLock { $0.set(variants, for: key.storageKey) }
            if persists { disk?.set(variants, for: key.storageKey) }
        }
        if persists { disk?.trim() }
        count { $0.stores += 1 }
    }

    /// Drops the variant with these `Vary` values from the request's partition, in memory and on
    /// disk: a `304` made the stored response one the rules forbid keeping.
    func remove(varyValues: [String: String], for request: TransportRequest) {
        let key = key(for: request)
        let persists = key.isPersistable && !Self.urlCarriesSecrets(request.url)
        changes.withLock { _ in
            let variants = (storedVariants(for: key) ?? []).filter { $0.varyValues != varyValues }
            memory.withLock { variants.isEmpty ? $0.remove(key.storageKey) : $0.set(variants, for: key.storageKey) }
            guard persists else { return }
            if variants.isEmpty { disk?.remove(key.storageKey) } else { disk?.set(variants, for: key.storageKey) }
        }
    }

    /// Drops every entry of the URL, in every credential partition.
    func invalidate(_ url: URL) {
        let anonymous = CacheKey(url: url)
        changes.withLock { _ in
            memory.withLock { store in
                for key in store.keys where CacheKey.storageKey(key, isFor: anonymous.url) { store.remove(key) }
            }
            disk?.removeAll(ofURL: anonymous.url)
        }
    }

    func count(_ change: (inout Statistics) -> Void) {
        counters.withLock { change(&$0) }
    }

    /// The variants stored under `key`: from memory, else from disk (copied into memory).
    private func variants(for key: CacheKey) -> [CachedResponse]? {
        if let found = memory.withLock({ $0.variants(for: key.storageKey) }) { return found }
        guard key.isPersistable, disk != nil else { return nil }
        return changes.withLock { _ in storedVariants(for: key) }
    }

    /// ``variants(for:)`` for a caller that holds `changes`, so that what it reads from disk and
    /// copies into memory cannot have been dropped in between.
    private func storedVariants(for key: CacheKey) -> [CachedResponse]? {
        if let found = memory.withLock({ $0.variants(for: key.storageKey) }) { return found }
        guard key.isPersistable, let found = disk?.variants(for: key.storageKey) else { return nil }
        memory.withLock { $0.set(found, for: key.storageKey) }
        return found
    }

    /// Whether the URL holds a secret that must not be written to disk: a user name or password,
    /// or a query parameter whose name looks like a credential.
    static func urlCarriesSecrets(_ url: URL) -> Bool {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return true }
        if components.user != nil || components.password != nil { return true }
        components.queryItems = components.queryItems  // the same re-encoding Redaction.url applies
        return Redaction.url(url) != (components.string ?? "")
    }
}

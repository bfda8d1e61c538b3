import Foundation
import Synchronization

/// The cookies of one or more connections (RFC 6265), opt-in.
///
/// A connection keeps no cookies unless its configuration names a jar
/// (``HTTPConnection/Configuration/cookieJar``); several connections may share one. The jar
/// then stores the `Set-Cookie` fields of every response, redirects included, and sends the
/// matching cookies in a `Cookie` field on every request and every hop of a redirect:
///
/// - by domain and path (RFC 6265 §5.1.3, §5.1.4); a cookie set without `Domain` goes back to
///   its host only, never to subdomains;
/// - `Secure` cookies only over https, and only an https response may set one;
/// - a `Domain` that is a public suffix (every top-level domain, and the few multi-label
///   suffixes listed in ``publicSuffixes``) is refused, unless it is the host itself;
/// - a request that carries its own `Cookie` field is sent with it, unchanged;
/// - at most ``Limits/perDomain`` cookies per domain and ``Limits/total`` in all, the least
///   recently used going first, so that no server grows the jar without bound.
///
/// The `Cookie` field is a credential: it is redacted in events, dropped on a redirect to
/// another origin (the jar adds there only the cookies that domain-match it), and the HTTP
/// cache partitions responses by it; the cache never stores `Set-Cookie`.
///
/// A jar lives in memory unless it is given a file: ``init(file:limits:now:)`` reads the
/// persistent cookies from it, and ``save()`` writes them back with mode 0600, atomically,
/// in a ``PrivateDirectory``. Session cookies (no `Expires` or `Max-Age`) are never saved.
public final class CookieJar: Sendable {
    /// How many cookies a jar keeps.
    public struct Limits: Sendable, Equatable {
        /// The most cookies for one domain; 50 by default.
        public var perDomain: Int
        /// The most cookies in all; 3000 by default (RFC 6265 §6.1 asks for at least 3000).
        public var total: Int

        /// Creates limits.
        public init(perDomain: Int = 50, total: Int = 3_000) {
            self.perDomain = max(1, perDomain)
            self.total = max(1, total)
        }
    }

    /// The file a jar is saved in: a name in a private directory.
    public struct File: Sendable, CustomStringConvertible {
        /// The directory, checked and created as ``PrivateDirectory`` does.
        public let directory: PrivateDirectory
        /// The file's name in it.
        public let name: String

        /// Names a file; nothing is read or written yet.
        public init(directory: PrivateDirectory, name: String = "cookies.json") {
            self.directory = directory
            self.name = name
        }

        /// The file's path.
        public var description: String { directory.url.appendingPathComponent(name).path }
    }

    /// The multi-label public suffixes the jar refuses as a cookie `Domain`, beside every
    /// single-label name.
    public static var publicSuffixes: Set<String> { CookieDomain.multiLabelPublicSuffixes }

    private let store: Mutex<CookieStore>
    private let now: @Sendable () -> Date
    /// The file the jar is saved in, if any.
    public let file: File?

    /// Creates an empty jar in memory.
    /// - Parameters:
    ///   - limits: how many cookies to keep; ``Limits/init(perDomain:total:)`` by default.
    ///   - now: the clock for expiry; the system clock by default.
    public init(limits: Limits = Limits(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = Mutex(CookieStore(limits: limits))
        self.now = now
        self.file = nil
    }

    /// Creates a jar saved in `file`, with the persistent cookies the file holds (none when it
    /// does not exist yet). Expired cookies are dropped, and limits applied, as it is read.
    /// - Throws: ``PrivateDirectory/Failure`` when the directory is refused or the file
    ///   unreadable, or a `DecodingError` when it is not a jar's file.
    public init(file: File, limits: Limits = Limits(), now: @escaping @Sendable () -> Date = { Date() }) throws {
        var store = CookieStore(limits: limits)
        if let data = try file.directory.contents(of: file.name) {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            let saved = try decoder.decode(SavedJar.self, from: data)
            store = CookieStore(limits: limits, cookies: saved.cookies.filter(\.isPersistent))
            store.evict(now: now())
        }
        self.store = Mutex(store)
        self.now = now
        self.file = file
    }

    /// Every cookie that has not expired.
    public var cookies: [Cookie] {
        let now = now()
        return store.withLock { $0.cookies.filter { !$0.isExpired(at: now) } }
    }

    /// The cookies a request to `url` would carry, in the order they are sent.
    public func cookies(for url: URL) -> [Cookie] {
        let now = now()
        return store.withLock { $0.cookies(for: url, now: now) }
    }

    /// The `Cookie` field value a request to `url` would carry, or `nil` when no cookie matches.
    public func cookieHeader(for url: URL) -> String? {
        let now = now()
        return store.withLock { $0.header(for: url, now: now) }
    }

    /// Stores the cookies of a response's `Set-Cookie` fields, one cookie per field, as RFC 6265
    /// §5.2 and §5.3 say (a comma in a field is part of the cookie's value or attributes); fields
    /// that must be ignored are. (``URLSessionTransport`` splits the fields URLSession joined.)
    /// - Parameters:
    ///   - headers: the response's header fields.
    ///   - url: the URL the response answered.
    /// - Returns: how many fields were applied (stored, replaced or deleted a cookie).
    @discardableResult
    public func store(from headers: HTTPHeaders, for url: URL) -> Int {
        let lines = headers.values(for: "Set-Cookie")
        guard !lines.isEmpty else { return 0 }
        let now = now()
        return store.withLock { store in
            lines.reduce(0) { count, line in store.receive(line, from: url, now: now) == nil ? count + 1 : count }
        }
    }

    /// Removes every cookie.
    public func removeAll() {
        store.withLock { $0.removeAll() }
    }

    /// Removes the cookies `shouldRemove` selects.
    public func removeAll(where shouldRemove: (Cookie) -> Bool) {
        store.withLock { $0.removeAll(where: shouldRemove) }
    }

    /// Writes the persistent cookies to ``file``, mode 0600, atomically. Does nothing for a jar
    /// without a file.
    /// - Throws: ``PrivateDirectory/Failure`` when the directory is refused or the file cannot be written.
    public func save() throws {
        guard let file else { return }
        let now = now()
        let persistent = store.withLock { $0.cookies.filter { $0.isPersistent && !$0.isExpired(at: now) } }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        try file.directory.write(try encoder.encode(SavedJar(cookies: persistent)), to: file.name)
    }

    /// Adds the jar's cookies for the request's URL, unless the request carries a `Cookie`
    /// field that did not come from the jar; a field the jar added for an earlier hop is
    /// replaced by the one for this hop.
    func attach(to request: inout TransportRequest) {
        let own = request.headers["Cookie"]
        guard own == nil || own == request.cookieJarField else { return }
        let value = cookieHeader(for: request.url)
        if let value { request.headers.set(value, for: "Cookie") } else { request.headers.remove("Cookie") }
        request.cookieJarField = value
    }

    /// What a jar's file holds.
    private struct SavedJar: Codable {
        var version = 1
        var cookies: [Cookie]
    }
}

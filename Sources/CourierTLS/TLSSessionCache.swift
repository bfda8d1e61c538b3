import COpenSSL
import Glibc
import Synchronization

/// The TLS sessions a ``TLSContext`` may resume: TLS 1.3 tickets and TLS 1.2 session ids,
/// per peer (`host:port`), shared by every connection made from the context and safe to use
/// from any thread.
///
/// One cache belongs to one context, and a context to one ``TLSConfiguration``, so a session
/// is never offered under different trust roots, pins or verification settings than the
/// handshake that produced it. The rules (bounds, expiry by the ticket lifetime, single use of
/// TLS 1.3 tickets) are those of ``TLSSessionStore``.
final class TLSSessionCache: Sendable {
    /// The most sessions kept in all.
    static let capacity = 256
    /// The most sessions kept for one peer: a TLS 1.3 server sends two tickets after a full
    /// handshake and one after a resumption, and each ticket is used once.
    static let perPeerCapacity = 4
    /// The longest a session is kept, whatever the server says (RFC 8446 §4.6.1 allows 7 days).
    static let maximumLifetimeSeconds: UInt64 = 7 * 24 * 3600

    private let store = Mutex(TLSSessionStore<CachedSession>(capacity: capacity, perPeerCapacity: perPeerCapacity))

    /// Creates an empty cache.
    init() {}

    /// Keeps a session the server issued, if OpenSSL says it can be resumed.
    /// - Parameters:
    ///   - session: an `SSL_SESSION` whose reference passes to the cache.
    ///   - peer: the peer it belongs to.
    func insert(owning session: OpaquePointer, for peer: String) {
        let cached = CachedSession(owning: session)
        guard SSL_SESSION_is_resumable(session) == 1 else { return }
        let lifetime = Self.lifetimeSeconds(of: session) * 1_000_000_000
        let reusable = SSL_SESSION_get_protocol_version(session) < TLS1_3_VERSION
        let now = Self.now()
        store.withLock { $0.insert(cached, for: peer, lifetime: lifetime, reusable: reusable, now: now) }
    }

    /// The session to offer to a peer, if one is usable.
    /// - Parameter peer: the peer about to be connected to.
    /// - Returns: the session; pass its ``CachedSession/pointer`` to `SSL_set_session`, which
    ///   takes a reference of its own.
    func take(for peer: String) -> CachedSession? {
        let now = Self.now()
        return store.withLock { $0.take(for: peer, now: now) }
    }

    /// Records whether a peer resumed the session a handshake offered; a peer that keeps
    /// refusing has nothing stored for a while (see ``TLSSessionStore``).
    /// - Parameters:
    ///   - resumed: whether the offered session was resumed.
    ///   - peer: the peer.
    func offerEnded(resumed: Bool, for peer: String) {
        let now = Self.now()
        store.withLock { $0.offerEnded(resumed: resumed, for: peer, now: now) }
    }

    /// Forgets every session of a peer.
    /// - Parameter peer: the peer.
    func removeAll(for peer: String) {
        store.withLock { $0.removeAll(for: peer) }
    }

    /// The number of sessions kept for a peer (expired ones included until noticed).
    /// - Parameter peer: the peer.
    func count(for peer: String) -> Int {
        store.withLock { $0.count(for: peer) }
    }

    /// How long a session may be resumed: the ticket's lifetime hint when the server sent one,
    /// never longer than the session's own timeout nor ``maximumLifetimeSeconds``.
    private static func lifetimeSeconds(of session: OpaquePointer) -> UInt64 {
        let timeout = UInt64(max(SSL_SESSION_get_timeout(session), 0))
        let hint = UInt64(SSL_SESSION_get_ticket_lifetime_hint(session))
        let lifetime = hint > 0 ? min(hint, timeout) : timeout
        return min(lifetime, maximumLifetimeSeconds)
    }

    /// The monotonic clock in nanoseconds.
    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

/// One reference to an `SSL_SESSION`, released when the object goes away.
final class CachedSession: Sendable {
    /// The session. `nonisolated(unsafe)` because raw pointers are not `Sendable`; sharing it
    /// is safe: OpenSSL never changes a session once it is cached (it replaces it with a
    /// duplicate instead) and counts its references atomically.
    nonisolated(unsafe) let pointer: OpaquePointer

    /// Takes over one reference to `pointer`.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        SSL_SESSION_free(pointer)
    }
}

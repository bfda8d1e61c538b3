/// The bookkeeping of a TLS session cache, without OpenSSL and without a clock: a value type
/// that takes events (a session arrived, a connection wants one, a peer failed verification)
/// and answers them, so that every rule is testable with made-up sessions and times.
///
/// Rules:
/// - Sessions are kept per peer (a string such as `host:port`), newest last, at most
///   ``perPeerCapacity`` per peer and ``capacity`` in all; past either bound the oldest goes.
/// - A session expires `lifetime` nanoseconds after it was stored (the server's ticket
///   lifetime); an expired session is never handed out. A lifetime of 0 is not stored.
/// - A single-use session (a TLS 1.3 ticket, RFC 8446 §C.4) leaves the store when it is taken;
///   a reusable one (a TLS 1.2 session id or ticket) stays until it expires or is replaced.
/// - ``removeAll(for:)`` forgets a peer (after its certificate failed a check).
/// - A peer that refused ``refusalLimit`` offered sessions in a row (a server that issues
///   tickets it cannot resume, such as one with its session cache off) has its sessions dropped
///   and none stored for ``refusalPause`` nanoseconds, so that its connections stop paying for an
///   offer that never resumes. A resumed session clears the count.
struct TLSSessionStore<Session> {
    /// A stored session and when it stops being usable.
    struct Entry {
        let session: Session
        /// The monotonic time in nanoseconds after which it is not handed out.
        let expiry: UInt64
        /// Whether handing it out keeps it (TLS 1.2) or removes it (TLS 1.3 tickets).
        let reusable: Bool
        /// The order of insertion across the whole store, for evicting the oldest.
        let serial: UInt64
    }

    /// The most sessions kept in all.
    let capacity: Int
    /// The most sessions kept for one peer.
    let perPeerCapacity: Int

    private var entries: [String: [Entry]] = [:]
    private var nextSerial: UInt64 = 0
    /// Per peer: offers refused in a row, and until when nothing is stored for it.
    private var refusals: [String: (count: Int, pausedUntil: UInt64)] = [:]

    /// Refused offers in a row after which a peer's sessions are no longer stored for a while.
    static var refusalLimit: Int { 2 }
    /// How long, in nanoseconds, nothing is stored for a peer that refused too many offers.
    static var refusalPause: UInt64 { 60 * 1_000_000_000 }

    /// The number of sessions stored (expired ones included until they are noticed).
    private(set) var count = 0

    /// Creates an empty store.
    /// - Parameters:
    ///   - capacity: the most sessions in all; values below 1 count as 1.
    ///   - perPeerCapacity: the most sessions per peer; values below 1 count as 1.
    init(capacity: Int, perPeerCapacity: Int) {
        self.capacity = max(capacity, 1)
        self.perPeerCapacity = max(perPeerCapacity, 1)
    }

    /// Stores a session the server issued.
    /// - Parameters:
    ///   - session: the session.
    ///   - peer: the peer it belongs to.
    ///   - lifetime: how long it may be used, in nanoseconds; 0 does not store it.
    ///   - reusable: whether it may be offered more than once.
    ///   - now: the current monotonic time in nanoseconds.
    mutating func insert(_ session: Session, for peer: String, lifetime: UInt64, reusable: Bool, now: UInt64) {
        guard lifetime > 0, !isPaused(peer, now: now) else { return }
        var list = entries[peer] ?? []
        let before = list.count
        list.removeAll { $0.expiry <= now }
        // A new reusable session replaces the older reusable ones: they resume the same peer.
        if reusable { list.removeAll(where: \.reusable) }
        list.append(Entry(session: session, expiry: now &+ lifetime, reusable: reusable, serial: nextSerial))
        nextSerial &+= 1
        if list.count > perPeerCapacity { list.removeFirst(list.count - perPeerCapacity) }
        entries[peer] = list
        count += list.count - before
        while count > capacity { evictOldest() }
    }

    /// The newest usable session for a peer, removed from the store when it is single-use.
    /// Expired sessions of the peer are dropped on the way.
    /// - Parameters:
    ///   - peer: the peer about to be connected to.
    ///   - now: the current monotonic time in nanoseconds.
    /// - Returns: the session to offer, or `nil` when none is usable.
    mutating func take(for peer: String, now: UInt64) -> Session? {
        guard var list = entries[peer] else { return nil }
        let before = list.count
        list.removeAll { $0.expiry <= now }
        let taken = list.last
        if let taken, !taken.reusable { list.removeLast() }
        entries[peer] = list.isEmpty ? nil : list
        count -= before - list.count
        return taken?.session
    }

    /// Forgets every session of a peer.
    /// - Parameter peer: the peer.
    mutating func removeAll(for peer: String) {
        count -= entries.removeValue(forKey: peer)?.count ?? 0
    }

    /// Records how a handshake that offered a session ended.
    /// - Parameters:
    ///   - resumed: whether the server resumed the offered session.
    ///   - peer: the peer.
    ///   - now: the current monotonic time in nanoseconds.
    mutating func offerEnded(resumed: Bool, for peer: String, now: UInt64) {
        if resumed {
            refusals[peer] = nil
            return
        }
        let count = (refusals[peer]?.count ?? 0) + 1
        if refusals[peer] == nil, refusals.count >= capacity {
            // Bounded like the sessions: drop the peers not paused, then any one.
            refusals = refusals.filter { $0.value.pausedUntil > now }
            if refusals.count >= capacity, let any = refusals.first?.key { refusals[any] = nil }
        }
        if count >= Self.refusalLimit {
            removeAll(for: peer)
            refusals[peer] = (0, now &+ Self.refusalPause)
        } else {
            refusals[peer] = (count, refusals[peer]?.pausedUntil ?? 0)
        }
    }

    /// Whether sessions of a peer are not being stored, after it refused too many offers.
    /// - Parameters:
    ///   - peer: the peer.
    ///   - now: the current monotonic time in nanoseconds.
    func isPaused(_ peer: String, now: UInt64) -> Bool {
        (refusals[peer]?.pausedUntil ?? 0) > now
    }

    /// The number of sessions stored for a peer, expired ones included.
    /// - Parameter peer: the peer.
    func count(for peer: String) -> Int {
        entries[peer]?.count ?? 0
    }

    /// Removes the session stored first across all peers.
    private mutating func evictOldest() {
        guard let (peer, list) = entries.min(by: { $0.value[0].serial < $1.value[0].serial }) else { return }
        var rest = list
        rest.removeFirst()
        entries[peer] = rest.isEmpty ? nil : rest
        count -= 1
    }
}

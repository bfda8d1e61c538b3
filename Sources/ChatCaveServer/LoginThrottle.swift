/// Counts failed password checks and decides when the next check must wait: a state machine
/// that takes events (a check, a failure, a success, each with the time it happened) and
/// returns decisions, with no clock or lock of its own (``CredentialVerifier`` holds it in a
/// lock and passes the time).
///
/// Failures are counted under three keys, each with its own threshold
/// (see ``ChatCaveServer/PasswordLimits``):
/// - the (name, client address) pair: ``ChatCaveServer/PasswordLimits/failuresAllowed``;
/// - the client address (``PeerKey``): ``ChatCaveServer/PasswordLimits/addressFailuresAllowed``,
///   higher, since many people may share one address (NAT, proxy);
/// - the name alone: ``ChatCaveServer/PasswordLimits/nameFailuresAllowed``, much higher, since
///   anyone can try any listed name (this stops guessing from many addresses).
///
/// A pair that once succeeded is trusted: it is held back only by its own count, never by the
/// address's or the name's, so nobody elsewhere can lock a user out of the address she signs
/// in from. A success clears the pair's count (not the name's or the address's, which would let
/// a guesser reset them with an account of its own).
///
/// Memory is bounded: at most `trackedKeys` counts and `trackedKeys` trusted pairs; when full,
/// expired counts are dropped, then the entry whose last event is oldest.
struct LoginThrottle: Sendable {
    /// One password check: who it is for and where it comes from.
    struct Attempt: Sendable, Equatable {
        /// The key of the name (``TextRules/nameKey(_:)``).
        let name: String
        /// The key of the client address (``PeerKey/of(addressBytes:)``).
        let peer: String

        /// The attempt for `name` from the address `addressBytes`.
        init(name: String, addressBytes: [UInt8]?) {
            self.name = "name:" + TextRules.nameKey(name)
            self.peer = PeerKey.of(addressBytes: addressBytes)
        }

        /// The key of the (name, address) pair.
        var pair: String { "pair:" + peer + "|" + name }
    }

    private struct Entry: Sendable {
        var failures: Int
        var lastFailure: ContinuousClock.Instant
    }

    private let limits: ChatCaveServer.PasswordLimits
    private var entries: [String: Entry] = [:]
    /// Pairs that succeeded, with the time of their last success.
    private var trusted: [String: ContinuousClock.Instant] = [:]

    /// A throttle with these limits and no failures counted.
    init(limits: ChatCaveServer.PasswordLimits) {
        self.limits = limits
    }

    /// How long `attempt` must wait at `now` before its password may be checked; zero when it
    /// may be checked at once.
    func wait(for attempt: Attempt, now: ContinuousClock.Instant) -> Duration {
        var limited = [(attempt.pair, limits.failuresAllowed)]
        if trusted[attempt.pair] == nil {
            limited += [(attempt.peer, limits.addressFailuresAllowed), (attempt.name, limits.nameFailuresAllowed)]
        }
        return limited.map { key, allowed in
            entries[key].map { lockoutEnd(of: $0, allowed: allowed) - now } ?? .zero
        }.max() ?? .zero
    }

    /// Counts one failed password check of `attempt` against its pair, address and name.
    mutating func recordFailure(_ attempt: Attempt, now: ContinuousClock.Instant) {
        for key in [attempt.pair, attempt.peer, attempt.name] {
            var entry = entries[key].flatMap { now - $0.lastFailure > limits.failureWindow ? nil : $0 }
                ?? Entry(failures: 0, lastFailure: now)
            entry.failures += 1
            entry.lastFailure = now
            if entries[key] == nil, entries.count >= limits.trackedKeys { makeRoomForEntry(now: now) }
            entries[key] = entry
        }
    }

    /// Records that `attempt` had the right password: its pair's count is cleared and the pair
    /// is trusted from now on.
    mutating func recordSuccess(_ attempt: Attempt, now: ContinuousClock.Instant) {
        entries.removeValue(forKey: attempt.pair)
        if trusted[attempt.pair] == nil, trusted.count >= limits.trackedKeys,
           let oldest = trusted.min(by: { $0.value < $1.value }) {
            trusted.removeValue(forKey: oldest.key)
        }
        trusted[attempt.pair] = now
    }

    /// How many failure counts are kept now.
    var trackedCount: Int { entries.count }

    /// How many trusted pairs are kept now.
    var trustedCount: Int { trusted.count }

    /// When the lock-out after the entry's last failure ends: the last failure itself while
    /// fewer than `allowed` failures were counted, then ``ChatCaveServer/PasswordLimits/lockout``
    /// doubling with each further failure up to ``ChatCaveServer/PasswordLimits/maxLockout``.
    private func lockoutEnd(of entry: Entry, allowed: Int) -> ContinuousClock.Instant {
        let excess = entry.failures - allowed
        guard excess >= 0 else { return entry.lastFailure }
        var lockout = limits.lockout
        for _ in 0..<min(excess, 32) where lockout < limits.maxLockout { lockout *= 2 }
        return entry.lastFailure + min(lockout, limits.maxLockout)
    }

    private mutating func makeRoomForEntry(now: ContinuousClock.Instant) {
        entries = entries.filter { now - $0.value.lastFailure <= limits.failureWindow }
        if entries.count >= limits.trackedKeys, let oldest = entries.min(by: { $0.value.lastFailure < $1.value.lastFailure }) {
            entries.removeValue(forKey: oldest.key)
        }
    }
}

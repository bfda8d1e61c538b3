import Synchronization

/// Counts failed password checks per client address and per user name, and locks a key out
/// for a growing time once it has failed too often (see ``ChatCaveServer/PasswordLimits``).
///
/// Memory is bounded: at most `trackedKeys` keys are remembered; when full, expired ones are
/// dropped, then the one whose last failure is oldest.
final class LoginThrottle: Sendable {
    private struct Entry {
        var failures: Int
        var lastFailure: ContinuousClock.Instant
    }

    private let limits: ChatCaveServer.PasswordLimits
    private let entries = Mutex<[String: Entry]>([:])

    /// Creates a throttle with these limits.
    init(limits: ChatCaveServer.PasswordLimits) {
        self.limits = limits
    }

    /// The key of a client address: an IPv4 address, or the /64 prefix of an IPv6 address
    /// (one subscriber usually holds a whole /64); `"peer:unknown"` without an address.
    static func peerKey(addressBytes: [UInt8]?) -> String {
        guard let bytes = addressBytes else { return "peer:unknown" }
        let prefix = bytes.count == 4 ? bytes : Array(bytes.prefix(8))
        return "peer:" + prefix.map(String.init).joined(separator: ".")
    }

    /// The key of a user name, compared as ``TextRules/nameKey(_:)``.
    static func nameKey(_ name: String) -> String {
        "name:" + TextRules.nameKey(name)
    }

    /// Refuses a password check while any of `keys` is locked out.
    /// - Throws: 429 with the seconds until the longest lock-out ends.
    func check(_ keys: [String]) throws(APIError) {
        let now = ContinuousClock.now
        let wait = entries.withLock { entries in
            keys.compactMap { entries[$0].map { lockoutEnd(of: $0) - now } }.max() ?? .zero
        }
        guard wait > .zero else { return }
        let seconds = wait.components.seconds + (wait.components.attoseconds > 0 ? 1 : 0)
        throw .tooManyAttempts(retryAfter: Int(max(1, seconds)))
    }

    /// Counts one failed password check against each of `keys`.
    func recordFailure(_ keys: [String]) {
        let now = ContinuousClock.now
        entries.withLock { entries in
            for key in keys {
                var entry = entries[key].flatMap { now - $0.lastFailure > limits.failureWindow ? nil : $0 }
                    ?? Entry(failures: 0, lastFailure: now)
                entry.failures += 1
                entry.lastFailure = now
                if entries[key] == nil, entries.count >= limits.trackedKeys { makeRoom(in: &entries, now: now) }
                entries[key] = entry
            }
        }
    }

    /// Forgets the failures of `key` (a name whose password was just right).
    func recordSuccess(_ key: String) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    /// How many keys are tracked now.
    var trackedCount: Int {
        entries.withLock { $0.count }
    }

    /// When the lock-out after the entry's last failure ends (its last failure when none).
    private func lockoutEnd(of entry: Entry) -> ContinuousClock.Instant {
        let excess = entry.failures - limits.failuresAllowed
        guard excess >= 0 else { return entry.lastFailure }
        var lockout = limits.lockout
        for _ in 0..<min(excess, 32) where lockout < limits.maxLockout { lockout *= 2 }
        return entry.lastFailure + min(lockout, limits.maxLockout)
    }

    private func makeRoom(in entries: inout [String: Entry], now: ContinuousClock.Instant) {
        entries = entries.filter { now - $0.value.lastFailure <= limits.failureWindow }
        if entries.count >= limits.trackedKeys, let oldest = entries.min(by: { $0.value.lastFailure < $1.value.lastFailure }) {
            entries.removeValue(forKey: oldest.key)
        }
    }
}

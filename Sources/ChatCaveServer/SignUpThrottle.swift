/// Limits sign-ups per client address: a state machine that takes sign-up attempts (each with
/// the time it happened) and says whether each may go on or how long it must wait, with no
/// clock or lock of its own (``CredentialVerifier`` holds it in a lock and passes the time).
///
/// Each address (``PeerKey``) has a bucket of ``ChatCaveServer/PasswordLimits/signUpsPerMinute``
/// sign-ups that refills evenly over a minute: a burst of that many goes through, then one more
/// every `60 s / signUpsPerMinute`. Memory is bounded: at most `trackedKeys` addresses; when
/// full, full buckets are dropped (they hold nothing), then the one used longest ago.
struct SignUpThrottle: Sendable {
    private struct Bucket: Sendable {
        /// Sign-ups left, in units of one sign-up; refilled as time passes.
        var available: Double
        var updated: ContinuousClock.Instant
    }

    private let perMinute: Int
    private let trackedKeys: Int
    private var buckets: [String: Bucket] = [:]

    /// A throttle allowing `perMinute` sign-ups a minute per address (at least 1), tracking at
    /// most `trackedKeys` addresses.
    init(perMinute: Int, trackedKeys: Int) {
        self.perMinute = max(1, perMinute)
        self.trackedKeys = max(1, trackedKeys)
    }

    /// Takes one sign-up from the bucket of `peer` at `now`.
    /// - Returns: zero when the sign-up may go on (and it is counted); otherwise how long until
    ///   the next one is allowed (and it is not counted).
    mutating func admit(peer: String, now: ContinuousClock.Instant) -> Duration {
        var bucket = buckets[peer].map { refilled($0, now: now) } ?? Bucket(available: Double(perMinute), updated: now)
        guard bucket.available >= 1 else {
            buckets[peer] = bucket
            return interval * (1 - bucket.available)
        }
        bucket.available -= 1
        if buckets[peer] == nil, buckets.count >= trackedKeys { makeRoom(now: now) }
        buckets[peer] = bucket
        return .zero
    }

    /// How many addresses are tracked now.
    var trackedCount: Int { buckets.count }

    /// The time one sign-up takes to come back.
    private var interval: Duration { .seconds(60) / perMinute }

    private func refilled(_ bucket: Bucket, now: ContinuousClock.Instant) -> Bucket {
        let gained = (now - bucket.updated) / interval
        return Bucket(available: min(Double(perMinute), bucket.available + gained), updated: now)
    }

    private mutating func makeRoom(now: ContinuousClock.Instant) {
        buckets = buckets.filter { refilled($0.value, now: now).available < Double(perMinute) }
        if buckets.count >= trackedKeys, let oldest = buckets.min(by: { $0.value.updated < $1.value.updated }) {
            buckets.removeValue(forKey: oldest.key)
        }
    }
}

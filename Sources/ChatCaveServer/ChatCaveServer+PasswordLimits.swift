import Foundation

extension ChatCaveServer {
    /// How a ``ChatCaveServer`` keeps password checks and sign-ups from being used for guessing,
    /// for locking users out, or for exhausting its CPU.
    ///
    /// Every password hash (a check of a Basic credential or a sign-in, a sign-up) runs in a
    /// bounded pool: at most ``concurrentHashes`` at once, at most ``queuedHashes`` waiting,
    /// and any more get 503 with `Retry-After`. ``reservedHashes`` of those places are kept for
    /// the password checks of existing users, so a flood of sign-ups (or of guesses at unknown
    /// names) cannot keep users from signing in.
    ///
    /// Failed password checks are counted per (name, client address) pair, per client address
    /// (IPv4 address, IPv6 /64; an IPv4-mapped IPv6 address counts as its IPv4 address) and per
    /// name, with thresholds ``failuresAllowed``, ``addressFailuresAllowed`` and
    /// ``nameFailuresAllowed``. Once a count reaches its threshold the next check waits
    /// ``lockout``, doubling with every further failure up to ``maxLockout``; a check during a
    /// lock-out gets 429 with `Retry-After` and costs no hash. A pair that has succeeded
    /// before is held back by its own count only, so guesses from other addresses never lock a
    /// user out of an address she has signed in from. A success clears the
    /// pair's count; counts are forgotten after ``failureWindow`` without a failure. At most
    /// ``trackedKeys`` counts and as many trusted pairs are remembered; when full, the oldest
    /// are forgotten first.
    ///
    /// Sign-ups are limited to ``signUpsPerMinute`` per client address (a burst of that many,
    /// then one every `60 s / signUpsPerMinute`); more get 429 with `Retry-After`.
    public struct PasswordLimits: Sendable {
        /// How many password hashes run at once; the number of active cores by default.
        public var concurrentHashes: Int
        /// How many more may wait for a slot; twice the number of active cores by default.
        public var queuedHashes: Int
        /// How many of the ``concurrentHashes`` + ``queuedHashes`` places only the password
        /// checks of existing users may take; ``concurrentHashes`` by default (however large,
        /// one place stays open to the others).
        public var reservedHashes: Int
        /// Failures allowed per (name, client address) pair before lock-outs begin; 5 by default.
        public var failuresAllowed: Int
        /// Failures allowed per client address (for any names) before lock-outs begin; 50 by default.
        public var addressFailuresAllowed: Int
        /// Failures allowed per name (from any addresses) before lock-outs begin for addresses
        /// where that name has never signed in; 100 by default.
        public var nameFailuresAllowed: Int
        /// The first lock-out; 1 second by default.
        public var lockout: Duration
        /// The longest lock-out; 15 minutes by default.
        public var maxLockout: Duration
        /// How long counts are kept after the last failure; 15 minutes by default.
        public var failureWindow: Duration
        /// How many counts (and how many trusted pairs) are tracked at once; 10,000 by default.
        public var trackedKeys: Int
        /// How many sign-ups one client address may make per minute; 10 by default.
        public var signUpsPerMinute: Int

        /// Creates limits.
        /// - Parameters:
        ///   - concurrentHashes: the active core count by default.
        ///   - queuedHashes: twice the active core count by default.
        ///   - reservedHashes: `concurrentHashes` by default.
        ///   - failuresAllowed: per pair; 5 by default.
        ///   - addressFailuresAllowed: per address; 50 by default.
        ///   - nameFailuresAllowed: per name; 100 by default.
        ///   - lockout: 1 second by default.
        ///   - maxLockout: 15 minutes by default.
        ///   - failureWindow: 15 minutes by default.
        ///   - trackedKeys: 10,000 by default.
        ///   - signUpsPerMinute: 10 by default.
        public init(concurrentHashes: Int = ProcessInfo.processInfo.activeProcessorCount,
                    queuedHashes: Int = 2 * ProcessInfo.processInfo.activeProcessorCount,
                    reservedHashes: Int? = nil,
                    failuresAllowed: Int = 5, addressFailuresAllowed: Int = 50, nameFailuresAllowed: Int = 100,
                    lockout: Duration = .seconds(1), maxLockout: Duration = .seconds(900),
                    failureWindow: Duration = .seconds(900), trackedKeys: Int = 10_000, signUpsPerMinute: Int = 10) {
            self.concurrentHashes = max(1, concurrentHashes)
            self.queuedHashes = max(0, queuedHashes)
            self.reservedHashes = max(0, reservedHashes ?? self.concurrentHashes)
            self.failuresAllowed = max(0, failuresAllowed)
            self.addressFailuresAllowed = max(0, addressFailuresAllowed)
            self.nameFailuresAllowed = max(0, nameFailuresAllowed)
            self.lockout = lockout
            self.maxLockout = maxLockout
            self.failureWindow = failureWindow
            self.trackedKeys = max(1, trackedKeys)
            self.signUpsPerMinute = max(1, signUpsPerMinute)
        }
    }
}

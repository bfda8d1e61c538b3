import Foundation

extension ChatCaveServer {
    /// How a ``ChatCaveServer`` keeps password checks from being used for guessing or for
    /// exhausting its CPU.
    ///
    /// Every password hash (a check of a Basic credential or a sign-in, a sign-up) runs in a
    /// bounded pool: at most ``concurrentHashes`` at once, at most ``queuedHashes`` waiting,
    /// and any more get 503 with `Retry-After`. Failed password checks are counted per client
    /// address (IPv4 address, IPv6 /64) and per user name: after ``failuresAllowed`` failures
    /// the next check waits ``lockout``, doubling with every further failure up to
    /// ``maxLockout``; a check during a lock-out gets 429 with `Retry-After` and costs no hash.
    /// A success clears the name's count (not the address's); counts are forgotten after
    /// ``failureWindow`` without a failure. At most ``trackedKeys`` names and addresses are
    /// remembered; when full, the ones that failed longest ago are forgotten first.
    public struct PasswordLimits: Sendable {
        /// How many password hashes run at once; the number of active cores by default.
        public var concurrentHashes: Int
        /// How many more may wait for a slot; twice the number of active cores by default.
        public var queuedHashes: Int
        /// Failures allowed per address and per name before lock-outs begin; 5 by default.
        public var failuresAllowed: Int
        /// The first lock-out; 1 second by default.
        public var lockout: Duration
        /// The longest lock-out; 15 minutes by default.
        public var maxLockout: Duration
        /// How long counts are kept after the last failure; 15 minutes by default.
        public var failureWindow: Duration
        /// How many addresses and names are tracked at once; 10,000 by default.
        public var trackedKeys: Int

        /// Creates limits.
        /// - Parameters:
        ///   - concurrentHashes: the active core count by default.
        ///   - queuedHashes: twice the active core count by default.
        ///   - failuresAllowed: 5 by default.
        ///   - lockout: 1 second by default.
        ///   - maxLockout: 15 minutes by default.
        ///   - failureWindow: 15 minutes by default.
        ///   - trackedKeys: 10,000 by default.
        public init(concurrentHashes: Int = ProcessInfo.processInfo.activeProcessorCount,
                    queuedHashes: Int = 2 * ProcessInfo.processInfo.activeProcessorCount,
                    failuresAllowed: Int = 5, lockout: Duration = .seconds(1), maxLockout: Duration = .seconds(900),
                    failureWindow: Duration = .seconds(900), trackedKeys: Int = 10_000) {
            self.concurrentHashes = max(1, concurrentHashes)
            self.queuedHashes = max(0, queuedHashes)
            self.failuresAllowed = max(0, failuresAllowed)
            self.lockout = lockout
            self.maxLockout = maxLockout
            self.failureWindow = failureWindow
            self.trackedKeys = max(1, trackedKeys)
        }
    }
}

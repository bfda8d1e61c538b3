import CourierTLS
import Foundation

extension ChatCaveServer {
    /// Where a ``ChatCaveServer`` keeps its data, how hard it hashes passwords, and its limits.
    public struct Configuration: Sendable {
        /// Where users, rooms and messages are kept between runs, in the SQLite database
        /// `chatcave.sqlite`; `nil` (the default) keeps them in memory only. Created (mode 0700)
        /// when missing; the database files are mode 0600. A `chatcave-store.json` of an older
        /// server found there is imported on first start and renamed `….migrated`.
        public var dataDirectory: URL?
        /// How durable a change is when it is answered, with a data directory;
        /// ``Durability/synced`` by default.
        public var durability: Durability
        /// The PBKDF2-HMAC-SHA256 iteration count of new password hashes; 210,000 by default
        /// (OWASP's recommendation). Tests may lower it; stored hashes keep their own count.
        public var passwordIterations: Int
        /// The largest request body accepted; larger ones get 413. 1 MiB by default.
        public var maxBodyBytes: Int
        /// How long a request head may take to arrive (slow clients are cut off); 10 s by default.
        public var headerTimeout: Duration
        /// How long an idle keep-alive connection stays open; 60 s by default.
        public var idleTimeout: Duration
        /// How many password hashes run at once, and how failed password checks are throttled.
        public var passwordLimits: PasswordLimits

        /// Creates a configuration.
        /// - Parameters:
        ///   - dataDirectory: `nil` (memory only) by default.
        ///   - passwordIterations: `PasswordHashing.defaultIterations` (210,000) by default.
        ///   - maxBodyBytes: 1 MiB by default.
        ///   - headerTimeout: 10 seconds by default.
        ///   - idleTimeout: 60 seconds by default.
        ///   - passwordLimits: ``PasswordLimits/init(concurrentHashes:queuedHashes:reservedHashes:failuresAllowed:addressFailuresAllowed:nameFailuresAllowed:lockout:maxLockout:failureWindow:trackedKeys:signUpsPerMinute:)`` by default.
        ///   - durability: ``Durability/synced`` by default.
        public init(dataDirectory: URL? = nil, passwordIterations: Int = PasswordHashing.defaultIterations,
                    maxBodyBytes: Int = 1 << 20, headerTimeout: Duration = .seconds(10),
                    idleTimeout: Duration = .seconds(60), passwordLimits: PasswordLimits = PasswordLimits(),
                    durability: Durability = .synced) {
            self.dataDirectory = dataDirectory
            self.durability = durability
            self.passwordIterations = passwordIterations
            self.maxBodyBytes = maxBodyBytes
            self.headerTimeout = headerTimeout
            self.idleTimeout = idleTimeout
            self.passwordLimits = passwordLimits
        }
    }

    /// How durable a change is when the server answers it (with a data directory; without one
    /// nothing survives the process).
    public enum Durability: String, Sendable, CaseIterable {
        /// Every change is committed and synced to the disk (`fsync`) before it is answered: it
        /// survives a crash of the server, of the system, and a power loss. About one disk sync
        /// per change, so the disk's sync latency bounds the rate of changes.
        case synced
        /// Every change is committed to the database's write-ahead log (in the system's file
        /// cache) before it is answered, and synced at checkpoints: it survives a crash or kill
        /// of the server, but the last changes may be lost if the system crashes or loses power.
        case flushed
    }

    /// Why a ``ChatCaveServer`` could not start: its data directory is unreadable, or its port
    /// cannot be bound.
    public struct StartupError: Error, Sendable, CustomStringConvertible {
        /// What went wrong, in plain words.
        public let description: String
    }
}

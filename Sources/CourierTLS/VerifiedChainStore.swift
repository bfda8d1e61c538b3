/// The bookkeeping of a cache of verified certificate chains, without OpenSSL and without a
/// clock: a value type that takes events (a chain was verified, a handshake presents a chain)
/// and answers them, so that every rule is testable with made-up chains and times.
///
/// Rules:
/// - A chain is found again only under the same ``Key``: the same certificates, byte for byte
///   and in the order the server presented them, for the same server name checked the same way.
/// - An entry is usable for ``lifetime`` nanoseconds of the monotonic clock after it was
///   stored, and only while the wall clock is inside the verified chain's ``Validity`` (no
///   certificate of the chain not yet valid or expired). An unusable entry is dropped when it
///   is looked up.
/// - At most ``capacity`` entries are kept; past it the unusable ones go, then the oldest.
/// - Storing under a key that is already present replaces the entry and restarts its lifetime.
struct VerifiedChainStore<Chain> {
    /// What a verification depended on, besides the context's fixed verification settings
    /// (trust store, purpose, depth, host-name flags, security level; see
    /// ``VerifiedChainCache``).
    struct Key: Hashable {
        /// The name checked against the certificate: a DNS name or an IP address literal.
        let serverName: String
        /// Whether ``serverName`` was checked as an IP address.
        let isIPAddress: Bool
        /// The DER encodings of the certificates the server presented, in order, each after
        /// its length in 4 bytes.
        let presented: [UInt8]
    }

    /// When a verified chain is valid by the wall clock: from the latest `notBefore` of its
    /// certificates to the earliest `notAfter`, in seconds since 1970.
    struct Validity: Equatable {
        /// The first second at which every certificate of the chain is valid.
        let notBefore: Int64
        /// The first second at which a certificate of the chain has expired: OpenSSL counts a
        /// certificate as expired from its `notAfter` on (`X509_cmp_time`).
        let notAfter: Int64

        /// Whether every certificate of the chain is valid at `seconds`, by OpenSSL's rule:
        /// `notBefore` ≤ `seconds` < `notAfter`.
        func contains(_ seconds: Int64) -> Bool {
            notBefore <= seconds && seconds < notAfter
        }
    }

    /// The two clocks a look-up is judged by.
    struct Moment {
        /// A clock that never goes back, in nanoseconds: how long an entry has been kept.
        let monotonic: UInt64
        /// The wall clock in seconds since 1970: whether the certificates are valid.
        let wallSeconds: Int64
    }

    private struct Entry {
        let chain: Chain
        let validity: Validity
        /// The monotonic time in nanoseconds after which the entry is not used.
        let expiry: UInt64
        /// The order of insertion, for evicting the oldest.
        let serial: UInt64
    }

    /// The most entries kept.
    let capacity: Int
    /// How long an entry is used, in nanoseconds of the monotonic clock.
    let lifetime: UInt64

    private var entries: [Key: Entry] = [:]
    private var nextSerial: UInt64 = 0

    /// Creates an empty store.
    /// - Parameters:
    ///   - capacity: the most entries; values below 1 count as 1.
    ///   - lifetime: how long an entry is used, in nanoseconds.
    init(capacity: Int, lifetime: UInt64) {
        self.capacity = max(capacity, 1)
        self.lifetime = lifetime
    }

    /// The number of entries kept, unusable ones included until they are noticed.
    var count: Int { entries.count }

    /// Keeps a chain that verified, unless it is already outside its validity period.
    /// - Parameters:
    ///   - chain: the verified chain.
    ///   - key: what its verification depended on.
    ///   - validity: when the chain is valid by the wall clock.
    ///   - now: the current time.
    mutating func insert(_ chain: Chain, for key: Key, validity: Validity, now: Moment) {
        guard lifetime > 0, validity.contains(now.wallSeconds) else { return }
        entries[key] = Entry(chain: chain, validity: validity, expiry: now.monotonic &+ lifetime, serial: nextSerial)
        nextSerial &+= 1
        guard entries.count > capacity else { return }
        entries = entries.filter { $0.value.expiry > now.monotonic && $0.value.validity.contains(now.wallSeconds) }
        while entries.count > capacity, let oldest = entries.min(by: { $0.value.serial < $1.value.serial }) {
            entries[oldest.key] = nil
        }
    }

    /// The chain verified under `key`, if its entry is still usable; an unusable one is dropped.
    /// - Parameters:
    ///   - key: what the handshake's verification would depend on.
    ///   - now: the current time.
    /// - Returns: the chain, or `nil` when it must be verified again.
    mutating func chain(for key: Key, now: Moment) -> Chain? {
        guard let entry = entries[key] else { return nil }
        guard entry.expiry > now.monotonic, entry.validity.contains(now.wallSeconds) else {
            entries[key] = nil
            return nil
        }
        return entry.chain
    }
}

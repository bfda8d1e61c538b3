import COpenSSL
import Glibc
import Synchronization

/// The certificate chains a ``TLSContext`` verified, so that a new connection to a server that
/// presents the same chain under the same name does not verify it again; safe to use from any
/// thread.
///
/// Verifying a chain (building it to a trusted root and checking each signature, the
/// purpose, the key sizes and the name) gives the same answer every time for the same
/// certificates, name, verification settings and time. The settings are the context's own and
/// fixed: its trust store, purpose, depth, host-name flags and security level; no revocation
/// lists, no DANE, no verify callback (``TLSClientSession/verifyChain(_:)`` verifies afresh
/// if that ever changes). So the cache is keyed by the presented certificates and the name,
/// and an entry is used only inside the chain's validity period and for at most ``lifetime``
/// nanoseconds: the lifetime bounds how long one answer is reused, not how often the trust
/// store is read (it is read once, when the context is made). Only chains that verified are
/// kept. The handshake still checks, on every connection, that the server holds the leaf
/// certificate's private key (its CertificateVerify signature), and the session still checks
/// the pins. The rules are those of ``VerifiedChainStore``.
final class VerifiedChainCache: Sendable {
    /// The most chains kept.
    static let capacity = 64
    /// How long a verified chain is used: 10 minutes.
    static let lifetime: UInt64 = 10 * 60 * 1_000_000_000

    private let store = Mutex(VerifiedChainStore<VerifiedChain>(capacity: capacity, lifetime: lifetime))

    /// Creates an empty cache.
    init() {}

    /// The chain verified under `key`, if it may be used now.
    /// - Parameter key: the presented certificates and the name being checked.
    func chain(for key: VerifiedChainStore<VerifiedChain>.Key) -> VerifiedChain? {
        let now = Self.now()
        return store.withLock { $0.chain(for: key, now: now) }
    }

    /// Keeps a chain OpenSSL verified.
    /// - Parameters:
    ///   - chain: the verified chain, leaf first and trust anchor last.
    ///   - key: the presented certificates and the name that was checked.
    func insert(_ chain: VerifiedChain, for key: VerifiedChainStore<VerifiedChain>.Key) {
        let now = Self.now()
        store.withLock { $0.insert(chain, for: key, validity: chain.validity, now: now) }
    }

    private static func now() -> VerifiedChainStore<VerifiedChain>.Moment {
        // CLOCK_BOOTTIME keeps counting while the machine is suspended, so the lifetime is real time.
        var monotonic = timespec()
        clock_gettime(CLOCK_BOOTTIME, &monotonic)
        return .init(monotonic: UInt64(monotonic.tv_sec) &* 1_000_000_000 &+ UInt64(monotonic.tv_nsec),
                     wallSeconds: Int64(time(nil)))
    }
}

/// A certificate chain OpenSSL verified, holding one reference to each certificate.
final class VerifiedChain: Sendable {
    /// The certificates, leaf first. `nonisolated(unsafe)` because raw pointers are not
    /// `Sendable`; sharing them between threads is safe as OpenSSL shares the certificates of
    /// a trust store: it counts references atomically and fills a certificate's lazily computed
    /// fields (extension flags, digest) under the certificate's own lock.
    nonisolated(unsafe) private let certificates: [OpaquePointer]
    /// When every certificate of the chain is valid.
    let validity: VerifiedChainStore<VerifiedChain>.Validity

    /// Takes a reference to each certificate of a verified chain.
    /// - Parameter stack: `X509_STORE_CTX_get0_chain` after a successful verification.
    /// - Returns: `nil` when the chain is empty or a certificate's dates cannot be read.
    init?(copying stack: OpaquePointer) {
        let count = courier_sk_X509_num(stack)
        guard count > 0 else { return nil }
        var certificates: [OpaquePointer] = []
        var notBefore = Int64.min
        var notAfter = Int64.max
        for index in 0..<count {
            guard let certificate = courier_sk_X509_value(stack, index),
                  let start = Self.seconds(X509_get0_notBefore(certificate)),
                  let end = Self.seconds(X509_get0_notAfter(certificate)) else { return nil }
            notBefore = max(notBefore, start)
            notAfter = min(notAfter, end)
            certificates.append(certificate)
        }
        // References are taken only once nothing can fail.
        certificates.forEach { X509_up_ref($0) }
        self.certificates = certificates
        self.validity = .init(notBefore: notBefore, notAfter: notAfter)
    }

    deinit {
        certificates.forEach { X509_free($0) }
    }

    /// A new stack for `X509_STORE_CTX_set0_verified_chain`: `leaf` (the certificate this
    /// handshake parsed, with the same encoding as this chain's leaf), then this chain's issuers.
    /// - Returns: the stack, which holds a reference to each certificate; `nil` if OpenSSL
    ///   cannot allocate it.
    func stack(leaf: OpaquePointer) -> OpaquePointer? {
        guard let stack = courier_sk_X509_new_null() else { return nil }
        for certificate in [leaf] + certificates.dropFirst() {
            X509_up_ref(certificate)
            guard courier_sk_X509_push(stack, certificate) > 0 else {
                X509_free(certificate)
                courier_sk_X509_free_all(stack)
                return nil
            }
        }
        return stack
    }

    /// An `ASN1_TIME` in seconds since 1970.
    private static func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Int64(timegm(&parts))
    }
}

extension VerifiedChainStore.Key {
    /// The key of the chain a handshake is about to verify: the certificates the server
    /// presented, as OpenSSL gave them to the verification, and the name being checked.
    /// - Parameters:
    ///   - storeContext: the `X509_STORE_CTX` of the verification.
    ///   - serverName: the name checked against the certificate.
    ///   - isIPAddress: whether it is checked as an IP address.
    /// - Returns: `nil` when a certificate cannot be encoded.
    init?(presentedTo storeContext: OpaquePointer, serverName: String, isIPAddress: Bool) {
        guard let leaf = X509_STORE_CTX_get0_cert(storeContext) else { return nil }
        var presented: [UInt8] = []
        guard Self.append(leaf, to: &presented) else { return nil }
        if let untrusted = X509_STORE_CTX_get0_untrusted(storeContext) {
            for index in 0..<max(courier_sk_X509_num(untrusted), 0) {
                // OpenSSL's list starts with the leaf, which is already in.
                guard let certificate = courier_sk_X509_value(untrusted, index) else { return nil }
                guard certificate != leaf else { continue }
                guard Self.append(certificate, to: &presented) else { return nil }
            }
        }
        self.init(serverName: serverName, isIPAddress: isIPAddress, presented: presented)
    }

    /// Appends a certificate's length in 4 bytes, then its DER encoding.
    private static func append(_ certificate: OpaquePointer, to bytes: inout [UInt8]) -> Bool {
        guard let encoding = OpenSSL.derEncoding({ i2d_X509(certificate, $0) }) else { return false }
        withUnsafeBytes(of: UInt32(encoding.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: encoding)
        return true
    }
}

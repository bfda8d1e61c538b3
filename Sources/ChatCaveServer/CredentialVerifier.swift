import CourierTLS
import Foundation
import Synchronization

/// Checks the credentials of a request: `X-Magic-Auth: <apiKey>` or
/// `Authorization: Basic base64(name:password)`, and hashes and verifies passwords.
///
/// Passwords are stored as salted PBKDF2-HMAC-SHA256 hashes (CourierTLS's `PasswordHashing`).
/// Verifying one is deliberately slow, so a Basic credential that was verified once is
/// remembered under a keyed SHA-256 digest (a random key per process, never stored) and the
/// next request with it costs one digest. Unknown names are verified against a dummy hash,
/// so that a wrong name and a wrong password take the same time.
///
/// Every hash runs in a bounded ``HashingPool`` (checks of existing users may use its reserved
/// places), failed password checks are throttled by a ``LoginThrottle`` and sign-ups by a
/// ``SignUpThrottle`` (see ``ChatCaveServer/PasswordLimits``).
final class CredentialVerifier: Sendable {
    /// The most remembered Basic credentials; the memory is emptied when it is full.
    static let cacheLimit = 1_024

    /// Who a request's credentials belong to, and how they were shown.
    struct Authentication: Sendable {
        /// The user.
        let user: StoredUser
        /// The API key the request presented as `X-Magic-Auth`; `nil` for Basic credentials.
        let apiKey: String?
    }

    private struct Remembered: Sendable {
        var userID: String
        var passwordHash: String
    }

    private let store: any ChatStore
    private let iterations: Int
    private let dummyHash: String
    private let cacheKey: [UInt8]
    private let verified = Mutex<[String: Remembered]>([:])
    private let throttle: Mutex<LoginThrottle>
    private let signUps: Mutex<SignUpThrottle>
    /// Where every hash runs.
    let pool: HashingPool

    /// Creates a verifier.
    /// - Parameters:
    ///   - store: where users are looked up.
    ///   - iterations: the PBKDF2 iteration count of new hashes.
    ///   - limits: the hashing pool's size, the failure limits and the sign-up rate.
    init(store: any ChatStore, iterations: Int, limits: ChatCaveServer.PasswordLimits) {
        self.store = store
        self.iterations = iterations
        self.pool = HashingPool(concurrency: limits.concurrentHashes, queueLimit: limits.queuedHashes,
                                reserved: limits.reservedHashes)
        self.throttle = Mutex(LoginThrottle(limits: limits))
        self.signUps = Mutex(SignUpThrottle(perMinute: limits.signUpsPerMinute, trackedKeys: limits.trackedKeys))
        self.dummyHash = (try? PasswordHashing.hash("not a password", iterations: iterations)) ?? ""
        self.cacheKey = (0..<32).map { _ in UInt8.random(in: .min ... .max) }
    }

    /// Hashes the password of a sign-up from `request`'s client address, in the pool (outside
    /// its reserved places).
    /// - Throws: 406 when the password is empty or too long (failures of the hash as 406 too);
    ///   429 when the address has made too many sign-ups; 503 when the pool is full.
    func hashForSignUp(password: String, from request: APIRequest) throws(APIError) -> String {
        guard !password.isEmpty else { throw .rejected("Password must not be empty") }
        guard password.utf8.count <= 1_024 else { throw .rejected("Password must be at most 1024 bytes") }
        let peer = PeerKey.of(addressBytes: request.peerAddress)
        let wait = signUps.withLock { $0.admit(peer: peer, now: .now) }
        guard wait == .zero else { throw .tooManySignUps(retryAfter: APIError.retryAfterSeconds(wait)) }
        let result = try pool.run(for: .other) { Result(catching: { try PasswordHashing.hash(password, iterations: iterations) }) }
        switch result {
        case .success(let hash): return hash
        case .failure(let error): throw .rejected("The password cannot be stored: \(error)")
        }
    }

    /// The user with this name and password, or `nil`; takes as long for an unknown name.
    /// The check is throttled for the name and the request's client address.
    /// - Throws: 429 while the attempt is locked out; 503 when the pool is full.
    func user(named name: String, password: String, from request: APIRequest) throws(APIError) -> StoredUser? {
        let attempt = LoginThrottle.Attempt(name: name, addressBytes: request.peerAddress)
        try checkThrottle(attempt)
        return try verify(name: name, password: password, attempt: attempt)
    }

    /// Refuses `attempt` while it is locked out.
    /// - Throws: 429 with the seconds until its lock-out ends.
    private func checkThrottle(_ attempt: LoginThrottle.Attempt) throws(APIError) {
        let wait = throttle.withLock { $0.wait(for: attempt, now: .now) }
        guard wait > .zero else { return }
        throw .tooManyAttempts(retryAfter: APIError.retryAfterSeconds(wait))
    }

    /// Checks a password in the pool and counts the failure or the success of `attempt`.
    private func verify(name: String, password: String, attempt: LoginThrottle.Attempt) throws(APIError) -> StoredUser? {
        let found = try store.user(named: name)
        let matches = try pool.run(for: found == nil ? .other : .signIn) {
            PasswordHashing.verify(password, against: found?.passwordHash ?? dummyHash)
        }
        guard let found, matches else {
            throttle.withLock { $0.recordFailure(attempt, now: .now) }
            return nil
        }
        throttle.withLock { $0.recordSuccess(attempt, now: .now) }
        return found
    }

    /// Who a request's credentials belong to, or `nil` when they are missing or wrong.
    /// The API key is tried first, then Basic (throttled, and checked in the pool).
    /// - Throws: 429 while the Basic attempt is locked out; 503 when the pool is full.
    func authenticate(_ request: APIRequest) throws(APIError) -> Authentication? {
        if let key = request.header("X-Magic-Auth")?.trimmingCharacters(in: .whitespaces), !key.isEmpty,
           let user = try store.user(apiKey: key) {
            return Authentication(user: user, apiKey: key)
        }
        guard let authorization = request.header("Authorization"),
              let (name, password) = Self.basicCredentials(authorization) else { return nil }
        // The lock-out is checked before the memory: a remembered credential answering during a
        // lock-out would tell a guesser that its guess is right. A client that signed in from
        // its address is not locked out by failures elsewhere (its pair is trusted).
        let attempt = LoginThrottle.Attempt(name: name, addressBytes: request.peerAddress)
        try checkThrottle(attempt)
        let digest = rememberedKey(name: name, password: password)
        if let remembered = verified.withLock({ $0[digest] }), let user = try store.user(id: remembered.userID),
           user.passwordHash == remembered.passwordHash, TextRules.nameKey(user.name) == TextRules.nameKey(name) {
            throttle.withLock { $0.recordSuccess(attempt, now: .now) }
            return Authentication(user: user, apiKey: nil)
        }
        guard let user = try verify(name: name, password: password, attempt: attempt) else { return nil }
        verified.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll() }
            cache[digest] = Remembered(userID: user.id, passwordHash: user.passwordHash)
        }
        return Authentication(user: user, apiKey: nil)
    }

    /// Reads `Basic base64(name:password)`; `nil` for another scheme or a malformed value.
    static func basicCredentials(_ value: String) -> (name: String, password: String)? {
        let parts = value.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let data = Data(base64Encoded: parts[1].trimmingCharacters(in: .whitespaces)),
              let text = String(data: data, encoding: .utf8),
              let colon = text.firstIndex(of: ":") else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    private func rememberedKey(name: String, password: String) -> String {
        let digest = Digest.sha256(cacheKey + Array(name.utf8) + [0] + Array(password.utf8))
        return digest.map { String($0, radix: 16) }.joined(separator: ".")
    }
}

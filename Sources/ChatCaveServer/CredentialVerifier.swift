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
/// Every hash runs in a bounded ``HashingPool``, and failed password checks are throttled per
/// client address and per name by a ``LoginThrottle`` (see ``ChatCaveServer/PasswordLimits``).
final class CredentialVerifier: Sendable {
    /// The most remembered Basic credentials; the memory is emptied when it is full.
    static let cacheLimit = 1_024

    private struct Remembered: Sendable {
        var userID: String
        var passwordHash: String
    }

    private let store: ChatStore
    private let iterations: Int
    private let dummyHash: String
    private let cacheKey: [UInt8]
    private let verified = Mutex<[String: Remembered]>([:])
    /// Where every hash runs.
    let pool: HashingPool
    /// The failed-attempt counts.
    let throttle: LoginThrottle

    /// Creates a verifier.
    /// - Parameters:
    ///   - store: where users are looked up.
    ///   - iterations: the PBKDF2 iteration count of new hashes.
    ///   - limits: the hashing pool's size and the failure limits.
    init(store: ChatStore, iterations: Int, limits: ChatCaveServer.PasswordLimits) {
        self.store = store
        self.iterations = iterations
        self.pool = HashingPool(concurrency: limits.concurrentHashes, queueLimit: limits.queuedHashes)
        self.throttle = LoginThrottle(limits: limits)
        self.dummyHash = (try? PasswordHashing.hash("not a password", iterations: iterations)) ?? ""
        self.cacheKey = (0..<32).map { _ in UInt8.random(in: .min ... .max) }
    }

    /// Hashes a new password, in the pool.
    /// - Throws: 406 when the password is empty or too long (failures of the hash as 406 too);
    ///   503 when the pool is full.
    func hash(password: String) throws(APIError) -> String {
        guard !password.isEmpty else { throw .rejected("Password must not be empty") }
        guard password.utf8.count <= 1_024 else { throw .rejected("Password must be at most 1024 bytes") }
        let result = try pool.run { Result(catching: { try PasswordHashing.hash(password, iterations: iterations) }) }
        switch result {
        case .success(let hash): return hash
        case .failure(let error): throw .rejected("The password cannot be stored: \(error)")
        }
    }

    /// The user with this name and password, or `nil`; takes as long for an unknown name.
    /// The check is throttled for the name and the request's client address.
    /// - Throws: 429 while the name or address is locked out; 503 when the pool is full.
    func user(named name: String, password: String, from request: APIRequest) throws(APIError) -> ChatStore.User? {
        let keys = Self.throttleKeys(name: name, request: request)
        try throttle.check(keys)
        return try verify(name: name, password: password, keys: keys)
    }

    /// Checks a password in the pool and counts a failure against `keys`, a success for the name.
    private func verify(name: String, password: String, keys: [String]) throws(APIError) -> ChatStore.User? {
        let found = store.user(named: name)
        let matches = try pool.run { PasswordHashing.verify(password, against: found?.passwordHash ?? dummyHash) }
        guard let found, matches else {
            throttle.recordFailure(keys)
            return nil
        }
        throttle.recordSuccess(keys[1])
        return found
    }

    /// The user a request's credentials belong to, or `nil` when they are missing or wrong.
    /// The API key is tried first, then Basic (throttled, and checked in the pool).
    /// - Throws: 429 while the name or address is locked out; 503 when the pool is full.
    func authenticate(_ request: APIRequest) throws(APIError) -> ChatStore.User? {
        if let key = request.header("X-Magic-Auth")?.trimmingCharacters(in: .whitespaces), !key.isEmpty,
           let user = store.user(apiKey: key) {
            return user
        }
        guard let authorization = request.header("Authorization"),
              let (name, password) = Self.basicCredentials(authorization) else { return nil }
        // The lock-out is checked before the memory: a remembered credential answering during a
        // lock-out would tell a guesser that its guess is right.
        let keys = Self.throttleKeys(name: name, request: request)
        try throttle.check(keys)
        let digest = rememberedKey(name: name, password: password)
        if let remembered = verified.withLock({ $0[digest] }), let user = store.user(id: remembered.userID),
           user.passwordHash == remembered.passwordHash, TextRules.nameKey(user.name) == TextRules.nameKey(name) {
            return user
        }
        guard let user = try verify(name: name, password: password, keys: keys) else { return nil }
        verified.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll() }
            cache[digest] = Remembered(userID: user.id, passwordHash: user.passwordHash)
        }
        return user
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

    /// The throttle keys of a password check: the client address, then the name.
    private static func throttleKeys(name: String, request: APIRequest) -> [String] {
        [LoginThrottle.peerKey(addressBytes: request.peerAddress), LoginThrottle.nameKey(name)]
    }

    private func rememberedKey(name: String, password: String) -> String {
        let digest = Digest.sha256(cacheKey + Array(name.utf8) + [0] + Array(password.utf8))
        return digest.map { String($0, radix: 16) }.joined(separator: ".")
    }
}

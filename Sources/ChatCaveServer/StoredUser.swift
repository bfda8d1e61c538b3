import CourierTLS

/// A registered user, as a ``ChatStore`` keeps it: never the password, only its salted PBKDF2
/// hash, and never an API key, only SHA-256 digests of its keys.
struct StoredUser: Decodable, Sendable, Equatable {
    /// The most API keys a user holds at once; a new one beyond this retires the oldest.
    static let maxAPIKeys = 16

    /// The user's id (a UUID).
    var id: String
    /// The name, NFKC-normalised; unique case-insensitively.
    var name: String
    /// `pbkdf2-sha256$<iterations>$<salt>$<key>`, from CourierTLS's `PasswordHashing`.
    var passwordHash: String
    /// ``digest(ofKey:)`` of each key that may be sent as `X-Magic-Auth`, oldest first, at
    /// most ``maxAPIKeys``. A sign-in adds one when the server cannot return a key it
    /// holds; a sign-out removes the key it presented (or all of them, with Basic).
    var apiKeyDigests: [String]

    /// Creates a user with the given key digests.
    init(id: String, name: String, passwordHash: String, apiKeyDigests: [String]) {
        self.id = id
        self.name = name
        self.passwordHash = passwordHash
        self.apiKeyDigests = apiKeyDigests
    }

    /// Creates a user with one API key.
    init(id: String, name: String, passwordHash: String, apiKey: String) {
        self.init(id: id, name: name, passwordHash: passwordHash, apiKeyDigests: [Self.digest(ofKey: apiKey)])
    }

    /// Reads a user from the legacy data file (``LegacyStoreFile``). Format 3 holds
    /// `apiKeyDigests`; format 2 held one `apiKeyDigest`; format 1 held the key itself
    /// (`apiKey`), which is digested here.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        passwordHash = try container.decode(String.self, forKey: .passwordHash)
        if let digests = try container.decodeIfPresent([String].self, forKey: .apiKeyDigests) {
            apiKeyDigests = Array(digests.suffix(Self.maxAPIKeys))
        } else if let digest = try container.decodeIfPresent(String.self, forKey: .apiKeyDigest) {
            apiKeyDigests = [digest]
        } else {
            apiKeyDigests = [Self.digest(ofKey: try container.decode(String.self, forKey: .apiKey))]
        }
    }

    /// The lowercase hex SHA-256 of an API key. Keys are random UUIDs (122 bits), so a
    /// fast digest is enough: nobody can guess a key from its digest.
    static func digest(ofKey key: String) -> String {
        Digest.sha256(Array(key.utf8)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private enum CodingKeys: String, CodingKey { case id, name, passwordHash, apiKeyDigests, apiKeyDigest, apiKey }
}

import CourierTLS

extension ChatStore {
    /// A registered user, as stored: never the password, only its salted PBKDF2 hash, and
    /// never the API key, only its SHA-256 digest.
    struct User: Codable, Sendable, Equatable {
        /// The user's id (a UUID).
        var id: String
        /// The name, NFKC-normalised; unique case-insensitively.
        var name: String
        /// `pbkdf2-sha256$<iterations>$<salt>$<key>`, from CourierTLS's `PasswordHashing`.
        var passwordHash: String
        /// ``digest(ofKey:)`` of the key sent as `X-Magic-Auth`; the key is replaced on sign-out
        /// and revocation.
        var apiKeyDigest: String
        /// The API key itself, known in memory only: from its creation, or from a request that
        /// presented it since the server started. Never written to the data file.
        var apiKey: String?

        /// Creates a user with a new API key.
        init(id: String, name: String, passwordHash: String, apiKey: String) {
            self.id = id
            self.name = name
            self.passwordHash = passwordHash
            self.apiKeyDigest = Self.digest(ofKey: apiKey)
            self.apiKey = apiKey
        }

        /// Reads a user from the data file; a file of format 1 holds the key itself
        /// (`apiKey`), which is digested here.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            name = try container.decode(String.self, forKey: .name)
            passwordHash = try container.decode(String.self, forKey: .passwordHash)
            apiKey = try container.decodeIfPresent(String.self, forKey: .apiKey)
            if let digest = try container.decodeIfPresent(String.self, forKey: .apiKeyDigest) {
                apiKeyDigest = digest
            } else {
                apiKeyDigest = Self.digest(ofKey: try container.decode(String.self, forKey: .apiKey))
            }
        }

        /// Writes the user for the data file: without the key itself.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            try container.encode(passwordHash, forKey: .passwordHash)
            try container.encode(apiKeyDigest, forKey: .apiKeyDigest)
        }

        /// The lowercase hex SHA-256 of an API key. Keys are random UUIDs (122 bits), so a
        /// fast digest is enough: nobody can guess a key from its digest.
        static func digest(ofKey key: String) -> String {
            Digest.sha256(Array(key.utf8)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }

        private enum CodingKeys: String, CodingKey { case id, name, passwordHash, apiKeyDigest, apiKey }
    }

    /// A room with its members and its messages in the order they were posted.
    struct Room: Codable, Sendable {
        /// The room's id (a UUID).
        var id: String
        /// The unique name.
        var name: String
        /// The ids of the members, in the order they joined.
        var chatterIDs: [String]
        /// The messages, oldest first.
        var messages: [Message]
        /// The position of each message in ``messages``, by id; rebuilt on load, never stored.
        var messageIndex: [String: Int] = [:]

        private enum CodingKeys: String, CodingKey {
            case id, name, chatterIDs, messages
        }

        /// Creates a room with no members or messages.
        init(id: String, name: String) {
            self.id = id
            self.name = name
            self.chatterIDs = []
            self.messages = []
        }

        /// Appends a message and indexes it.
        mutating func append(_ message: Message) {
            messageIndex[message.id] = messages.count
            messages.append(message)
        }

        /// Rebuilds ``messageIndex`` from ``messages``.
        mutating func reindex() {
            messageIndex = [:]
            for (position, message) in messages.enumerated() { messageIndex[message.id] = position }
        }
    }

    /// One message of a room: a chat line, or the note that someone joined or left.
    struct Message: Codable, Sendable {
        /// The message's id (a UUID).
        var id: String
        /// `"chat"`, `"join"` or `"leave"`.
        var type: String
        /// The text of a chat line; `nil` for joins and leaves.
        var text: String?
        /// The id of the author.
        var authorID: String
        /// The author's name, as sent in `author`.
        var author: String
        /// When it was posted, in milliseconds since 1970 (UTC).
        var timestamp: Int64
    }

    /// Everything the store holds, as written to its data file.
    struct Snapshot: Codable, Sendable {
        /// The format written now: 2 (format 1 held API keys in plain text).
        static let currentFormat = 2

        /// The file format's version: 1 or 2.
        var format: Int
        /// Every user, in sign-up order.
        var users: [User]
        /// Every room, in creation order.
        var rooms: [Room]
    }
}

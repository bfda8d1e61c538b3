import CourierTLS

extension ChatStore {
    /// A registered user, as stored: never the password, only its salted PBKDF2 hash, and
    /// never an API key, only SHA-256 digests of its keys.
    struct User: Codable, Sendable, Equatable {
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

        /// Creates a user with one API key.
        init(id: String, name: String, passwordHash: String, apiKey: String) {
            self.id = id
            self.name = name
            self.passwordHash = passwordHash
            self.apiKeyDigests = [Self.digest(ofKey: apiKey)]
        }

        /// Reads a user from the data file. Format 3 holds `apiKeyDigests`; format 2 held one
        /// `apiKeyDigest`; format 1 held the key itself (`apiKey`), which is digested here.
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

        /// Writes the user for the data file (format 3): digests only, never a key.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            try container.encode(passwordHash, forKey: .passwordHash)
            try container.encode(apiKeyDigests, forKey: .apiKeyDigests)
        }

        /// The lowercase hex SHA-256 of an API key. Keys are random UUIDs (122 bits), so a
        /// fast digest is enough: nobody can guess a key from its digest.
        static func digest(ofKey key: String) -> String {
            Digest.sha256(Array(key.utf8)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }

        private enum CodingKeys: String, CodingKey { case id, name, passwordHash, apiKeyDigests, apiKeyDigest, apiKey }
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
        /// The format written now: 3 (several key digests per user; format 2 held one digest,
        /// format 1 one key in plain text).
        static let currentFormat = 3

        /// The file format's version: 1, 2 or 3.
        var format: Int
        /// Every user, in sign-up order.
        var users: [User]
        /// Every room, in creation order.
        var rooms: [Room]
    }
}

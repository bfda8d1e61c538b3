extension ChatStore {
    /// A registered user, as stored: never the password, only its salted PBKDF2 hash.
    struct User: Codable, Sendable, Equatable {
        /// The user's id (a UUID).
        var id: String
        /// The unique name.
        var name: String
        /// `pbkdf2-sha256$<iterations>$<salt>$<key>`, from CourierTLS's `PasswordHashing`.
        var passwordHash: String
        /// The key sent as `X-Magic-Auth`; replaced on sign-out and revocation.
        var apiKey: String
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
        /// The file format's version: 1.
        var format: Int
        /// Every user, in sign-up order.
        var users: [User]
        /// Every room, in creation order.
        var rooms: [Room]
    }
}

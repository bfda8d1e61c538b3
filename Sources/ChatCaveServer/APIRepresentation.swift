/// The JSON shapes of the ChatCave contract, as the server sends them.
enum APIRepresentation {
    /// `{"id", "name", "apiKey"}`; `apiKey` only when the user is the one asking.
    struct User: Encodable, Sendable {
        var id: String
        var name: String
        var apiKey: String?

        /// The user as shown: with `apiKey` only when it is given (to the user itself).
        init(_ user: StoredUser, apiKey: String?) {
            id = user.id
            name = user.name
            self.apiKey = apiKey
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            try container.encodeIfPresent(apiKey, forKey: .apiKey)
        }

        private enum CodingKeys: String, CodingKey { case id, name, apiKey }
    }

    /// A user inside a room: `{"id", "name"}`.
    struct Chatter: Encodable, Sendable, Equatable {
        var id: String
        var name: String
    }

    /// `{"id", "name", "chatters": [Chatter]}` (with the chatters' ids: a bug of the original, fixed).
    struct Room: Encodable, Sendable {
        var id: String
        var name: String
        var chatters: [Chatter]
    }

    /// `{"id", "type", "text", "author", "timestamp"}`; `text` is `null` for joins and leaves.
    struct Message: Encodable, Sendable {
        var id: String
        var type: String
        var text: String?
        var author: String
        var timestamp: String

        init(_ message: StoredMessage) {
            id = message.id
            type = message.type
            text = message.text
            author = message.author
            timestamp = ServerTimestamp.format(milliseconds: message.timestamp)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(type, forKey: .type)
            try container.encode(text, forKey: .text)  // an explicit null when absent
            try container.encode(author, forKey: .author)
            try container.encode(timestamp, forKey: .timestamp)
        }

        private enum CodingKeys: String, CodingKey { case id, type, text, author, timestamp }
    }

    /// The answer to a join: `{"users": [Chatter]}`.
    struct Members: Encodable, Sendable {
        var users: [Chatter]
    }

    /// `{}`.
    struct Empty: Encodable, Sendable {}
}

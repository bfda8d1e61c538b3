/// A chatroom: `{"id": "<uuid>", "name": "Lobby", "chatters": [Chatter]}`.
public struct Chatroom: Codable, Sendable, Hashable, Identifiable {
    /// The room's id.
    public var id: String
    /// The room's name, unique on its server.
    public var name: String
    /// Who is in the room, in the order they joined.
    public var chatters: [Chatter]

    /// Creates a chatroom.
    /// - Parameters:
    ///   - id: the room's id.
    ///   - name: its name.
    ///   - chatters: who is in it; nobody by default.
    public init(id: String, name: String, chatters: [Chatter] = []) {
        self.id = id
        self.name = name
        self.chatters = chatters
    }

    /// Decodes a room; a missing `chatters` list means nobody.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        chatters = try container.decodeIfPresent([Chatter].self, forKey: .chatters) ?? []
    }

    /// Reads a room from a JSON dictionary, as the original app did.
    /// - Parameter dictionary: `["id": String, "name": String, "chatters": [[String: Any]]]`.
    /// - Returns: `nil` when `id` or `name` is missing, or a chatter cannot be read.
    public init?(dictionary: [String: Any]) {
        guard let id = dictionary["id"] as? String, let name = dictionary["name"] as? String else { return nil }
        var chatters: [Chatter] = []
        for entry in dictionary["chatters"] as? [[String: Any]] ?? [] {
            guard let chatter = Chatter(dictionary: entry) else { return nil }
            chatters.append(chatter)
        }
        self.init(id: id, name: name, chatters: chatters)
    }

    /// The JSON dictionary form. ``init(dictionary:)`` reads it back.
    public var dictionaryRepresentation: [String: Any] {
        ["id": id, "name": name, "chatters": chatters.map(\.dictionaryRepresentation)]
    }

    private enum CodingKeys: String, CodingKey { case id, name, chatters }
}

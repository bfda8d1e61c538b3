import Foundation

/// One message of a chatroom:
/// `{"id": "<uuid>", "type": "chat", "text": "hi", "author": "alice", "timestamp": "2014-03-21T18:22:33.123Z"}`.
///
/// `author` is the author's **name**. `text` is `nil` for ``MessageType/join`` and
/// ``MessageType/leave``. The timestamp is kept to the millisecond, the precision the API
/// sends, so a message survives encoding and decoding unchanged.
public struct Message: Codable, Sendable, Hashable, Identifiable {
    /// The message's id; pass the last one seen as `since` to get only newer messages.
    public var id: String
    /// What kind of message it is.
    public var type: MessageType
    /// The text of a chat message; `nil` for joins and leaves.
    public var text: String?
    /// The author's name.
    public var author: String
    /// When it was posted (UTC), to the millisecond.
    public var timestamp: Date

    /// Creates a message.
    /// - Parameters:
    ///   - id: the message's id.
    ///   - type: its kind.
    ///   - text: its text; `nil` by default.
    ///   - author: the author's name.
    ///   - timestamp: when it was posted; rounded to the millisecond.
    public init(id: String, type: MessageType, text: String? = nil, author: String, timestamp: Date) {
        self.id = id
        self.type = type
        self.text = text
        self.author = author
        self.timestamp = ChatCaveTimestamp.rounded(timestamp)
    }

    /// Decodes a message. An unknown or missing `type` is ``MessageType/unknown``.
    /// - Throws: `DecodingError` when `id`, `author` or `timestamp` is missing or invalid.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        type = MessageType(serverValue: try? container.decodeIfPresent(String.self, forKey: .type))
        text = try container.decodeIfPresent(String.self, forKey: .text)
        author = try container.decode(String.self, forKey: .author)
        let stamp = try container.decode(String.self, forKey: .timestamp)
        guard let date = ChatCaveTimestamp.date(from: stamp) else {
            throw DecodingError.dataCorruptedError(forKey: .timestamp, in: container,
                                                   debugDescription: "'\(stamp.prefix(40))' is not an ISO 8601 timestamp")
        }
        timestamp = date
    }

    /// Encodes the API's shape: `text` is an explicit `null` when absent; the timestamp is
    /// ISO 8601 in UTC with milliseconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(text, forKey: .text)
        try container.encode(author, forKey: .author)
        try container.encode(ChatCaveTimestamp.string(from: timestamp), forKey: .timestamp)
    }

    /// Reads a message from a JSON dictionary, as the original app did.
    /// - Parameter dictionary: the API's shape; `text` may be `NSNull` or absent.
    /// - Returns: `nil` when `id`, `author` or `timestamp` is missing or invalid.
    public init?(dictionary: [String: Any]) {
        guard let id = dictionary["id"] as? String, let author = dictionary["author"] as? String,
              let stamp = dictionary["timestamp"] as? String, let date = ChatCaveTimestamp.date(from: stamp) else { return nil }
        self.init(id: id, type: MessageType(serverValue: dictionary["type"] as? String),
                  text: dictionary["text"] as? String, author: author, timestamp: date)
    }

    /// The JSON dictionary form (`text` is `NSNull()` when absent). ``init(dictionary:)`` reads it back.
    public var dictionaryRepresentation: [String: Any] {
        ["id": id, "type": type.rawValue, "text": text.map { $0 as Any } ?? NSNull(), "author": author,
         "timestamp": ChatCaveTimestamp.string(from: timestamp)]
    }

    private enum CodingKeys: String, CodingKey { case id, type, text, author, timestamp }
}

/// One message of a room, as a ``ChatStore`` keeps it: a chat line, or the note that someone
/// joined or left.
struct StoredMessage: Decodable, Sendable, Equatable {
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

    /// A new message with a fresh id, stamped now.
    /// - Parameters:
    ///   - type: `"chat"`, `"join"` or `"leave"`.
    ///   - text: the text of a chat line; `nil` for joins and leaves.
    ///   - author: the user who posted, joined or left.
    static func new(_ type: String, text: String? = nil, by author: StoredUser) -> StoredMessage {
        StoredMessage(id: UUIDText.make(), type: type, text: text, authorID: author.id, author: author.name,
                      timestamp: ServerTimestamp.now())
    }
}

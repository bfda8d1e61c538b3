/// Rooms, members and messages, in the `rooms`, `chatters` and `messages` tables.
extension SQLiteChatStore {
    func rooms() throws(APIError) -> [APIRepresentation.Room] {
        try read { connection in
            var rooms: [APIRepresentation.Room] = []
            let rows = try connection.query("""
                SELECT rooms.id, rooms.name, users.id, users.name FROM rooms
                    LEFT JOIN chatters ON chatters.room_id = rooms.id
                    LEFT JOIN users ON users.id = chatters.user_id
                    ORDER BY rooms.seq, chatters.seq
                """) { ($0.text(0) ?? "", $0.text(1) ?? "", $0.text(2), $0.text(3)) }
            for (roomID, roomName, userID, userName) in rows {
                if rooms.last?.id != roomID { rooms.append(APIRepresentation.Room(id: roomID, name: roomName, chatters: [])) }
                if let userID, let userName { rooms[rooms.count - 1].chatters.append(.init(id: userID, name: userName)) }
            }
            return rooms
        }
    }

    func room(id: String) throws(APIError) -> APIRepresentation.Room {
        try read { connection in try Self.existingRoom(id, connection) }
    }

    func createRoom(named rawName: String?) throws(APIError) -> APIRepresentation.Room {
        let name = try TextRules.name(rawName, what: "Room name")
        let key = TextRules.nameKey(name)
        let id = UUIDText.make()
        try write { connection in
            guard try connection.query("SELECT 1 FROM rooms WHERE name_key = ?1", [.text(key)], row: { _ in true }).isEmpty else {
                throw APIError.rejected("A room named '\(name)' already exists")
            }
            try connection.run("INSERT INTO rooms (id, name, name_key) VALUES (?1, ?2, ?3)", [.text(id), .text(name), .text(key)])
        }
        return APIRepresentation.Room(id: id, name: name, chatters: [])
    }

    func deleteRoom(id: String) throws(APIError) {
        try write { connection in
            let room = try Self.existingRoom(id, connection)
            guard room.chatters.isEmpty else { throw APIError.rejected("The room '\(room.name)' still has chatters") }
            try connection.run("DELETE FROM chatters WHERE room_id = ?1", [.text(id)])
            try connection.run("DELETE FROM messages WHERE room_id = ?1", [.text(id)])
            try connection.run("DELETE FROM rooms WHERE id = ?1", [.text(id)])
        }
    }

    func join(roomID: String, userID: String, requesterID: String) throws(APIError) -> [APIRepresentation.Chatter] {
        try write { connection in
            try Self.requireRoom(roomID, connection)
            let user = try Self.existingUser(userID, connection)
            guard user.id == requesterID else { throw APIError.forbidden("You can only join a room as yourself") }
            if try !Self.isMember(user.id, of: roomID, connection) {
                try connection.run("INSERT INTO chatters (room_id, user_id) VALUES (?1, ?2)", [.text(roomID), .text(user.id)])
                try Self.insert(.new("join", by: user), roomID: roomID, connection)
            }
            return try Self.members(roomID, connection)
        }
    }

    func leave(roomID: String, userID: String, requesterID: String) throws(APIError) {
        try write { connection in
            try Self.requireRoom(roomID, connection)
            let user = try Self.existingUser(userID, connection)
            guard user.id == requesterID else { throw APIError.forbidden("You can only leave a room as yourself") }
            guard try Self.isMember(user.id, of: roomID, connection) else {
                throw APIError.notFound("User \(user.name) is not in this chatroom")
            }
            try connection.run("DELETE FROM chatters WHERE room_id = ?1 AND user_id = ?2", [.text(roomID), .text(user.id)])
            try Self.insert(.new("leave", by: user), roomID: roomID, connection)
        }
    }

    func messages(roomID: String, since: String?) throws(APIError) -> [APIRepresentation.Message] {
        try read { connection in
            try Self.requireRoom(roomID, connection)
            return try connection.query(Self.messagesSince, [.text(roomID), .optional(since)]) { row in
                APIRepresentation.Message(StoredMessage(id: row.text(0) ?? "", type: row.text(1) ?? "", text: row.text(2), authorID: "",
                                                        author: row.text(3) ?? "", timestamp: row.integer(4)))
            }
        }
    }

    func post(roomID: String, authorID: String, text: String?) throws(APIError) -> APIRepresentation.Message {
        let message = try write { connection -> StoredMessage in
            try Self.requireRoom(roomID, connection)
            let author = try Self.existingUser(authorID, connection)
            guard try Self.isMember(author.id, of: roomID, connection) else {
                throw APIError.rejected("User \(author.name) is not a member of this chatroom")
            }
            let message = StoredMessage.new("chat", text: try TextRules.messageText(text), by: author)
            try Self.insert(message, roomID: roomID, connection)
            return message
        }
        return APIRepresentation.Message(message)
    }

    // MARK: - Statements (called under the lock)

    /// The messages of room `?1` after message `?2` (all of them when `?2` is `NULL` or not a
    /// message of the room), oldest first. The message `?2` is found through the unique index
    /// on `id`, the newer ones through `messages_by_room (room_id, seq)`: only what is returned
    /// is read, O(log n + k).
    static let messagesSince = """
        SELECT id, type, text, author, timestamp FROM messages
            WHERE room_id = ?1
            AND seq > coalesce((SELECT seq FROM messages WHERE id = ?2 AND room_id = ?1), 0)
            ORDER BY seq
        """

    /// Appends a message to a room.
    static func insert(_ message: StoredMessage, roomID: String, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run("""
            INSERT INTO messages (id, room_id, type, text, author_id, author, timestamp) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """, [.text(message.id), .text(roomID), .text(message.type), .optional(message.text), .text(message.authorID),
                  .text(message.author), .integer(message.timestamp)])
    }

    private static func existingRoom(_ id: String, _ connection: SQLiteConnection) throws -> APIRepresentation.Room {
        guard let name = try connection.query("SELECT name FROM rooms WHERE id = ?1", [.text(id)], row: { $0.text(0) ?? "" }).first else {
            throw APIError.notFound("No room exists with ID '\(id.prefix(100))'")
        }
        return APIRepresentation.Room(id: id, name: name, chatters: try members(id, connection))
    }

    private static func requireRoom(_ id: String, _ connection: SQLiteConnection) throws {
        guard try !connection.query("SELECT 1 FROM rooms WHERE id = ?1", [.text(id)], row: { _ in true }).isEmpty else {
            throw APIError.notFound("No room exists with ID '\(id.prefix(100))'")
        }
    }

    private static func isMember(_ userID: String, of roomID: String, _ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        try !connection.query("SELECT 1 FROM chatters WHERE room_id = ?1 AND user_id = ?2", [.text(roomID), .text(userID)],
                              row: { _ in true }).isEmpty
    }

    private static func members(_ roomID: String, _ connection: SQLiteConnection) throws(SQLiteError) -> [APIRepresentation.Chatter] {
        try connection.query("""
            SELECT users.id, users.name FROM chatters JOIN users ON users.id = chatters.user_id
                WHERE chatters.room_id = ?1 ORDER BY chatters.seq
            """, [.text(roomID)]) { APIRepresentation.Chatter(id: $0.text(0) ?? "", name: $0.text(1) ?? "") }
    }
}

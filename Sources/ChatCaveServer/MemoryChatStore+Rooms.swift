/// Rooms, members and messages, in memory.
extension MemoryChatStore {
    /// Every room, in creation order.
    func rooms() -> [APIRepresentation.Room] {
        state.withLock { state in state.roomOrder.compactMap { state.rooms[$0].map { Self.view($0, state) } } }
    }

    /// Creates a room.
    /// - Parameter rawName: the requested name.
    /// - Returns: the new, empty room.
    /// - Throws: 406 for an empty or invalid name, or one that another room has (compared as
    ///   ``TextRules/nameKey(_:)``); 500 when the change cannot be saved.
    func createRoom(named rawName: String?) throws(APIError) -> APIRepresentation.Room {
        let name = try TextRules.name(rawName, what: "Room name")
        let key = TextRules.nameKey(name)
        let room = Room(id: UUIDText.make(), name: name)
        try change { state throws(APIError) in
            guard !state.rooms.values.contains(where: { TextRules.nameKey($0.name) == key }) else {
                throw .rejected("A room named '\(name)' already exists")
            }
            state.rooms[room.id] = room
            state.roomOrder.append(room.id)
        }
        return APIRepresentation.Room(id: room.id, name: room.name, chatters: [])
    }

    /// One room.
    /// - Throws: 404 when there is no such room.
    func room(id: String) throws(APIError) -> APIRepresentation.Room {
        try state.withLock { state throws(APIError) in Self.view(try Self.existingRoom(id, state), state) }
    }

    /// Deletes one room — only that one.
    /// - Throws: 404 when there is no such room; 406 while it still has chatters; 500 when the
    ///   change cannot be saved.
    func deleteRoom(id: String) throws(APIError) {
        try change { state throws(APIError) in
            let room = try Self.existingRoom(id, state)
            guard room.chatterIDs.isEmpty else {
                throw .rejected("The room '\(room.name)' still has chatters")
            }
            state.rooms.removeValue(forKey: id)
            state.roomOrder.removeAll { $0 == id }
        }
    }

    /// Adds a user to a room and posts a `join` message; joining again changes nothing.
    /// - Parameters:
    ///   - roomID: the room.
    ///   - userID: the user, who must be the one asking.
    ///   - requesterID: the authenticated user.
    /// - Returns: the members after joining.
    /// - Throws: 404 for an unknown room or user; 403 when `userID` is someone else; 500 when
    ///   the change cannot be saved.
    func join(roomID: String, userID: String, requesterID: String) throws(APIError) -> [APIRepresentation.Chatter] {
        try change { state throws(APIError) -> [APIRepresentation.Chatter] in
            try Self.requireRoom(roomID, state)
            let user = try Self.existingUser(userID, state)
            guard user.id == requesterID else { throw .forbidden("You can only join a room as yourself") }
            // The room is changed through `state.rooms`, never through a local copy of it, so that
            // its messages are not copied.
            if state.rooms[roomID]?.chatterIDs.contains(user.id) == true { return Self.members(roomID, state) }
            state.rooms[roomID]?.chatterIDs.append(user.id)
            state.rooms[roomID]?.append(.new("join", by: user))
            return Self.members(roomID, state)
        }
    }

    /// Removes a user from a room and posts a `leave` message.
    /// - Throws: 404 for an unknown room or user, or a user who is not in the room;
    ///   403 when `userID` is someone else; 500 when the change cannot be saved.
    func leave(roomID: String, userID: String, requesterID: String) throws(APIError) {
        try change { state throws(APIError) in
            try Self.requireRoom(roomID, state)
            let user = try Self.existingUser(userID, state)
            guard user.id == requesterID else { throw .forbidden("You can only leave a room as yourself") }
            guard let position = state.rooms[roomID]?.chatterIDs.firstIndex(of: user.id) else {
                throw .notFound("User \(user.name) is not in this chatroom")
            }
            state.rooms[roomID]?.chatterIDs.remove(at: position)
            state.rooms[roomID]?.append(.new("leave", by: user))
        }
    }

    /// The messages of a room, oldest first: all of them, or those after `since`.
    /// - Parameters:
    ///   - roomID: the room.
    ///   - since: a message id; only later messages are returned. `nil` or an unknown id: all.
    /// - Throws: 404 when there is no such room.
    func messages(roomID: String, since: String?) throws(APIError) -> [APIRepresentation.Message] {
        try state.withLock { state throws(APIError) in
            let room = try Self.existingRoom(roomID, state)
            let start = since.flatMap { room.messageIndex[$0] }.map { $0 + 1 } ?? 0
            return room.messages[min(start, room.messages.count)...].map(APIRepresentation.Message.init)
        }
    }

    /// Posts a chat message as `authorID`.
    /// - Returns: the message.
    /// - Throws: 404 for an unknown room; 406 when the author is not a member or the text is
    ///   empty, too long or holds control or format characters (see ``TextRules``); 500 when
    ///   the change cannot be saved.
    func post(roomID: String, authorID: String, text: String?) throws(APIError) -> APIRepresentation.Message {
        let message = try change { state throws(APIError) -> StoredMessage in
            try Self.requireRoom(roomID, state)
            let author = try Self.existingUser(authorID, state)
            guard state.rooms[roomID]?.chatterIDs.contains(author.id) == true else {
                throw .rejected("User \(author.name) is not a member of this chatroom")
            }
            let text = try TextRules.messageText(text)
            let message = StoredMessage.new("chat", text: text, by: author)
            state.rooms[roomID]?.append(message)
            return message
        }
        return APIRepresentation.Message(message)
    }

    // MARK: - Helpers (called under the lock)

    private static func existingRoom(_ id: String, _ state: State) throws(APIError) -> Room {
        guard let room = state.rooms[id] else { throw .notFound("No room exists with ID '\(id.prefix(100))'") }
        return room
    }

    private static func requireRoom(_ id: String, _ state: State) throws(APIError) {
        guard state.rooms[id] != nil else { throw .notFound("No room exists with ID '\(id.prefix(100))'") }
    }

    private static func members(_ roomID: String, _ state: State) -> [APIRepresentation.Chatter] {
        (state.rooms[roomID]?.chatterIDs ?? []).compactMap { id in
            state.users[id].map { APIRepresentation.Chatter(id: $0.id, name: $0.name) }
        }
    }

    private static func existingUser(_ id: String, _ state: State) throws(APIError) -> StoredUser {
        guard let user = state.users[id] else { throw .notFound("No user exists with ID '\(id.prefix(100))'") }
        return user
    }

    private static func view(_ room: Room, _ state: State) -> APIRepresentation.Room {
        let chatters = room.chatterIDs.compactMap { id in state.users[id].map { APIRepresentation.Chatter(id: $0.id, name: $0.name) } }
        return APIRepresentation.Room(id: room.id, name: room.name, chatters: chatters)
    }
}

import Courier
import Foundation

/// Chatrooms and their chatters (`async` style).
extension ChatCaveService {
    /// Every chatroom, with its chatters.
    public func fetchChatrooms() async throws(ChatCaveError) -> [Chatroom] {
        try decode([Chatroom].self, from: try await send(HTTPRequest(.get, "/rooms")))
    }

    /// Creates a chatroom.
    /// - Parameter name: its name, unique on the server.
    /// - Returns: the new, empty room.
    /// - Throws: ``ChatCaveError/rejected(_:)`` for an empty name or one already in use.
    public func createChatroom(named name: String) async throws(ChatCaveError) -> Chatroom {
        let response = try await send(HTTPRequest(.post, "/rooms", body: .form(["room[name]": name])))
        return try decode(Chatroom.self, from: response)
    }

    /// One chatroom.
    /// - Throws: ``ChatCaveError/notFound`` when there is no such room.
    public func fetchChatroom(id: String) async throws(ChatCaveError) -> Chatroom {
        try decode(Chatroom.self, from: try await send(HTTPRequest(.get, "/rooms/" + Self.segment(id))))
    }

    /// Deletes a chatroom, which must be empty.
    /// - Returns: the chatrooms that remain.
    /// - Throws: ``ChatCaveError/notFound`` when there is no such room;
    ///   ``ChatCaveError/rejected(_:)`` while it still has chatters.
    @discardableResult
    public func deleteChatroom(id: String) async throws(ChatCaveError) -> [Chatroom] {
        var request = HTTPRequest(.delete, "/rooms/" + Self.segment(id))
        // The server answers 302 to /rooms, meaning "now look at the list": follow it with a GET.
        request.redirectPolicy = .follow(limit: 3) { hop in
            guard hop.request.method != .get else { return .follow }
            var next = hop.request
            next.method = .get
            next.body = Data()
            next.headers.remove("Content-Type")
            return .followWith(next)
        }
        return try decode([Chatroom].self, from: try await send(request))
    }

    /// Joins a chatroom as the signed-in user (joining twice changes nothing).
    /// - Parameter id: the room's id.
    /// - Returns: the room's chatters, the user included.
    /// - Throws: ``ChatCaveError/notAuthorized`` when nobody is signed in;
    ///   ``ChatCaveError/notFound`` when there is no such room.
    @discardableResult
    public func join(id: String) async throws(ChatCaveError) -> [Chatter] {
        struct Members: Decodable { var users: [Chatter] }
        let path = "/rooms/\(Self.segment(id))/chatters/\(Self.segment(try currentUserID()))"
        return try decode(Members.self, from: try await send(HTTPRequest(.put, path))).users
    }

    /// Leaves a chatroom as the signed-in user.
    /// - Parameter id: the room's id.
    /// - Throws: ``ChatCaveError/notFound`` when there is no such room or the user is not in it.
    public func leave(id: String) async throws(ChatCaveError) {
        let path = "/rooms/\(Self.segment(id))/chatters/\(Self.segment(try currentUserID()))"
        _ = try await send(HTTPRequest(.delete, path))
    }

    /// The chatters of a room, in the order they joined.
    /// - Parameter roomID: the room's id.
    /// - Throws: ``ChatCaveError/notFound`` when there is no such room.
    public func fetchChatters(in roomID: String) async throws(ChatCaveError) -> [Chatter] {
        try decode([Chatter].self, from: try await send(HTTPRequest(.get, "/rooms/\(Self.segment(roomID))/chatters")))
    }
}

/// What `GET /` answers to JSON clients: a description of the API (browsers get ``WebApp/page``).
extension ChatCaveAPI {
    /// The JSON description of the API.
    struct Description: Encodable, Sendable {
        var name = "ChatCave"
        var authentication = [
            "Authorization: Basic base64(name:password)",
            "X-Magic-Auth: <apiKey from sign-up or sign-in>",
        ]
        var routes = [
            "POST /users (open): user[name], user[password] -> 201 User",
            "PUT /account (open): user[name], user[password] -> 201 User",
            "DELETE /account -> 200 {}",
            "GET /users -> 200 [User]",
            "GET /users/:id -> 200 User",
            "GET /rooms -> 200 [Room]",
            "POST /rooms: room[name] -> 201 Room",
            "GET /rooms/:room_id -> 200 Room",
            "DELETE /rooms/:room_id -> 302 Location: /rooms",
            "GET /rooms/:room_id/chatters -> 200 [Chatter]",
            "PUT /rooms/:room_id/chatters/:user_id -> 201 {\"users\": [Chatter]}",
            "DELETE /rooms/:room_id/chatters/:user_id -> 200 {}",
            "GET /rooms/:room_id/messages[?since=<message id>] -> 200 [Message]",
            "POST /rooms/:room_id/messages: message[text] -> 201 Message",
        ]
    }

    /// The description `GET /` sends as JSON.
    static let description = Description()
}

import Courier

/// Messages (`async` style) and pollers.
extension ChatCaveService {
    /// The messages of a room, oldest first.
    /// - Parameters:
    ///   - roomID: the room's id.
    ///   - since: the id of the last message already seen: only later ones are returned.
    ///     `nil` (the default), or an id the server does not know, returns them all.
    /// - Throws: ``ChatCaveError/notFound`` when there is no such room.
    public func fetchMessages(for roomID: String, since: String? = nil) async throws(ChatCaveError) -> [Message] {
        let query = since.map { [HTTPRequest.QueryItem("since", $0)] } ?? []
        return try decode([Message].self, from: try await send(HTTPRequest(.get, "/rooms/\(Self.segment(roomID))/messages",
                                                                           query: query)))
    }

    /// Posts a message as the signed-in user.
    /// - Parameters:
    ///   - text: the text.
    ///   - roomID: the room's id.
    /// - Returns: the message as stored.
    /// - Throws: ``ChatCaveError/notFound`` when there is no such room;
    ///   ``ChatCaveError/rejected(_:)`` when the user is not in it or the text is empty.
    @discardableResult
    public func postMessage(text: String, to roomID: String) async throws(ChatCaveError) -> Message {
        let request = HTTPRequest(.post, "/rooms/\(Self.segment(roomID))/messages", body: .form(["message[text]": text]))
        return try decode(Message.self, from: try await send(request))
    }

    /// A poller for a room's new messages; see ``MessagePoller``. Call ``MessagePoller/start(onMessages:onError:)``.
    /// - Parameters:
    ///   - roomID: the room's id.
    ///   - since: the last message already seen; `nil` (the default) starts with the whole history.
    ///   - interval: the pause between polls; 1.5 seconds by default.
    /// - Returns: the poller, stopped until started.
    public func makePoller(for roomID: String, since: String? = nil, interval: Duration = .milliseconds(1_500)) -> MessagePoller {
        MessagePoller(service: self, roomID: roomID, since: since, interval: interval)
    }
}

/// Where the ChatCave server keeps users, rooms and messages: the routes (``ChatCaveAPI``,
/// ``CredentialVerifier``) speak only to this protocol.
///
/// Two stores implement it: ``MemoryChatStore`` (memory only: tests, the demo, a server without
/// a data directory) and ``SQLiteChatStore`` (an SQLite file in the data directory). Another
/// (a networked database) needs only these requirements; the API-key rules on top of them are
/// shared (``ChatStore`` extension in `ChatStore+Keys.swift`).
///
/// The contract of every change: it checks everything first and throws (the contract's 403,
/// 404 or 406) before it changes anything; it returns only once the change is durable as the
/// store promises (committed, for SQLite); when it cannot be saved it throws
/// ``APIError/notSaved`` (500) and changes nothing. A read that fails in the store throws
/// ``APIError/storeFailed`` (500). Stores are called from many request threads at once.
protocol ChatStore: AnyObject, Sendable {
    /// The last API key each user presented or was given, in memory only (never stored).
    var rememberedKeys: RememberedAPIKeys { get }

    // MARK: Users

    /// Whether a user has this name (compared as ``TextRules/nameKey(_:)``).
    func nameIsTaken(_ name: String) throws(APIError) -> Bool
    /// Adds a user.
    /// - Throws: 406 when a user has its name (compared as ``TextRules/nameKey(_:)``); 500.
    func insert(_ user: StoredUser) throws(APIError)
    /// The user with this id, or `nil`.
    func user(id: String) throws(APIError) -> StoredUser?
    /// The first user (in sign-up order) with this name, compared as ``TextRules/nameKey(_:)``.
    func user(named name: String) throws(APIError) -> StoredUser?
    /// The user holding an API key with this ``StoredUser/digest(ofKey:)``, or `nil`.
    func user(keyDigest: String) throws(APIError) -> StoredUser?
    /// Every user, in sign-up order.
    func allUsers() throws(APIError) -> [StoredUser]
    /// Gives a user one more API key; beyond ``StoredUser/maxAPIKeys`` the oldest is retired.
    /// - Throws: 404 when there is no such user; 500.
    func addKeyDigest(_ digest: String, userID: String) throws(APIError)
    /// Retires one API key of a user (`digest`), or all of them (`nil`).
    /// - Throws: 404 when there is no such user; 500.
    func removeKeyDigests(_ digest: String?, userID: String) throws(APIError)

    // MARK: Rooms and messages

    /// Every room, in creation order.
    func rooms() throws(APIError) -> [APIRepresentation.Room]
    /// One room.
    /// - Throws: 404 when there is no such room.
    func room(id: String) throws(APIError) -> APIRepresentation.Room
    /// Creates a room.
    /// - Throws: 406 for an invalid name or one that another room has; 500.
    func createRoom(named rawName: String?) throws(APIError) -> APIRepresentation.Room
    /// Deletes one room and its messages.
    /// - Throws: 404 when there is no such room; 406 while it has chatters; 500.
    func deleteRoom(id: String) throws(APIError)
    /// Adds `userID` to a room with a `join` message; joining again changes nothing.
    /// - Returns: the members after joining.
    /// - Throws: 404 for an unknown room or user; 403 when `userID` is not `requesterID`; 500.
    func join(roomID: String, userID: String, requesterID: String) throws(APIError) -> [APIRepresentation.Chatter]
    /// Removes `userID` from a room with a `leave` message.
    /// - Throws: 404 for an unknown room or user, or a user not in the room; 403 when `userID`
    ///   is not `requesterID`; 500.
    func leave(roomID: String, userID: String, requesterID: String) throws(APIError)
    /// The messages of a room in posting order: all of them, or those after the message `since`
    /// (all of them when `since` is `nil` or not a message of this room).
    /// - Throws: 404 when there is no such room.
    func messages(roomID: String, since: String?) throws(APIError) -> [APIRepresentation.Message]
    /// Posts a chat line as `authorID`.
    /// - Throws: 404 for an unknown room; 406 when the author is not a member or the text is
    ///   refused by ``TextRules/messageText(_:)``; 500.
    func post(roomID: String, authorID: String, text: String?) throws(APIError) -> APIRepresentation.Message
}

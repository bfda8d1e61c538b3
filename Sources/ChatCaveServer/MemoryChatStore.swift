import Synchronization

/// A ``ChatStore`` in memory only: the store of a server without a data directory (tests, the
/// demo). Everything is lost when the server stops.
///
/// The whole state sits behind one lock; every read and every change takes it once, briefly.
/// A change checks everything before it writes, so what it throws leaves the state as it was.
/// A post appends to its room in place, so it costs the same however long the room's history is.
final class MemoryChatStore: ChatStore {
    /// Everything the store holds, with its indexes.
    struct State: Sendable {
        var users: [String: StoredUser] = [:]
        var userOrder: [String] = []
        /// User ids by ``TextRules/nameKey(_:)`` of their names.
        var userIDByName: [String: String] = [:]
        /// User ids by ``StoredUser/digest(ofKey:)`` of each of their API keys.
        var userIDByKey: [String: String] = [:]
        var rooms: [String: Room] = [:]
        var roomOrder: [String] = []
    }

    /// A room with its members and its messages in the order they were posted.
    struct Room: Sendable {
        /// The room's id (a UUID).
        var id: String
        /// The unique name.
        var name: String
        /// The ids of the members, in the order they joined.
        var chatterIDs: [String] = []
        /// The messages, oldest first.
        var messages: [StoredMessage] = []
        /// The position of each message in ``messages``, by id.
        var messageIndex: [String: Int] = [:]

        /// Appends a message and indexes it.
        mutating func append(_ message: StoredMessage) {
            messageIndex[message.id] = messages.count
            messages.append(message)
        }
    }

    /// The data, behind the one lock.
    let state = Mutex(State())
    let rememberedKeys = RememberedAPIKeys()

    /// Creates an empty store.
    init() {}

    /// Applies one change in place, under the lock.
    /// - Parameter body: the change; it must throw (if it throws) before its first write.
    /// - Returns: what `body` returned.
    func change<Value: Sendable>(_ body: (inout State) throws(APIError) -> Value) throws(APIError) -> Value {
        try state.withLock { state throws(APIError) in try body(&state) }
    }
}

import Foundation

/// What a ChatCave server must hold, as far as one test's clients know it: the users, rooms,
/// members and messages whose changes were acknowledged (a 2xx, or the 302 of a room's
/// deletion), the API keys each user holds, and the changes of the last burst whose answers may
/// have been lost to a kill (``Pending``).
///
/// Between kills the conversation is sequential, so the model knows every list in its exact
/// order. After a restart the ``settle(users:)`` family compares what the server lists with the
/// model: what the model holds comes first, exactly and in order (minus what a pending change
/// removed); after it, only what a pending change added, every acknowledged one present and
/// none twice. The model then takes the server's order and forgets the pending changes.
struct DurabilityModel {
    /// A user: its id, the password it signs in with, and the keys it holds.
    struct User {
        var id: String
        var name: String
        var password: String
        /// The loopback address its requests come from.
        var address: String
        /// The API keys that must work, oldest first.
        var keys: [String]
        /// Keys signed out: they must get 401.
        var retiredKeys: [String] = []
        /// Keys issued whose answer was lost (they count toward the server's 16).
        var unseenKeys = 0
        /// Wrong-password sign-ins so far (the server throttles after five per name and address).
        var wrongPasswords = 0
        /// Keys the user holds on the server, known or not.
        var keysOnServer: Int { keys.count + unseenKeys }
    }

    /// A message of a room; `id` is `nil` for a join or leave whose id the model has not read yet.
    struct Message {
        var id: String?
        var type: String
        var text: String?
        var author: String
    }

    /// A room, its members (user ids, in joining order) and its messages (in posting order).
    struct Room {
        var id: String
        var name: String
        var members: [String] = []
        var messages: [Message] = []
    }

    /// A change sent in the burst before a kill, and whether its answer arrived.
    struct Pending {
        enum Change {
            case signUp(name: String, password: String, address: String)
            case signIn(userID: String)
            case signOut(userID: String, key: String)
            case createRoom(name: String)
            case deleteRoom(roomID: String)
            case join(roomID: String, userID: String)
            case leave(roomID: String, userID: String)
            case post(roomID: String, userID: String, text: String)
            /// A post the server must refuse (too long, a control character), answered or not.
            case refusedPost(roomID: String, userID: String, text: String)
        }

        var change: Change
        /// The id the acknowledgement carried (a user's, a room's, a message's); `nil` when the
        /// answer was lost.
        var acknowledgedID: String?
        /// The key a sign-up or sign-in acknowledged.
        var acknowledgedKey: String?
        /// Whether a 2xx (or a deletion's 302) arrived.
        var acknowledged: Bool
    }

    var users: [User] = []
    var rooms: [Room] = []
    /// The key the server remembers for each user since it started: the last one presented or issued.
    var remembered: [String: String] = [:]
    /// The burst of the last kill, to be settled after the restart.
    var pending: [Pending] = []
    /// How many changes whose answer was lost turned out to be stored (users, rooms, messages),
    /// to show that the conversation does reach the uncertain cases.
    var lostButStored = 0

    /// The index of a user by id.
    func userIndex(_ id: String) -> Int? { users.firstIndex { $0.id == id } }
    /// The index of a room by id.
    func roomIndex(_ id: String) -> Int? { rooms.firstIndex { $0.id == id } }

    /// Records that `key` authenticated a request of user `userID` (the server remembers it).
    mutating func presented(_ key: String, userID: String) {
        remembered[userID] = key
    }

    /// Forgets every remembered key, as a restart does.
    mutating func restarted() {
        remembered = [:]
    }

    // MARK: - Settling after a restart

    /// Compares the server's users (`GET /users`, in sign-up order) with the model and takes
    /// them in, with the pending sign-ups that were made.
    /// - Returns: what disagrees, in words.
    mutating func settle(users observed: [(id: String, name: String)]) -> [String] {
        var problems: [String] = []
        let known = users.count
        guard observed.count >= known,
              zip(observed.prefix(known), users).allSatisfy({ $0.id == $1.id && $0.name == $1.name }) else {
            return ["users: expected \(users.map(\.name)) first, in sign-up order; the server lists \(observed.map(\.name))"]
        }
        var signUps: [String: (password: String, address: String, id: String?, key: String?, acknowledged: Bool)] = [:]
        for item in pending {
            if case .signUp(let name, let password, let address) = item.change {
                signUps[name] = (password, address, item.acknowledgedID, item.acknowledgedKey, item.acknowledged)
            }
        }
        var seen = Set<String>()
        for user in observed.dropFirst(known) {
            guard let signUp = signUps[user.name], seen.insert(user.name).inserted else {
                problems.append("users: the server lists \(user.name), which no sign-up made (or twice)")
                continue
            }
            if let id = signUp.id, id != user.id { problems.append("users: \(user.name) has id \(user.id), not the acknowledged \(id)") }
            if !signUp.acknowledged { lostButStored += 1 }
            users.append(User(id: user.id, name: user.name, password: signUp.password, address: signUp.address,
                              keys: signUp.key.map { [$0] } ?? [], unseenKeys: signUp.key == nil ? 1 : 0))
        }
        for (name, signUp) in signUps where signUp.acknowledged && !seen.contains(name) {
            problems.append("users: the acknowledged sign-up of \(name) is gone")
        }
        return problems
    }

    /// Compares the server's rooms (`GET /rooms`: ids, names and chatters, in creation order)
    /// with the model and takes them in, with the pending changes to rooms and members.
    /// - Returns: what disagrees, in words.
    mutating func settle(rooms observed: [(id: String, name: String, members: [String])]) -> [String] {
        var problems: [String] = []
        var deleted: [String: Bool] = [:]  // room id → acknowledged
        var created: [String: (id: String?, acknowledged: Bool)] = [:]
        var joins: [String: [String: Bool]] = [:], leaves: [String: [String: Bool]] = [:]
        for item in pending {
            switch item.change {
            case .deleteRoom(let roomID): deleted[roomID] = item.acknowledged
            case .createRoom(let name): created[name] = (item.acknowledgedID, item.acknowledged)
            case .join(let roomID, let userID): joins[roomID, default: [:]][userID] = item.acknowledged
            case .leave(let roomID, let userID): leaves[roomID, default: [:]][userID] = item.acknowledged
            default: break
            }
        }
        let observedByID = Dictionary(observed.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        if observedByID.count != observed.count { problems.append("rooms: the server lists a room twice: \(observed.map(\.name))") }
        // The model's rooms, minus those deleted, come first and in order.
        let kept = rooms.filter { room in
            guard let acknowledged = deleted[room.id] else { return true }
            if acknowledged { return false }
            return observedByID[room.id] != nil
        }
        guard observed.count >= kept.count, zip(observed.prefix(kept.count), kept).allSatisfy({ $0.id == $1.id && $0.name == $1.name }) else {
            return problems + ["rooms: expected \(kept.map(\.name)) first, in creation order; the server lists \(observed.map(\.name))"]
        }
        var settled: [Room] = []
        for var room in kept {
            let members = observedByID[room.id]?.members ?? []
            problems += Self.settleTail(what: "chatters of \(room.name)", model: room.members, observed: members,
                                        removed: leaves[room.id] ?? [:], added: joins[room.id] ?? [:])
            room.members = members
            settled.append(room)
        }
        var seen = Set<String>()
        for room in observed.dropFirst(kept.count) {
            guard let creation = created[room.name], seen.insert(room.name).inserted else {
                problems.append("rooms: the server lists \(room.name), which no creation made (or twice)")
                continue
            }
            if let id = creation.id, id != room.id { problems.append("rooms: \(room.name) has id \(room.id), not the acknowledged \(id)") }
            if !room.members.isEmpty { problems.append("rooms: the new room \(room.name) has chatters \(room.members)") }
            if !creation.acknowledged { lostButStored += 1 }
            settled.append(Room(id: room.id, name: room.name))
        }
        for (name, creation) in created where creation.acknowledged && !seen.contains(name) {
            problems.append("rooms: the acknowledged room \(name) is gone")
        }
        rooms = settled
        return problems
    }

    /// Compares one list of ids with the model's: the model's (minus those a pending change
    /// removed: certainly when acknowledged, perhaps when not) first and in order, then only
    /// ids a pending change added (every acknowledged one), none twice.
    static func settleTail(what: String, model: [String], observed: [String], removed: [String: Bool], added: [String: Bool]) -> [String] {
        let present = Set(observed)
        let kept = model.filter { id in removed[id].map { !$0 && present.contains(id) } ?? true }
        guard observed.count >= kept.count, Array(observed.prefix(kept.count)) == kept else {
            return ["\(what): expected \(kept) first; the server lists \(observed)"]
        }
        var problems: [String] = []
        let tail = Array(observed.dropFirst(kept.count))
        if Set(tail).count != tail.count || !Set(tail).isSubset(of: Set(added.keys)) {
            problems.append("\(what): after \(kept) the server lists \(tail); only \(added.keys.sorted()) may follow, once each")
        }
        for (id, acknowledged) in added where acknowledged && !present.contains(id) {
            problems.append("\(what): the acknowledged \(id) is missing")
        }
        return problems
    }

    /// Compares the server's messages of a room (in posting order) with the model and takes
    /// them in: the model's messages exactly (ids it knows, types, authors, texts byte for byte),
    /// then only messages of pending changes to this room (every acknowledged one), none twice;
    /// never a refused post.
    /// - Returns: what disagrees, in words.
    mutating func settle(messages observed: [Message], roomIndex index: Int) -> [String] {
        let room = rooms[index]
        var problems: [String] = []
        let ids = observed.compactMap(\.id)
        if Set(ids).count != ids.count { problems.append("messages of \(room.name): an id is listed twice") }
        guard observed.count >= room.messages.count else {
            return ["messages of \(room.name): \(room.messages.count) expected, the server has \(observed.count)"]
        }
        var settled = room.messages
        for (offset, (expected, actual)) in zip(room.messages, observed).enumerated() where !Self.same(expected, actual) {
            problems.append("messages of \(room.name) #\(offset): expected \(Self.describe(expected)), the server has \(Self.describe(actual))")
        }
        if !problems.isEmpty { return problems }
        for offset in settled.indices { settled[offset].id = observed[offset].id }
        // What may follow: the pending changes' messages, by (type, author, text).
        var candidates: [(message: Message, acknowledgedID: String?, acknowledged: Bool, refused: Bool)] = []
        for item in pending {
            switch item.change {
            case .post(let roomID, let userID, let text) where roomID == room.id:
                candidates.append((Message(type: "chat", text: text, author: name(of: userID)), item.acknowledgedID, item.acknowledged, false))
            case .refusedPost(let roomID, let userID, let text) where roomID == room.id:
                candidates.append((Message(type: "chat", text: text, author: name(of: userID)), nil, false, true))
            case .join(let roomID, let userID) where roomID == room.id:
                candidates.append((Message(type: "join", author: name(of: userID)), nil, item.acknowledged, false))
            case .leave(let roomID, let userID) where roomID == room.id:
                candidates.append((Message(type: "leave", author: name(of: userID)), nil, item.acknowledged, false))
            default: break
            }
        }
        var used = Set<Int>()
        for actual in observed.dropFirst(room.messages.count) {
            guard let match = candidates.indices.first(where: { !used.contains($0) && Self.same(candidates[$0].message, actual) }) else {
                problems.append("messages of \(room.name): the server has \(Self.describe(actual)), which no pending change made (or twice)")
                continue
            }
            used.insert(match)
            let candidate = candidates[match]
            if !candidate.acknowledged { lostButStored += 1 }
            if candidate.refused { problems.append("messages of \(room.name): a refused post was stored: \(Self.describe(actual))") }
            if let id = candidate.acknowledgedID, id != actual.id {
                problems.append("messages of \(room.name): \(Self.describe(actual)) was acknowledged with id \(id)")
            }
            settled.append(actual)
        }
        for (offset, candidate) in candidates.enumerated() where candidate.acknowledged && !used.contains(offset) {
            problems.append("messages of \(room.name): the acknowledged \(Self.describe(candidate.message)) is gone")
        }
        rooms[index].messages = settled
        return problems
    }

    /// The name of a user (the author shown on its messages).
    func name(of userID: String) -> String {
        userIndex(userID).map { users[$0].name } ?? "?"
    }

    /// Whether two messages agree: type, author, text (byte for byte) and id (when both have one).
    static func same(_ expected: Message, _ actual: Message) -> Bool {
        expected.type == actual.type && expected.author == actual.author
            && (expected.id == nil || actual.id == nil || expected.id == actual.id)
            && (expected.text ?? "").utf8.elementsEqual((actual.text ?? "").utf8) && (expected.text == nil) == (actual.text == nil)
    }

    /// A message in a failure text: its type, author, id and the start of its text.
    static func describe(_ message: Message) -> String {
        "\(message.type) by \(message.author) [\(message.id ?? "id unread")] \(message.text.map { String($0.prefix(24)).debugDescription } ?? "")"
    }
}

import CourierTestSupport
import Foundation
import Testing

/// Reading the server's lists and checking them against the model: after every start
/// (``verify()``) and as steps of the conversation.
extension DurabilityConversation {
    /// After a start: sign-ins issue new keys, the users, the rooms with their chatters, every room's messages (and a
    /// `since` read) agree with the model, the burst's changes are settled, keys that must work
    /// do (each shows its own key), and signed-out keys get 401.
    func verify() {
        // Some users sign in before presenting a key: the restarted server remembers none, so
        // each gets an additional key, and the keys its other clients hold keep working (below).
        for index in model.users.indices where chance(1, in: 2) && !failed { signIn(userIndex: index) }
        guard let reader = readerKey() else { return }
        if let users = readUsers(as: reader) { settleProblems(model.settle(users: users)) }
        guard !failed, let rooms = readRooms(as: reader) else { return }
        let deleted = model.pending.compactMap { item -> String? in
            if case .deleteRoom(let id) = item.change, item.acknowledged { return id }
            return nil
        }
        settleProblems(model.settle(rooms: rooms))
        for id in deleted where !failed {
            let response = exchange(DurabilityRequest(method: "GET", path: "/rooms/\(id)/messages", credentials: .key(reader.key)))
            check(response?.status == 404, "the deleted room \(id) answers \(response?.description ?? "nothing")")
        }
        for index in model.rooms.indices where !failed {
            guard let messages = readMessages(roomIndex: index, since: nil, as: reader) else { return }
            settleProblems(model.settle(messages: messages, roomIndex: index))
            if !failed { checkSince(roomIndex: index, as: reader) }
        }
        guard !failed else { return }
        settleKeys()
        model.pending = []
    }

    /// A user and key to read with: a user holding a key, or else one signed in again.
    func readerKey() -> (userID: String, key: String)? {
        if let user = pick(model.users.filter { !$0.keys.isEmpty }), let key = pick(user.keys) { return (user.id, key) }
        guard let user = pick(model.users), let index = model.userIndex(user.id) else { return nil }
        signIn(userIndex: index)
        return model.users[index].keys.last.map { (user.id, $0) }
    }

    /// The burst's keys: a sign-in whose answer was lost left a key nobody knows; a sign-out
    /// whose answer was lost is found out by presenting the key. Then every key that must work
    /// shows its own user with that key, and every retired key gets 401.
    private func settleKeys() {
        for item in model.pending {
            switch item.change {
            case .signIn(let userID) where !item.acknowledged:
                if let index = model.userIndex(userID) { model.users[index].unseenKeys += 1 }
            case .signOut(let userID, let key):
                guard let index = model.userIndex(userID) else { continue }
                model.users[index].keys.removeAll { $0 == key }
                if item.acknowledged {
                    model.users[index].retiredKeys.append(key)
                } else if probe(key: key, userIndex: index, expectValid: nil) {
                    model.users[index].keys.append(key)
                } else {
                    model.users[index].retiredKeys.append(key)
                }
            default: break
            }
        }
        for index in model.users.indices where !failed {
            for key in model.users[index].keys { probe(key: key, userIndex: index, expectValid: true) }
            for key in model.users[index].retiredKeys { probe(key: key, userIndex: index, expectValid: false) }
        }
    }

    /// Presents `key` in `GET /users/<id>`: a valid key gets 200 with the user and that key as
    /// `apiKey`; a retired one 401.
    /// - Parameter expectValid: what must happen; `nil` to find out.
    /// - Returns: whether the key worked.
    @discardableResult
    func probe(key: String, userIndex index: Int, expectValid: Bool?) -> Bool {
        let user = model.users[index]
        guard let response = exchange(DurabilityRequest(method: "GET", path: "/users/\(user.id)", credentials: .key(key), address: user.address)) else {
            return false
        }
        let valid = response.status == 200
        if let expectValid { check(valid == expectValid, "\(user.name)'s key \(key) answers \(response) (valid expected: \(expectValid))") }
        check(response.status == 200 || response.status == 401, "\(user.name)'s key probe answers \(response)")
        if valid {
            let object = try? response.object()
            check(object?["id"] as? String == user.id && object?["apiKey"] as? String == key,
                  "GET /users/\(user.name) with a key shows \(response), not the user with that key")
            model.presented(key, userID: user.id)
        }
        return valid
    }

    /// `GET /users`: ids and names in sign-up order; only the reader's own entry has an `apiKey`, its key.
    func readUsers(as reader: (userID: String, key: String)) -> [(id: String, name: String)]? {
        guard let response = exchange(DurabilityRequest(method: "GET", path: "/users", credentials: .key(reader.key))),
              check(response.status == 200, "GET /users answers \(response)"), let list = try? response.array() else {
            check(false, "GET /users is not a list")
            return nil
        }
        model.presented(reader.key, userID: reader.userID)
        for entry in list {
            let own = entry["id"] as? String == reader.userID
            check((entry["apiKey"] as? String) == (own ? reader.key : nil), "GET /users shows \(entry) to \(reader.userID)")
        }
        return list.map { (id: $0["id"] as? String ?? "", name: $0["name"] as? String ?? "") }
    }

    /// `GET /rooms`: ids, names and chatters' ids, in creation order.
    func readRooms(as reader: (userID: String, key: String)) -> [(id: String, name: String, members: [String])]? {
        guard let response = exchange(DurabilityRequest(method: "GET", path: "/rooms", credentials: .key(reader.key))),
              check(response.status == 200, "GET /rooms answers \(response)"), let list = try? response.array() else {
            check(false, "GET /rooms is not a list")
            return nil
        }
        model.presented(reader.key, userID: reader.userID)
        return list.map { room in
            let chatters = room["chatters"] as? [[String: Any]] ?? []
            return (id: room["id"] as? String ?? "", name: room["name"] as? String ?? "", members: chatters.map { $0["id"] as? String ?? "" })
        }
    }

    /// `GET /rooms/<id>/messages[?since=<id>]`, in posting order.
    func readMessages(roomIndex index: Int, since: String?, as reader: (userID: String, key: String)) -> [DurabilityModel.Message]? {
        let room = model.rooms[index]
        let path = "/rooms/\(room.id)/messages" + (since.map { "?since=\($0)" } ?? "")
        guard let response = exchange(DurabilityRequest(method: "GET", path: path, credentials: .key(reader.key))),
              check(response.status == 200, "GET \(path) of \(room.name) answers \(response)"), let list = try? response.array() else {
            check(false, "GET messages of \(room.name) is not a list")
            return nil
        }
        model.presented(reader.key, userID: reader.userID)
        return list.map {
            DurabilityModel.Message(id: $0["id"] as? String, type: $0["type"] as? String ?? "", text: $0["text"] as? String,
                                    author: $0["author"] as? String ?? "")
        }
    }

    /// `since` a random message of a room returns exactly the model's messages after it.
    func checkSince(roomIndex index: Int, as reader: (userID: String, key: String)) {
        let messages = model.rooms[index].messages
        guard let offset = messages.indices.randomElement(using: &random), let id = messages[offset].id,
              let newer = readMessages(roomIndex: index, since: id, as: reader) else { return }
        let expected = Array(messages[(offset + 1)...])
        check(newer.count == expected.count && zip(expected, newer).allSatisfy { DurabilityModel.same($0, $1) },
              "since message #\(offset) of \(model.rooms[index].name): \(newer.count) messages, \(expected.count) expected")
    }

    /// Records what a settle found.
    func settleProblems(_ problems: [String]) {
        for problem in problems.prefix(5) { check(false, problem) }
    }
}

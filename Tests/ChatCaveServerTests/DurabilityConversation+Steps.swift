import CourierTestSupport
import Foundation
import Testing

/// The sequential steps of the durability conversation: one request at a time, each answer
/// checked against the model, and the model updated with what was acknowledged.
extension DurabilityConversation {
    /// The most users, rooms and keys per user the conversation makes (the server keeps 16 keys).
    static let maxUsers = 7, maxRooms = 5, maxKeysPerUser = 12

    /// One random step.
    func step() {
        switch random.next() % 100 {
        case 0..<7: signUp()
        case 7..<12: if let index = pick(Array(model.users.indices)) { signIn(userIndex: index) }
        case 12..<14: wrongPassword()
        case 14..<21: createRoom()
        case 21..<31: joinOrLeave(join: true)
        case 31..<36: joinOrLeave(join: false)
        case 36..<66: post()
        case 66..<76: readRoom()
        case 76..<80: if let reader = readerKey(), let rooms = readRooms(as: reader) { compare(rooms: rooms) }
        case 80..<85: deleteRoom()
        case 85..<90: signOut()
        default: if let reader = readerKey(), let users = readUsers(as: reader) { compare(users: users) }
        }
    }

    /// A user holding a key, and one of its keys, at random.
    func actor() -> (index: Int, key: String)? {
        guard let index = pick(model.users.indices.filter { !model.users[$0].keys.isEmpty }),
              let key = pick(model.users[index].keys) else { return nil }
        return (index, key)
    }

    /// Sends a request as `actor` with its key; a response other than 401 means the key was presented.
    func sendAs(_ actor: (index: Int, key: String), _ method: String, _ path: String,
                fields: [String: [String: String]] = [:]) -> RawHTTPClient.Response? {
        let user = model.users[actor.index]
        let response = exchange(DurabilityRequest(method: method, path: path, credentials: .key(actor.key), fields: fields, address: user.address))
        if let response, check(response.status != 401, "\(user.name)'s valid key got 401 for \(method) \(path)") {
            model.presented(actor.key, userID: user.id)
        }
        return response
    }

    /// Signs up a new user (from an address of its own): 201 with id, name and key; a name that
    /// differs from a user's only in case gets 406.
    func signUp() {
        if let existing = pick(model.users), chance(1, in: 4) {
            let response = exchange(DurabilityRequest(method: "POST", path: "/users",
                                                      fields: ["user": ["name": existing.name.uppercased(), "password": "x"]], address: existing.address))
            check(response?.status == 406, "signing up \(existing.name.uppercased()) again answers \(response?.description ?? "nothing")")
            return
        }
        guard model.users.count < Self.maxUsers else { return }
        let name = nextTag("user")
        let address = "127.0.0.\(20 + serial % 200)"
        let password = "pw-\(name)-ü"
        guard let response = exchange(DurabilityRequest(method: "POST", path: "/users", fields: ["user": ["name": name, "password": password]],
                                                        address: address)),
              check(response.status == 201, "sign-up of \(name) answers \(response)"),
              let object = try? response.object(), let id = object["id"] as? String, let key = object["apiKey"] as? String else { return }
        check(object["name"] as? String == name, "sign-up of \(name) shows \(object)")
        model.users.append(.init(id: id, name: name, password: password, address: address, keys: [key]))
        model.presented(key, userID: id)
    }

    /// Signs a user in: 201 with the key the server remembers (the last one presented or issued
    /// since it started, if still valid), or else a new one, which from now on works too.
    func signIn(userIndex index: Int) {
        let user = model.users[index]
        guard user.keysOnServer < Self.maxKeysPerUser || model.remembered[user.id] != nil else { return }
        guard let response = exchange(DurabilityRequest(method: "PUT", path: "/account",
                                                        fields: ["user": ["name": user.name, "password": user.password]], address: user.address)),
              check(response.status == 201, "sign-in of \(user.name) answers \(response)"),
              let key = (try? response.object())?["apiKey"] as? String else { return }
        if let remembered = model.remembered[user.id] {
            check(key == remembered, "sign-in of \(user.name) returned \(key), not the remembered \(remembered)")
        } else {
            check(!user.keys.contains(key) && !user.retiredKeys.contains(key), "sign-in of \(user.name) with no key remembered returned an old key")
            model.users[index].keys.append(key)
        }
        model.presented(key, userID: user.id)
    }

    /// A wrong password gets 401 (at most twice per user, below the throttle's five).
    func wrongPassword() {
        guard let index = pick(model.users.indices.filter { model.users[$0].wrongPasswords < 2 }) else { return }
        model.users[index].wrongPasswords += 1
        let user = model.users[index]
        let response = exchange(DurabilityRequest(method: "PUT", path: "/account", fields: ["user": ["name": user.name, "password": "wrong"]],
                                                  address: user.address))
        check(response?.status == 401, "a wrong password for \(user.name) answers \(response?.description ?? "nothing")")
    }

    /// Creates a room (201), or tries a name another room has in other case (406).
    func createRoom() {
        guard let actor = actor() else { return }
        if let existing = pick(model.rooms), chance(1, in: 4) {
            let response = sendAs(actor, "POST", "/rooms", fields: ["room": ["name": existing.name.uppercased()]])
            check(response?.status == 406, "creating \(existing.name.uppercased()) again answers \(response?.description ?? "nothing")")
            return
        }
        guard model.rooms.count < Self.maxRooms else { return }
        let name = nextTag("room")
        guard let response = sendAs(actor, "POST", "/rooms", fields: ["room": ["name": name]]),
              check(response.status == 201, "creating \(name) answers \(response)"),
              let id = (try? response.object())?["id"] as? String else { return }
        model.rooms.append(.init(id: id, name: name))
    }

    /// Joins a room (201 with the members; a `join` message only when not a member yet) or
    /// leaves one (200 and a `leave` message; 404 when not a member).
    func joinOrLeave(join: Bool) {
        guard let actor = actor(), let roomIndex = pick(Array(model.rooms.indices)) else { return }
        let user = model.users[actor.index], room = model.rooms[roomIndex]
        let member = room.members.contains(user.id)
        guard let response = sendAs(actor, join ? "PUT" : "DELETE", "/rooms/\(room.id)/chatters/\(user.id)") else { return }
        if join {
            guard check(response.status == 201, "\(user.name) joining \(room.name) answers \(response)") else { return }
            if !member {
                model.rooms[roomIndex].members.append(user.id)
                model.rooms[roomIndex].messages.append(.init(type: "join", author: user.name))
            }
            let users = ((try? response.object())?["users"] as? [[String: Any]])?.map { $0["id"] as? String ?? "" }
            check(users == model.rooms[roomIndex].members, "joining \(room.name) lists \(users ?? []), not \(model.rooms[roomIndex].members)")
        } else if member {
            guard check(response.status == 200, "\(user.name) leaving \(room.name) answers \(response)") else { return }
            model.rooms[roomIndex].members.removeAll { $0 == user.id }
            model.rooms[roomIndex].messages.append(.init(type: "leave", author: user.name))
        } else {
            check(response.status == 404, "\(user.name) leaving \(room.name), which it is not in, answers \(response)")
        }
    }

    /// Posts a random text: 201 with its id and text when the author is a member and the text
    /// is accepted; 406 otherwise (and nothing is stored).
    func post() {
        guard let actor = actor(), let roomIndex = pick(Array(model.rooms.indices)) else { return }
        let user = model.users[actor.index], room = model.rooms[roomIndex]
        let (text, accepted) = DurabilityText.make(tag: nextTag("m"), random: &random)
        let member = room.members.contains(user.id)
        guard let response = sendAs(actor, "POST", "/rooms/\(room.id)/messages", fields: ["message": ["text": text]]) else { return }
        guard member && accepted else {
            check(response.status == 406, "a post by \(member ? "a member" : "a non-member") (accepted text: \(accepted), \(text.count) characters) answers \(response)")
            return
        }
        guard check(response.status == 201, "a post of \(text.count) characters to \(room.name) answers \(response)"),
              let object = try? response.object(), let id = object["id"] as? String else { return }
        check((object["text"] as? String)?.utf8.elementsEqual(text.utf8) == true && object["author"] as? String == user.name,
              "the post's answer shows another text or author")
        model.rooms[roomIndex].messages.append(.init(id: id, type: "chat", text: text, author: user.name))
    }

    /// Reads a room's messages, all or `since` one of them, and compares them with the model.
    func readRoom() {
        guard let actor = actor(), let roomIndex = pick(Array(model.rooms.indices)) else { return }
        let reader = (userID: model.users[actor.index].id, key: actor.key)
        if chance(1, in: 2) {
            checkSince(roomIndex: roomIndex, as: reader)
        } else if let messages = readMessages(roomIndex: roomIndex, since: nil, as: reader) {
            settleProblems(model.settle(messages: messages, roomIndex: roomIndex))
        }
    }

    /// Deletes a room: 302 when it has no chatters (its messages go with it), 406 otherwise.
    func deleteRoom() {
        guard let actor = actor(), let roomIndex = pick(Array(model.rooms.indices)) else { return }
        let room = model.rooms[roomIndex]
        guard let response = sendAs(actor, "DELETE", "/rooms/\(room.id)") else { return }
        if room.members.isEmpty {
            if check(response.status == 302, "deleting the empty \(room.name) answers \(response)") { model.rooms.remove(at: roomIndex) }
        } else {
            check(response.status == 406, "deleting \(room.name) with chatters answers \(response)")
        }
    }

    /// Signs out: with a key (`X-Magic-Auth`), only that key is retired; with Basic, every key.
    func signOut() {
        guard let actor = actor() else { return }
        let user = model.users[actor.index]
        if chance(1, in: 4) {
            let response = exchange(DurabilityRequest(method: "DELETE", path: "/account", credentials: .basic(name: user.name, password: user.password),
                                                      address: user.address))
            guard check(response?.status == 200, "signing \(user.name) out with Basic answers \(response?.description ?? "nothing")") else { return }
            model.users[actor.index].retiredKeys += user.keys
            model.users[actor.index].keys = []
            model.remembered[user.id] = nil
            return
        }
        guard let response = sendAs(actor, "DELETE", "/account"), check(response.status == 200, "signing out a key answers \(response)") else { return }
        model.users[actor.index].keys.removeAll { $0 == actor.key }
        model.users[actor.index].retiredKeys.append(actor.key)
        if model.remembered[user.id] == actor.key { model.remembered[user.id] = nil }
    }

    /// The rooms the server lists agree with the model exactly.
    func compare(rooms: [(id: String, name: String, members: [String])]) {
        check(rooms.map(\.id) == model.rooms.map(\.id) && rooms.map(\.members) == model.rooms.map(\.members),
              "GET /rooms lists \(rooms.map(\.name)) with \(rooms.map(\.members)); the model has \(model.rooms.map(\.name)) with \(model.rooms.map(\.members))")
    }

    /// The users the server lists agree with the model exactly.
    func compare(users: [(id: String, name: String)]) {
        check(users.map(\.id) == model.users.map(\.id), "GET /users lists \(users.map(\.name)); the model has \(model.users.map(\.name))")
    }
}

import CourierTestSupport
import Dispatch
import Foundation
import Testing
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A stop while requests are in flight: changes of several clients, sent at once from threads
/// of their own, and SIGKILL (or SIGTERM) once a random number of them were answered.
extension DurabilityConversation {
    /// One planned change of a burst: what the model records, the request, and whether the
    /// server must refuse it (a post it cannot accept, answered 406).
    private struct Planned {
        var change: DurabilityModel.Pending.Change
        var request: DurabilityRequest
        var refused = false
    }

    /// Sends a burst of changes (up to one per user holding a key, more posts, perhaps a sign-up)
    /// and stops the server with `signal` once a random number of them (none to all) were
    /// answered, or after 5 s.
    /// Every answer that arrived is checked (2xx, or 406 for a refused post); the changes go to
    /// ``DurabilityModel/pending``, to be settled after the restart.
    func burst(thenStopWith signal: Int32) {
        let planned = planBurst()
        let answers = Mutex<[RawHTTPClient.Response?]>(Array(repeating: nil, count: planned.count))
        let answered = Atomic<Int>(0)
        let finished = DispatchGroup()
        let port = self.port
        for (offset, item) in planned.enumerated() {
            finished.enter()
            let request = item.request
            Thread {
                defer { finished.leave() }
                let response = request.send(port: port)
                answers.withLock { $0[offset] = response }
                if response != nil { answered.add(1, ordering: .relaxed) }
            }.start()
        }
        let wanted = Int(random.next() % UInt64(planned.count + 1))
        let deadline = ContinuousClock.now + .seconds(5)
        while answered.load(ordering: .relaxed) < wanted && ContinuousClock.now < deadline { usleep(500) }
        usleep(useconds_t(random.next() % 3_000))  // then a little more, so that some are in the middle of being handled
        note("burst of \(planned.count), stopped after \(answered.load(ordering: .relaxed)) answers (\(wanted) wanted)")
        stop(signal)
        check(finished.wait(timeout: .now() + 30) == .success, "a burst request did not end within 30 s of the stop")
        let responses = answers.withLock { $0 }
        for (item, response) in zip(planned, responses) { record(item, response: response) }
    }

    /// Records one change of the burst in the model, checking its answer if one arrived.
    private func record(_ item: Planned, response: RawHTTPClient.Response?) {
        let what = "\(item.request.method) \(item.request.path) in a burst"
        var pending = DurabilityModel.Pending(change: item.change, acknowledged: false)
        if response == nil { lostAnswers += 1 }
        if let response, response.status == 503, case .signUp = item.change {
            return  // every hashing place was taken: refused, so the user must not appear (nor may a sign-in's key)
        }
        if let response, response.status == 503, case .signIn = item.change { return }
        if let response {
            if item.refused {
                check(response.status == 406, "\(what), a post the server must refuse, answers \(response)")
            } else {
                let expected = item.request.method == "DELETE" && item.request.path.hasPrefix("/rooms/") && !item.request.path.contains("/chatters/") ? 302 : nil
                pending.acknowledged = check(expected.map { response.status == $0 } ?? (200...201).contains(response.status),
                                             "\(what) answers \(response)")
                let object = try? response.object()
                pending.acknowledgedID = object?["id"] as? String
                pending.acknowledgedKey = object?["apiKey"] as? String
            }
        }
        switch item.change {
        case .signIn(let userID):
            guard let index = model.userIndex(userID), let key = pending.acknowledgedKey else { break }
            if !model.users[index].keys.contains(key) { model.users[index].keys.append(key) }
        case .signOut(let userID, let key):
            if let index = model.userIndex(userID) { model.users[index].keys.removeAll { $0 == key } }
        default: break
        }
        model.pending.append(pending)
    }

    /// Chooses the burst's changes: each user holding a key does one thing (posts, joins,
    /// leaves, creates a room, signs in or out, or deletes an empty room nobody else touches),
    /// and perhaps a new user signs up.
    private func planBurst() -> [Planned] {
        var planned: [Planned] = []
        var untouchable = Set<String>()  // the room being deleted
        if chance(1, in: 2) {
            let name = nextTag("user")
            let request = DurabilityRequest(method: "POST", path: "/users", fields: ["user": ["name": name, "password": "pw-\(name)"]],
                                            address: "127.0.0.\(20 + serial % 200)")
            planned.append(Planned(change: .signUp(name: name, password: "pw-\(name)", address: request.address), request: request))
        }
        var posters: [(index: Int, key: String)] = []  // users whose burst change leaves their rooms as they are
        for index in model.users.indices.shuffled(using: &random).prefix(5) {
            let user = model.users[index]
            guard let key = pick(user.keys) else { continue }
            let credentials = DurabilityRequest.Credentials.key(key)
            let rooms = model.rooms.filter { !untouchable.contains($0.id) }
            let memberOf = rooms.filter { $0.members.contains(user.id) }, notIn = rooms.filter { !$0.members.contains(user.id) }
            let choice = random.next() % 8
            if choice != 4 && choice != 6 { posters.append((index, key)) }
            switch choice {
            case 0, 1, 2:
                if let post = plannedPost(userIndex: index, key: key) { planned.append(post) }
            case 3:
                guard let room = pick(notIn) else { continue }
                planned.append(Planned(change: .join(roomID: room.id, userID: user.id),
                                       request: DurabilityRequest(method: "PUT", path: "/rooms/\(room.id)/chatters/\(user.id)",
                                                                  credentials: credentials, address: user.address)))
            case 4:
                guard let room = pick(memberOf) else { continue }
                planned.append(Planned(change: .leave(roomID: room.id, userID: user.id),
                                       request: DurabilityRequest(method: "DELETE", path: "/rooms/\(room.id)/chatters/\(user.id)",
                                                                  credentials: credentials, address: user.address)))
            case 5:
                guard model.rooms.count < Self.maxRooms else { continue }
                let name = nextTag("room")
                planned.append(Planned(change: .createRoom(name: name),
                                       request: DurabilityRequest(method: "POST", path: "/rooms", credentials: credentials,
                                                                  fields: ["room": ["name": name]], address: user.address)))
            case 6:
                if chance(1, in: 2), user.keysOnServer < Self.maxKeysPerUser - 1 {
                    planned.append(Planned(change: .signIn(userID: user.id),
                                           request: DurabilityRequest(method: "PUT", path: "/account",
                                                                      fields: ["user": ["name": user.name, "password": user.password]],
                                                                      address: user.address)))
                } else {
                    planned.append(Planned(change: .signOut(userID: user.id, key: key),
                                           request: DurabilityRequest(method: "DELETE", path: "/account", credentials: credentials,
                                                                      address: user.address)))
                }
            default:
                let touched = Set(planned.compactMap { $0.request.path.split(separator: "/").dropFirst().first.map(String.init) })
                guard let room = pick(rooms.filter { $0.members.isEmpty && !touched.contains($0.id) }) else { continue }
                untouchable.insert(room.id)
                planned.append(Planned(change: .deleteRoom(roomID: room.id),
                                       request: DurabilityRequest(method: "DELETE", path: "/rooms/\(room.id)", credentials: credentials,
                                                                  address: user.address)))
            }
        }
        // More posts from users who stay in their rooms: several requests of one user in flight at once.
        for _ in 0..<Int(random.next() % 6) {
            guard let poster = pick(posters), let post = plannedPost(userIndex: poster.index, key: poster.key) else { break }
            planned.append(post)
        }
        return planned
    }

    /// A post by a user to a random room it is a member of (one the server must refuse, now and then).
    private func plannedPost(userIndex index: Int, key: String) -> Planned? {
        let user = model.users[index]
        guard let room = pick(model.rooms.filter { $0.members.contains(user.id) }) else { return nil }
        let (text, accepted) = DurabilityText.make(tag: nextTag("m"), random: &random)
        let request = DurabilityRequest(method: "POST", path: "/rooms/\(room.id)/messages", credentials: .key(key),
                                        fields: ["message": ["text": text]], address: user.address)
        return Planned(change: accepted ? .post(roomID: room.id, userID: user.id, text: text)
                                        : .refusedPost(roomID: room.id, userID: user.id, text: text),
                       request: request, refused: !accepted)
    }
}

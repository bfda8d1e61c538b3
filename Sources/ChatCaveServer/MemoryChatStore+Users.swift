/// Users and their API key digests, in memory.
extension MemoryChatStore {
    func nameIsTaken(_ name: String) -> Bool {
        state.withLock { $0.userIDByName[TextRules.nameKey(name)] != nil }
    }

    func insert(_ user: StoredUser) throws(APIError) {
        let key = TextRules.nameKey(user.name)
        try change { state throws(APIError) in
            guard state.userIDByName[key] == nil else { throw .rejected("A user named '\(user.name)' already exists") }
            state.users[user.id] = user
            state.userOrder.append(user.id)
            state.userIDByName[key] = user.id
            for digest in user.apiKeyDigests { state.userIDByKey[digest] = user.id }
        }
    }

    func user(id: String) -> StoredUser? {
        state.withLock { $0.users[id] }
    }

    func user(named name: String) -> StoredUser? {
        let key = TextRules.nameKey(name)
        return state.withLock { state in state.userIDByName[key].flatMap { state.users[$0] } }
    }

    func user(keyDigest: String) -> StoredUser? {
        state.withLock { state in state.userIDByKey[keyDigest].flatMap { state.users[$0] } }
    }

    func allUsers() -> [StoredUser] {
        state.withLock { state in state.userOrder.compactMap { state.users[$0] } }
    }

    func addKeyDigest(_ digest: String, userID: String) throws(APIError) {
        try change { state throws(APIError) in
            guard var user = state.users[userID] else { throw .notFound("No user exists with ID '\(userID.prefix(100))'") }
            user.apiKeyDigests.append(digest)
            while user.apiKeyDigests.count > StoredUser.maxAPIKeys {
                state.userIDByKey.removeValue(forKey: user.apiKeyDigests.removeFirst())
            }
            state.userIDByKey[digest] = user.id
            state.users[user.id] = user
        }
    }

    func removeKeyDigests(_ digest: String?, userID: String) throws(APIError) {
        try change { state throws(APIError) in
            guard var user = state.users[userID] else { throw .notFound("No user exists with ID '\(userID.prefix(100))'") }
            for held in user.apiKeyDigests where digest == nil || held == digest {
                state.userIDByKey.removeValue(forKey: held)
            }
            user.apiKeyDigests.removeAll { digest == nil || $0 == digest }
            state.users[user.id] = user
        }
    }
}

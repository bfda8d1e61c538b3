import Foundation

/// Users: sign-up, look-ups, API keys.
extension ChatStore {
    /// Whether a user has this name (compared as ``TextRules/nameKey(_:)``).
    func nameIsTaken(_ name: String) -> Bool {
        state.withLock { $0.userIDByName[TextRules.nameKey(name)] != nil }
    }

    /// Adds a user whose password was already hashed.
    /// - Parameters:
    ///   - name: a valid name (see ``TextRules/name(_:what:)``).
    ///   - passwordHash: the salted hash.
    /// - Returns: the new user and its first API key.
    /// - Throws: 406 when the name is taken; 500 when the change cannot be saved.
    func addUser(name: String, passwordHash: String) throws(APIError) -> (user: User, apiKey: String) {
        let apiKey = UUID().uuidString.lowercased()
        let user = User(id: UUID().uuidString.lowercased(), name: name, passwordHash: passwordHash, apiKey: apiKey)
        let key = TextRules.nameKey(name)
        try change { state throws(APIError) in
            guard state.userIDByName[key] == nil else { throw .rejected("A user named '\(name)' already exists") }
            state.users[user.id] = user
            state.userOrder.append(user.id)
            state.userIDByName[key] = user.id
            for digest in user.apiKeyDigests { state.userIDByKey[digest] = user.id }
        }
        knownKeys.withLock { $0[user.id] = apiKey }
        return (user, apiKey)
    }

    /// The user with this id, or `nil`.
    func user(id: String) -> User? {
        state.withLock { $0.users[id] }
    }

    /// The user with this name (compared as ``TextRules/nameKey(_:)``), or `nil`.
    func user(named name: String) -> User? {
        let key = TextRules.nameKey(name)
        return state.withLock { state in state.userIDByName[key].flatMap { state.users[$0] } }
    }

    /// The user who holds this API key, or `nil`. The key is remembered in memory
    /// (``knownKeys``), so that sign-in can return it again.
    func user(apiKey: String) -> User? {
        let digest = User.digest(ofKey: apiKey)
        guard let user = state.withLock({ state in state.userIDByKey[digest].flatMap { state.users[$0] } }) else { return nil }
        knownKeys.withLock { $0[user.id] = apiKey }
        return user
    }

    /// Every user, in sign-up order.
    func allUsers() -> [User] {
        state.withLock { state in state.userOrder.compactMap { state.users[$0] } }
    }

    /// The last API key the user presented or was given, if the server knows it and the user
    /// still holds it; `nil` otherwise (after a restart, until a key is presented again).
    func knownKey(userID: String) -> String? {
        guard let key = knownKeys.withLock({ $0[userID] }) else { return nil }
        let digest = User.digest(ofKey: key)
        return state.withLock { $0.users[userID]?.apiKeyDigests.contains(digest) == true } ? key : nil
    }

    /// An API key of the user, for sign-in: the one in memory (``knownKey(userID:)``), or else
    /// an additional new one, so that keys the user's other clients hold keep working. With
    /// ``User/maxAPIKeys`` keys already, the oldest is retired.
    /// - Throws: 404 when there is no such user; 500 when a new key cannot be saved.
    func signInKey(userID: String) throws(APIError) -> String {
        if let key = knownKey(userID: userID) { return key }
        let key = UUID().uuidString.lowercased()
        let digest = User.digest(ofKey: key)
        try change { state throws(APIError) in
            guard var user = state.users[userID] else { throw .notFound("No user exists with ID '\(userID.prefix(100))'") }
            user.apiKeyDigests.append(digest)
            while user.apiKeyDigests.count > User.maxAPIKeys {
                state.userIDByKey.removeValue(forKey: user.apiKeyDigests.removeFirst())
            }
            state.userIDByKey[digest] = user.id
            state.users[user.id] = user
        }
        knownKeys.withLock { $0[userID] = key }
        return key
    }

    /// Retires API keys of a user: the one given, or every one (`nil`). Requests with a retired
    /// key get 401; the next sign-in returns a new key when none is left in memory.
    /// - Parameters:
    ///   - apiKey: the key to retire; `nil` for all of the user's keys.
    ///   - userID: the user.
    /// - Throws: 404 when there is no such user; 500 when the change cannot be saved.
    func revokeAPIKeys(_ apiKey: String?, userID: String) throws(APIError) {
        let retired = apiKey.map { User.digest(ofKey: $0) }
        try change { state throws(APIError) in
            guard var user = state.users[userID] else { throw .notFound("No user exists with ID '\(userID.prefix(100))'") }
            for digest in user.apiKeyDigests where retired == nil || digest == retired {
                state.userIDByKey.removeValue(forKey: digest)
            }
            user.apiKeyDigests.removeAll { retired == nil || $0 == retired }
            state.users[user.id] = user
        }
        knownKeys.withLock { keys in
            if apiKey == nil || keys[userID] == apiKey { keys.removeValue(forKey: userID) }
        }
    }
}

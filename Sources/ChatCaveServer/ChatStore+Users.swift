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
    /// - Returns: the new user, with a fresh API key.
    /// - Throws: 406 when the name is taken; 500 when the change cannot be saved.
    func addUser(name: String, passwordHash: String) throws(APIError) -> User {
        let user = User(id: UUID().uuidString.lowercased(), name: name, passwordHash: passwordHash,
                        apiKey: UUID().uuidString.lowercased())
        let key = TextRules.nameKey(name)
        try change { state throws(APIError) in
            guard state.userIDByName[key] == nil else { throw .rejected("A user named '\(name)' already exists") }
            state.users[user.id] = user
            state.userOrder.append(user.id)
            state.userIDByName[key] = user.id
            state.userIDByKey[user.apiKeyDigest] = user.id
        }
        return user
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

    /// The user whose current API key this is, or `nil`. The key is remembered in memory, so
    /// that sign-in can return it again.
    func user(apiKey: String) -> User? {
        let digest = User.digest(ofKey: apiKey)
        return state.withLock { state -> User? in
            guard let id = state.userIDByKey[digest] else { return nil }
            state.users[id]?.apiKey = apiKey
            return state.users[id]
        }
    }

    /// Every user, in sign-up order.
    func allUsers() -> [User] {
        state.withLock { state in state.userOrder.compactMap { state.users[$0] } }
    }

    /// The user with its current API key: the one in memory, or a new one when the server has
    /// only the digest (after a restart, until the key is presented again).
    /// - Throws: 404 when there is no such user; 500 when a new key cannot be saved.
    func userWithKey(id: String) throws(APIError) -> User {
        guard let user = user(id: id) else { throw .notFound("No user exists with ID '\(id.prefix(100))'") }
        if user.apiKey != nil { return user }
        return try rotateAPIKey(userID: id)
    }

    /// Replaces a user's API key, so that the old one is refused from now on.
    /// - Parameter userID: the user.
    /// - Returns: the user with the new key.
    /// - Throws: 404 when there is no such user; 500 when the change cannot be saved.
    @discardableResult
    func rotateAPIKey(userID: String) throws(APIError) -> User {
        let key = UUID().uuidString.lowercased()
        return try change { state throws(APIError) in
            guard var user = state.users[userID] else { throw .notFound("No user exists with ID '\(userID.prefix(100))'") }
            state.userIDByKey.removeValue(forKey: user.apiKeyDigest)
            user.apiKey = key
            user.apiKeyDigest = User.digest(ofKey: key)
            state.userIDByKey[user.apiKeyDigest] = user.id
            state.users[user.id] = user
            return user
        }
    }
}

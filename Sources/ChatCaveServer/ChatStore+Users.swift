import Foundation

/// Users: sign-up, look-ups, API keys.
extension ChatStore {
    /// Whether a user has this name.
    func nameIsTaken(_ name: String) -> Bool {
        state.withLock { $0.userIDByName[name] != nil }
    }

    /// Adds a user whose password was already hashed.
    /// - Parameters:
    ///   - name: a valid name (see ``validName(_:what:)``).
    ///   - passwordHash: the salted hash.
    /// - Returns: the new user, with a fresh API key.
    /// - Throws: 406 when the name is taken.
    func addUser(name: String, passwordHash: String) throws(APIError) -> User {
        let user = User(id: UUID().uuidString.lowercased(), name: name, passwordHash: passwordHash,
                        apiKey: UUID().uuidString.lowercased())
        let added = state.withLock { state -> Bool in
            guard state.userIDByName[name] == nil else { return false }
            state.users[user.id] = user
            state.userOrder.append(user.id)
            state.userIDByName[name] = user.id
            state.userIDByKey[user.apiKey] = user.id
            state.version &+= 1
            return true
        }
        guard added else { throw .rejected("A user named '\(name)' already exists") }
        persist()
        return user
    }

    /// The user with this id, or `nil`.
    func user(id: String) -> User? {
        state.withLock { $0.users[id] }
    }

    /// The user with this name, or `nil`.
    func user(named name: String) -> User? {
        state.withLock { state in state.userIDByName[name].flatMap { state.users[$0] } }
    }

    /// The user whose current API key this is, or `nil`.
    func user(apiKey: String) -> User? {
        state.withLock { state in state.userIDByKey[apiKey].flatMap { state.users[$0] } }
    }

    /// Every user, in sign-up order.
    func allUsers() -> [User] {
        state.withLock { state in state.userOrder.compactMap { state.users[$0] } }
    }

    /// Replaces a user's API key, so that the old one is refused from now on.
    /// - Parameter userID: the user.
    /// - Returns: the user with the new key, or `nil` when there is no such user.
    @discardableResult
    func rotateAPIKey(userID: String) -> User? {
        let updated = state.withLock { state -> User? in
            guard var user = state.users[userID] else { return nil }
            state.userIDByKey.removeValue(forKey: user.apiKey)
            user.apiKey = UUID().uuidString.lowercased()
            state.userIDByKey[user.apiKey] = user.id
            state.users[user.id] = user
            state.version &+= 1
            return user
        }
        if updated != nil { persist() }
        return updated
    }
}

/// Sign-up and API keys, the same for every store: keys are handed out here and only their
/// digests reach the store.
extension ChatStore {
    /// Adds a user whose password was already hashed, with a new API key.
    /// - Parameters:
    ///   - name: a valid name (see ``TextRules/name(_:what:)``).
    ///   - passwordHash: the salted hash.
    /// - Returns: the new user and its first API key.
    /// - Throws: 406 when the name is taken; 500 when the change cannot be saved.
    func addUser(name: String, passwordHash: String) throws(APIError) -> (user: StoredUser, apiKey: String) {
        let apiKey = UUIDText.make()
        let user = StoredUser(id: UUIDText.make(), name: name, passwordHash: passwordHash, apiKey: apiKey)
        try insert(user)
        rememberedKeys.remember(apiKey, userID: user.id)
        return (user, apiKey)
    }

    /// The user who holds this API key, or `nil`. The key is remembered in memory
    /// (``rememberedKeys``), so that sign-in can return it again.
    func user(apiKey: String) throws(APIError) -> StoredUser? {
        guard let user = try user(keyDigest: StoredUser.digest(ofKey: apiKey)) else { return nil }
        rememberedKeys.remember(apiKey, userID: user.id)
        return user
    }

    /// The last API key the user presented or was given, if the server remembers it and the
    /// user still holds it; `nil` otherwise (after a restart, until a key is presented again).
    func knownKey(userID: String) throws(APIError) -> String? {
        guard let key = rememberedKeys.key(userID: userID) else { return nil }
        return try user(id: userID)?.apiKeyDigests.contains(StoredUser.digest(ofKey: key)) == true ? key : nil
    }

    /// An API key of the user, for sign-in: the remembered one (``knownKey(userID:)``), or else
    /// an additional new one, so that keys the user's other clients hold keep working. With
    /// ``StoredUser/maxAPIKeys`` keys already, the oldest is retired.
    /// - Throws: 404 when there is no such user; 500 when a new key cannot be saved.
    func signInKey(userID: String) throws(APIError) -> String {
        if let key = try knownKey(userID: userID) { return key }
        let key = UUIDText.make()
        try addKeyDigest(StoredUser.digest(ofKey: key), userID: userID)
        rememberedKeys.remember(key, userID: userID)
        return key
    }

    /// Retires API keys of a user: the one given, or every one (`nil`). Requests with a retired
    /// key get 401; the next sign-in returns a new key when none is remembered.
    /// - Throws: 404 when there is no such user; 500 when the change cannot be saved.
    func revokeAPIKeys(_ apiKey: String?, userID: String) throws(APIError) {
        try removeKeyDigests(apiKey.map { StoredUser.digest(ofKey: $0) }, userID: userID)
        rememberedKeys.forget(apiKey, userID: userID)
    }

    /// The members of a room, in the order they joined.
    /// - Throws: 404 when there is no such room.
    func chatters(roomID: String) throws(APIError) -> [APIRepresentation.Chatter] {
        try room(id: roomID).chatters
    }
}

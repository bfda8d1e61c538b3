/// Users and their API key digests, in the `users` and `api_keys` tables.
extension SQLiteChatStore {
    func nameIsTaken(_ name: String) throws(APIError) -> Bool {
        try read { connection in try Self.userID(nameKey: TextRules.nameKey(name), connection) != nil }
    }

    func insert(_ user: StoredUser) throws(APIError) {
        try write { connection in
            let key = TextRules.nameKey(user.name)
            guard try Self.userID(nameKey: key, connection) == nil else {
                throw APIError.rejected("A user named '\(user.name)' already exists")
            }
            try Self.insert(user, nameKey: key, connection)
        }
    }

    func user(id: String) throws(APIError) -> StoredUser? {
        try read { connection in try Self.user(id: id, connection) }
    }

    func user(named name: String) throws(APIError) -> StoredUser? {
        try read { connection in
            try Self.userID(nameKey: TextRules.nameKey(name), connection).flatMap { id in try Self.user(id: id, connection) }
        }
    }

    func user(keyDigest: String) throws(APIError) -> StoredUser? {
        try read { connection in
            let owner = try connection.query("SELECT user_id FROM api_keys WHERE digest = ?1 ORDER BY seq DESC LIMIT 1",
                                             [.text(keyDigest)]) { $0.text(0) ?? "" }.first
            return try owner.flatMap { id in try Self.user(id: id, connection) }
        }
    }

    func allUsers() throws(APIError) -> [StoredUser] {
        try read { connection in
            var digests: [String: [String]] = [:]
            for (userID, digest) in try connection.query("SELECT user_id, digest FROM api_keys ORDER BY seq", row: {
                ($0.text(0) ?? "", $0.text(1) ?? "")
            }) {
                digests[userID, default: []].append(digest)
            }
            return try connection.query("SELECT id, name, password_hash FROM users ORDER BY seq") { row in
                let id = row.text(0) ?? ""
                return StoredUser(id: id, name: row.text(1) ?? "", passwordHash: row.text(2) ?? "", apiKeyDigests: digests[id] ?? [])
            }
        }
    }

    func addKeyDigest(_ digest: String, userID: String) throws(APIError) {
        try write { connection in
            try Self.requireUser(userID, connection)
            try connection.run("INSERT INTO api_keys (user_id, digest) VALUES (?1, ?2)", [.text(userID), .text(digest)])
            try connection.run("""
                DELETE FROM api_keys WHERE user_id = ?1 AND seq NOT IN
                    (SELECT seq FROM api_keys WHERE user_id = ?1 ORDER BY seq DESC LIMIT ?2)
                """, [.text(userID), .integer(Int64(StoredUser.maxAPIKeys))])
        }
    }

    func removeKeyDigests(_ digest: String?, userID: String) throws(APIError) {
        try write { connection in
            try Self.requireUser(userID, connection)
            try connection.run("DELETE FROM api_keys WHERE user_id = ?1 AND (?2 IS NULL OR digest = ?2)",
                               [.text(userID), .optional(digest)])
        }
    }

    // MARK: - Statements shared with the rooms and the import (called under the lock)

    /// The id of the first user (in sign-up order) whose ``TextRules/nameKey(_:)`` is `nameKey`.
    static func userID(nameKey: String, _ connection: SQLiteConnection) throws(SQLiteError) -> String? {
        try connection.query("SELECT id FROM users WHERE name_key = ?1 ORDER BY seq LIMIT 1", [.text(nameKey)]) { $0.text(0) ?? "" }.first
    }

    /// The user with this id, with its key digests (oldest first), or `nil`.
    static func user(id: String, _ connection: SQLiteConnection) throws(SQLiteError) -> StoredUser? {
        guard var user = try connection.query("SELECT name, password_hash FROM users WHERE id = ?1", [.text(id)], row: {
            StoredUser(id: id, name: $0.text(0) ?? "", passwordHash: $0.text(1) ?? "", apiKeyDigests: [])
        }).first else { return nil }
        user.apiKeyDigests = try connection.query("SELECT digest FROM api_keys WHERE user_id = ?1 ORDER BY seq", [.text(id)]) {
            $0.text(0) ?? ""
        }
        return user
    }

    /// The user with this id.
    /// - Throws: ``APIError`` 404 when there is none.
    static func existingUser(_ id: String, _ connection: SQLiteConnection) throws -> StoredUser {
        guard let user = try user(id: id, connection) else { throw APIError.notFound("No user exists with ID '\(id.prefix(100))'") }
        return user
    }

    /// Adds a user row and its key digests.
    static func insert(_ user: StoredUser, nameKey: String, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run("INSERT INTO users (id, name, name_key, password_hash) VALUES (?1, ?2, ?3, ?4)",
                           [.text(user.id), .text(user.name), .text(nameKey), .text(user.passwordHash)])
        for digest in user.apiKeyDigests {
            try connection.run("INSERT INTO api_keys (user_id, digest) VALUES (?1, ?2)", [.text(user.id), .text(digest)])
        }
    }

    private static func requireUser(_ id: String, _ connection: SQLiteConnection) throws {
        guard try !connection.query("SELECT 1 FROM users WHERE id = ?1", [.text(id)], row: { _ in true }).isEmpty else {
            throw APIError.notFound("No user exists with ID '\(id.prefix(100))'")
        }
    }
}

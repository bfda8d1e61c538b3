import Foundation

/// The one-time import of the legacy data file (``LegacyStoreFile``, `chatcave-store.json`).
extension SQLiteChatStore {
    /// Imports the legacy file of `directory`, if there is one, in one transaction, then renames
    /// it `chatcave-store.json.migrated`.
    ///
    /// The transaction also records the import in the `meta` table, so a file is never imported
    /// twice: when the server stopped between the commit and the rename, the next start only
    /// renames it. A database that already holds users or rooms without that record is refused
    /// rather than merged with the file.
    ///
    /// Everything is imported as the old server loaded it: users with their password hashes and
    /// key digests (a format-1 plain-text key is digested), rooms, members, and messages with
    /// their ids, authors and timestamps, in their order. Entries the old server skipped on load
    /// (a repeated user or room id, a member who is not a user, a repeated member) are skipped.
    /// - Throws: ``LegacyStoreFile/Failure`` when the file cannot be read or renamed,
    ///   ``SQLiteSchema/Refusal`` when the database already holds other data, ``SQLiteError``.
    static func importLegacyFile(in directory: URL, into connection: SQLiteConnection) throws {
        let legacy = LegacyStoreFile(directory: directory)
        guard legacy.exists else { return }
        let alreadyImported = try !connection.query("SELECT 1 FROM meta WHERE key = ?1", [.text(SQLiteSchema.legacyImportKey)],
                                                    row: { _ in true }).isEmpty
        if !alreadyImported {
            let snapshot = try legacy.load()
            try connection.transaction { connection in
                let held = try connection.query("SELECT (SELECT count(*) FROM users) + (SELECT count(*) FROM rooms)") { $0.integer(0) }
                guard held.first == 0 else {
                    throw SQLiteSchema.Refusal(description: "\(connection.path) already holds data, and \(legacy.fileURL.path) was never imported into it; move one of them away")
                }
                try insert(snapshot, connection)
                try connection.run("INSERT INTO meta (key, value) VALUES (?1, ?2)",
                                   [.text(SQLiteSchema.legacyImportKey), .text(ServerTimestamp.format(milliseconds: ServerTimestamp.now()))])
            }
        }
        try legacy.setAside()
    }

    private static func insert(_ snapshot: LegacyStoreFile.Snapshot, _ connection: SQLiteConnection) throws {
        var userIDs = Set<String>()
        for user in snapshot.users where userIDs.insert(user.id).inserted {
            try insert(user, nameKey: TextRules.nameKey(user.name), connection)
        }
        var roomIDs = Set<String>()
        for room in snapshot.rooms where roomIDs.insert(room.id).inserted {
            try connection.run("INSERT INTO rooms (id, name, name_key) VALUES (?1, ?2, ?3)",
                               [.text(room.id), .text(room.name), .text(TextRules.nameKey(room.name))])
            var members = Set<String>()
            for userID in room.chatterIDs where userIDs.contains(userID) && members.insert(userID).inserted {
                try connection.run("INSERT INTO chatters (room_id, user_id) VALUES (?1, ?2)", [.text(room.id), .text(userID)])
            }
            for message in room.messages {
                try insert(message, roomID: room.id, connection)
            }
        }
    }
}

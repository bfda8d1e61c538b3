/// The tables of the SQLite store, as numbered migrations recorded in `PRAGMA user_version`.
///
/// Migration *n* brings a database from version *n − 1* to *n*; each runs in its own
/// transaction with the update of `user_version`, so a database is always at one version.
/// A new database (version 0, no tables) runs them all. Append migrations; never edit one
/// that was released.
///
/// Every table has an `INTEGER PRIMARY KEY` (`seq`) that orders it: users in sign-up order,
/// rooms in creation order, members in joining order, messages in posting order. Messages are
/// indexed by `(room_id, seq)`, so `GET …/messages?since=<id>` finds the id through the unique
/// index on `messages.id` and reads only the newer messages of the room: O(log n + k).
enum SQLiteSchema {
    /// The migrations, in order: index 0 is migration 1.
    static let migrations: [String] = [
        """
        CREATE TABLE users (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            name_key TEXT NOT NULL,
            password_hash TEXT NOT NULL
        );
        CREATE INDEX users_by_name_key ON users (name_key, seq);
        CREATE TABLE api_keys (
            seq INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL,
            digest TEXT NOT NULL
        );
        CREATE INDEX api_keys_by_digest ON api_keys (digest);
        CREATE INDEX api_keys_by_user ON api_keys (user_id, seq);
        CREATE TABLE rooms (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            name_key TEXT NOT NULL
        );
        CREATE INDEX rooms_by_name_key ON rooms (name_key);
        CREATE TABLE chatters (
            seq INTEGER PRIMARY KEY,
            room_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            UNIQUE (room_id, user_id)
        );
        CREATE INDEX chatters_by_room ON chatters (room_id, seq);
        CREATE TABLE messages (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            room_id TEXT NOT NULL,
            type TEXT NOT NULL,
            text TEXT,
            author_id TEXT NOT NULL,
            author TEXT NOT NULL,
            timestamp INTEGER NOT NULL
        );
        CREATE INDEX messages_by_room ON messages (room_id, seq);
        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
    ]

    /// The version a database has once every migration ran.
    static var currentVersion: Int { migrations.count }

    /// The `meta` key recording that the legacy JSON file was imported (its value: when).
    static let legacyImportKey = "legacy-json-imported"

    /// Brings the database to ``currentVersion``, one transaction per migration.
    /// - Throws: ``SQLiteError`` when SQLite fails; ``Refusal`` when the file is a database of a
    ///   newer server, or another program's database.
    static func migrate(_ connection: SQLiteConnection) throws {
        var version = try userVersion(connection)
        guard version <= currentVersion else {
            throw Refusal(description: "\(connection.path) has schema version \(version); this server knows versions up to \(currentVersion) (a newer server wrote it)")
        }
        if version == 0 {
            let tables = try connection.query("SELECT count(*) FROM sqlite_master") { $0.integer(0) }.first ?? 0
            guard tables == 0 else {
                throw Refusal(description: "\(connection.path) is an SQLite database, but not one of ChatCave (it has tables and no schema version)")
            }
        }
        while version < currentVersion {
            let next = version + 1
            try connection.transaction { connection in
                try connection.execute(migrations[version])
                try connection.execute("PRAGMA user_version = \(next)")
            }
            version = next
        }
    }

    /// `PRAGMA user_version`: 0 for a new database.
    static func userVersion(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        Int(try connection.query("PRAGMA user_version") { $0.integer(0) }.first ?? 0)
    }

    /// Why the server will not use a database file.
    struct Refusal: Error, CustomStringConvertible {
        /// The reason, with the path.
        let description: String
    }
}

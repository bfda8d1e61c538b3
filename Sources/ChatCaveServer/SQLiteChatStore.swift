import Foundation
import Synchronization

/// A ``ChatStore`` in an SQLite database: `chatcave.sqlite` in the server's data directory.
///
/// The database runs in WAL mode; each change is one transaction (`BEGIN IMMEDIATE` … `COMMIT`)
/// of a few cached, prepared statements, so a post costs the same however much is stored, and
/// a change is answered only once it is committed. A change that fails (a full disk, a lock
/// another process holds, an I/O error) is rolled back and answered 500.
///
/// One connection serves every request thread: it lives in a `Mutex`, and every read or change
/// holds that lock for its statements only (microseconds), never across a request.
///
/// The files hold password hashes and API key digests: the database and its `-wal` and `-shm`
/// files are mode 0600 (SQLite gives the last two the mode of the first), the directory 0700.
/// On first start beside a `chatcave-store.json` of an older server, everything in it is
/// imported in one transaction and the file is renamed `chatcave-store.json.migrated`
/// (``importLegacyFile(in:)``). A file that is not a ChatCave database, or is damaged, stops the
/// server at start; it is never overwritten.
final class SQLiteChatStore: ChatStore {
    /// Why the store cannot open its database.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the path.
        let description: String
    }

    /// The database's name inside the data directory.
    static let fileName = "chatcave.sqlite"

    /// The database file.
    let path: String
    let rememberedKeys = RememberedAPIKeys()
    private let connection: Mutex<SQLiteConnection>

    /// Opens (or creates) `directory/chatcave.sqlite`, brings its schema up to date and imports
    /// a legacy `chatcave-store.json` found beside it.
    /// - Parameters:
    ///   - directory: the data directory, created (mode 0700) when missing.
    ///   - synchronous: `.full` to sync every commit to the disk before it is answered.
    ///   - busyTimeout: how long a change waits for a lock held by another connection before it
    ///     fails (5 seconds by default).
    /// - Throws: ``Failure`` naming the file and the reason: the directory cannot be used, the
    ///   file is not a (ChatCave) database or is damaged, its schema is newer than this server's,
    ///   the legacy file cannot be read.
    init(directory: URL, synchronous: SQLiteConnection.Synchronous = .full, busyTimeout: Duration = .seconds(5)) throws(Failure) {
        let path = directory.appendingPathComponent(Self.fileName).path
        let connection: SQLiteConnection
        do {
            try DataDirectory.prepare(directory)
            try DataDirectory.makePrivate(path, create: true)
            for companion in [path + "-wal", path + "-shm"] { try DataDirectory.makePrivate(companion, create: false) }
            connection = try SQLiteConnection(path: path, busyTimeout: busyTimeout)
            try Self.configure(connection, synchronous: synchronous)
            try SQLiteSchema.migrate(connection)
            try Self.importLegacyFile(in: directory, into: connection)
        } catch let error as SQLiteError where error.isCorruption {
            throw Failure(description: "\(path) is not a ChatCave database or is damaged (\(error)); the server will not start, and the file was left as it is")
        } catch {
            throw Failure(description: "cannot use \(path): \(error)")
        }
        self.path = path
        self.connection = Mutex(connection)
    }

    /// Reads the header (a damaged file fails here, before anything is written), then switches
    /// to WAL mode and sets the durability of commits.
    private static func configure(_ connection: SQLiteConnection, synchronous: SQLiteConnection.Synchronous) throws {
        _ = try connection.query("SELECT count(*) FROM sqlite_master") { $0.integer(0) }
        let mode = try connection.query("PRAGMA journal_mode = WAL") { $0.text(0) }.first ?? nil
        guard mode?.lowercased() == "wal" else {
            throw Failure(description: "\(connection.path) cannot be switched to WAL mode (it stays in \(mode ?? "an unknown") mode)")
        }
        try connection.execute("PRAGMA synchronous = \(synchronous.rawValue)")
        try connection.execute("PRAGMA foreign_keys = OFF; PRAGMA temp_store = MEMORY")
    }

    /// Runs one change in one transaction: what `body` does is committed before this returns,
    /// or rolled back when `body` throws or the commit fails.
    /// - Returns: what `body` returned.
    /// - Throws: the ``APIError`` `body` threw (its refusal), or ``APIError/notSaved`` when SQLite
    ///   failed (the reason goes to standard error).
    func write<Value: Sendable>(_ body: @Sendable (SQLiteConnection) throws -> Value) throws(APIError) -> Value {
        do {
            return try connection.withLock { connection in try connection.transaction(body) }
        } catch let refusal as APIError {
            throw refusal
        } catch {
            Self.report("\(error); the change was not made")
            throw .notSaved
        }
    }

    /// Runs reads on the connection, under its lock.
    /// - Returns: what `body` returned.
    /// - Throws: the ``APIError`` `body` threw (a 404), or ``APIError/storeFailed`` when SQLite
    ///   failed (the reason goes to standard error).
    func read<Value: Sendable>(_ body: @Sendable (SQLiteConnection) throws -> Value) throws(APIError) -> Value {
        do {
            return try connection.withLock { connection in try body(connection) }
        } catch let refusal as APIError {
            throw refusal
        } catch {
            Self.report("\(error); the read failed")
            throw .storeFailed
        }
    }

    private static func report(_ text: String) {
        FileHandle.standardError.write(Data("chatcave: \(text)\n".utf8))
    }
}

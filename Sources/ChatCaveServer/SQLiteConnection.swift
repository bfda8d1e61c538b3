import CSQLite

/// One connection to an SQLite database file, with its prepared statements cached by SQL text.
///
/// Not thread-safe: its owner (``SQLiteChatStore``) keeps it in a `Mutex` and uses it from one
/// thread at a time. The connection is opened without SQLite's own mutex (`NOMUTEX`) for that
/// reason, and never creates the file: its owner creates it first, with the mode it wants.
final class SQLiteConnection {
    /// How SQLite makes a commit durable before it returns.
    enum Synchronous: String, Sendable {
        /// `FULL`: every commit is synced to the disk.
        case full = "FULL"
        /// `NORMAL`: in WAL mode, commits are synced only at checkpoints.
        case normal = "NORMAL"
    }

    /// The database file.
    let path: String
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens an existing database file for reading and writing.
    /// - Parameters:
    ///   - path: the file, which must exist.
    ///   - busyTimeout: how long a statement waits for a lock another connection holds.
    /// - Throws: ``SQLiteError`` when the file cannot be opened.
    init(path: String, busyTimeout: Duration) throws(SQLiteError) {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw SQLiteError(code: code, description: "cannot open \(path): \(message)")
        }
        self.path = path
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        let (seconds, attoseconds) = busyTimeout.components
        sqlite3_busy_timeout(handle, Int32(clamping: seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
    }

    deinit {
        statements.removeAll()  // every statement is finalized before the connection closes
        sqlite3_close_v2(handle)
    }

    /// Runs SQL text that may hold several statements and returns no rows (schema, pragmas,
    /// transaction control). Not cached.
    /// - Throws: ``SQLiteError`` when a statement fails.
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            throw SQLiteError(code: sqlite3_extended_errcode(handle), description: "\(text) (SQLite code \(code), in: \(sql.prefix(80)))")
        }
    }

    /// Runs one statement (cached) with `values` bound and reads every row it returns.
    /// - Parameters:
    ///   - sql: the statement, with `?1`, `?2`… parameters.
    ///   - values: the parameters' values.
    ///   - row: reads one row.
    /// - Returns: what `row` read, row by row.
    /// - Throws: ``SQLiteError`` when the statement fails.
    func query<Row>(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) -> Row) throws(SQLiteError) -> [Row] {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(values)
        var rows: [Row] = []
        while try statement.step() { rows.append(row(statement)) }
        return rows
    }

    /// Runs one statement (cached) with `values` bound, ignoring any rows.
    /// - Throws: ``SQLiteError`` when the statement fails (a constraint, a full disk, a lock…).
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() {}
    }

    /// The number of rows the last `INSERT`, `UPDATE` or `DELETE` changed.
    var changes: Int {
        Int(sqlite3_changes64(handle))
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`, so the write lock is taken at once)
    /// and commits it; when `body` throws, or the commit fails, everything it did is rolled back.
    /// - Returns: what `body` returned, once committed.
    /// - Throws: what `body` threw, or ``SQLiteError`` when the transaction cannot begin or commit.
    func transaction<Value>(_ body: (SQLiteConnection) throws -> Value) throws -> Value {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body(self)
            try execute("COMMIT")
            return value
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { try? execute("ROLLBACK") }
            throw error
        }
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        let statement = try SQLiteStatement(sql: sql, connection: handle)
        statements[sql] = statement
        return statement
    }
}

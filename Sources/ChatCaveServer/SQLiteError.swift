import CSQLite

/// A failure reported by SQLite: its result code and its message, with what was being done.
struct SQLiteError: Error, CustomStringConvertible {
    /// SQLite's (extended) result code, e.g. 26 for `SQLITE_NOTADB`.
    let code: Int32
    /// What was being done and SQLite's explanation.
    let description: String

    /// Whether SQLite says the file is not a database, or a damaged one.
    var isCorruption: Bool {
        let primary = code & 0xFF
        return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT
    }

    /// Whether another connection holds the lock that was needed.
    var isBusy: Bool {
        let primary = code & 0xFF
        return primary == SQLITE_BUSY || primary == SQLITE_LOCKED
    }
}

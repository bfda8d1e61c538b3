import CSQLite

/// A value bound to a parameter of a ``SQLiteStatement``.
enum SQLiteValue {
    /// `TEXT`.
    case text(String)
    /// `INTEGER`.
    case integer(Int64)
    /// `NULL`.
    case null

    /// Text, or `NULL` for `nil`.
    static func optional(_ text: String?) -> SQLiteValue {
        text.map { .text($0) } ?? .null
    }
}

/// One prepared SQL statement, compiled once and reused by its ``SQLiteConnection``.
///
/// Not thread-safe: it belongs to its connection, which is used by one thread at a time.
final class SQLiteStatement {
    private let pointer: OpaquePointer
    private let connection: OpaquePointer

    /// Compiles `sql` on `connection`, marked as long-lived (SQLite keeps it out of its
    /// lookaside memory).
    /// - Throws: ``SQLiteError`` when the SQL does not compile.
    init(sql: String, connection: OpaquePointer) throws(SQLiteError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw SQLiteError(code: code, description: "cannot prepare \(sql): \(String(cString: sqlite3_errmsg(connection)))")
        }
        self.pointer = statement
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(pointer)
    }

    /// Binds `values` to the parameters `?1`, `?2`… (earlier bindings are replaced).
    /// - Throws: ``SQLiteError`` when a value cannot be bound.
    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_reset(pointer)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .text(var text):
                code = text.withUTF8 { bytes in
                    // An empty buffer may have no address, and a null pointer would bind NULL.
                    guard let base = bytes.baseAddress, !bytes.isEmpty else { return courier_sqlite_bind_text(pointer, index, "", 0) }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        courier_sqlite_bind_text(pointer, index, $0, Int32(bytes.count))
                    }
                }
            case .integer(let number):
                code = sqlite3_bind_int64(pointer, index, number)
            case .null:
                code = sqlite3_bind_null(pointer, index)
            }
            guard code == SQLITE_OK else { throw failure(code, "cannot bind parameter \(index)") }
        }
    }

    /// Runs the statement one step.
    /// - Returns: `true` when a row is ready to be read, `false` when the statement is done.
    /// - Throws: ``SQLiteError`` for any failure (a constraint, a full disk, a lock, corruption).
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(pointer)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw failure(sqlite3_extended_errcode(connection), "cannot run \(String(cString: sqlite3_sql(pointer)))")
        }
    }

    /// Ends the current run, so that the statement holds no lock and can run again.
    func reset() {
        sqlite3_reset(pointer)
    }

    /// The text of `column` in the current row, or `nil` for `NULL`.
    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(pointer, column) else { return nil }
        let count = Int(sqlite3_column_bytes(pointer, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The integer of `column` in the current row (0 for `NULL`).
    func integer(_ column: Int32) -> Int64 {
        sqlite3_column_int64(pointer, column)
    }

    private func failure(_ code: Int32, _ doing: String) -> SQLiteError {
        SQLiteError(code: code, description: "\(doing): \(String(cString: sqlite3_errmsg(connection))) (SQLite code \(code))")
    }
}

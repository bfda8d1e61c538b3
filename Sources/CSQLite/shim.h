#ifndef COURIER_CSQLITE_SHIM_H
#define COURIER_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, a macro Swift cannot import; this
// helper binds text that SQLite copies at once, so the Swift string may go away after the call.

/// sqlite3_bind_text with SQLITE_TRANSIENT: SQLite keeps its own copy of the bytes.
static inline int courier_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
#endif

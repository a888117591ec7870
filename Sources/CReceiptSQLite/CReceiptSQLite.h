#include <sqlite3.h>

/// Turns off SQLite's memory statistics (`SQLITE_CONFIG_MEMSTATUS`), which otherwise take one process-wide
/// mutex around every allocation of every connection. Only takes effect before SQLite is initialized (before the
/// first connection is opened); returns SQLite's result code (`SQLITE_MISUSE` when it was too late).
static inline int CReceiptSQLite_disableMemoryStatistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

// SQLite, opened at its first use rather than when `receipt` starts: only a ledger needs it, and `receipt verify`
// and the other commands that keep none start faster without loading it. This target defines the SQLite functions
// the ledger calls, each forwarding to SQLite's own once it is open.
#ifndef C_RECEIPT_SQLITE_H
#define C_RECEIPT_SQLITE_H

#include <sqlite3.h>

/// Opens SQLite (`libsqlite3.so.0`) if it is not open yet. Returns NULL once it is open; otherwise why it cannot be
/// (dlerror's words), the same text on every call. Call it, and get NULL, before opening a database: the other
/// functions take a connection or a statement, which only an open SQLite can have made.
const char *CReceiptSQLite_open(void);

/// Turns off SQLite's memory statistics (`SQLITE_CONFIG_MEMSTATUS`), which otherwise take one process-wide mutex
/// around every allocation of every connection. Only takes effect before SQLite is initialized (before the first
/// connection is opened); returns SQLite's result code (`SQLITE_MISUSE` when it was too late). SQLite must be open.
int CReceiptSQLite_disableMemoryStatistics(void);

#endif

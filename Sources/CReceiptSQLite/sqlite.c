#include "CReceiptSQLite.h"

#include <CReceiptLibraryLoading.h>

/* The SQLite functions the ledger calls, each forwarded below. */
#define SQLITE_FUNCTIONS(X)                                                                                         \
    X(sqlite3_config) X(sqlite3_open_v2) X(sqlite3_close_v2) X(sqlite3_db_readonly) X(sqlite3_exec)               \
    X(sqlite3_errmsg) X(sqlite3_errstr) X(sqlite3_get_autocommit) X(sqlite3_prepare_v3) X(sqlite3_finalize)       \
    X(sqlite3_reset) X(sqlite3_clear_bindings) X(sqlite3_step) X(sqlite3_bind_int64) X(sqlite3_bind_null)         \
    X(sqlite3_bind_text64) X(sqlite3_column_type) X(sqlite3_column_int64) X(sqlite3_column_text)                  \
    X(sqlite3_column_bytes)

RECEIPT_LIBRARY_FUNCTIONS(sqlite, "libsqlite3.so.0", SQLITE_FUNCTIONS);
/* SQLite's own `name`, once open. */
#define SQLITE(name) RECEIPT_LIBRARY_FUNCTION(sqlite, name)

const char *CReceiptSQLite_open(void) { return receipt_library_open(&sqlite); }

int CReceiptSQLite_disableMemoryStatistics(void) { return SQLITE(sqlite3_config)(SQLITE_CONFIG_MEMSTATUS, 0); }

int sqlite3_open_v2(const char *filename, sqlite3 **ppDb, int flags, const char *zVfs) {
    if (CReceiptSQLite_open() != NULL) return SQLITE_CANTOPEN;
    return SQLITE(sqlite3_open_v2)(filename, ppDb, flags, zVfs);
}

/* NULL is allowed and does nothing, as in SQLite, with or without SQLite open. */
int sqlite3_close_v2(sqlite3 *db) { return db == NULL ? SQLITE_OK : SQLITE(sqlite3_close_v2)(db); }

int sqlite3_db_readonly(sqlite3 *db, const char *zDbName) { return SQLITE(sqlite3_db_readonly)(db, zDbName); }

int sqlite3_exec(sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **), void *argument,
                 char **errmsg) {
    return SQLITE(sqlite3_exec)(db, sql, callback, argument, errmsg);
}

const char *sqlite3_errmsg(sqlite3 *db) { return SQLITE(sqlite3_errmsg)(db); }

const char *sqlite3_errstr(int status) { return SQLITE(sqlite3_errstr)(status); }

int sqlite3_get_autocommit(sqlite3 *db) { return SQLITE(sqlite3_get_autocommit)(db); }

int sqlite3_prepare_v3(sqlite3 *db, const char *zSql, int nByte, unsigned int prepFlags, sqlite3_stmt **ppStmt,
                       const char **pzTail) {
    return SQLITE(sqlite3_prepare_v3)(db, zSql, nByte, prepFlags, ppStmt, pzTail);
}

/* NULL is allowed and does nothing, as in SQLite, with or without SQLite open. */
int sqlite3_finalize(sqlite3_stmt *pStmt) { return pStmt == NULL ? SQLITE_OK : SQLITE(sqlite3_finalize)(pStmt); }

int sqlite3_reset(sqlite3_stmt *pStmt) { return SQLITE(sqlite3_reset)(pStmt); }

int sqlite3_clear_bindings(sqlite3_stmt *pStmt) { return SQLITE(sqlite3_clear_bindings)(pStmt); }

int sqlite3_step(sqlite3_stmt *pStmt) { return SQLITE(sqlite3_step)(pStmt); }

int sqlite3_bind_int64(sqlite3_stmt *pStmt, int index, sqlite3_int64 value) {
    return SQLITE(sqlite3_bind_int64)(pStmt, index, value);
}

int sqlite3_bind_null(sqlite3_stmt *pStmt, int index) { return SQLITE(sqlite3_bind_null)(pStmt, index); }

int sqlite3_bind_text64(sqlite3_stmt *pStmt, int index, const char *text, sqlite3_uint64 length,
                        void (*destructor)(void *), unsigned char encoding) {
    return SQLITE(sqlite3_bind_text64)(pStmt, index, text, length, destructor, encoding);
}

int sqlite3_column_type(sqlite3_stmt *pStmt, int iCol) { return SQLITE(sqlite3_column_type)(pStmt, iCol); }

sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *pStmt, int iCol) {
    return SQLITE(sqlite3_column_int64)(pStmt, iCol);
}

const unsigned char *sqlite3_column_text(sqlite3_stmt *pStmt, int iCol) {
    return SQLITE(sqlite3_column_text)(pStmt, iCol);
}

int sqlite3_column_bytes(sqlite3_stmt *pStmt, int iCol) { return SQLITE(sqlite3_column_bytes)(pStmt, iCol); }

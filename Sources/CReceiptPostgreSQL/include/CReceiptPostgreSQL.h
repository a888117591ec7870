// libpq, PostgreSQL's client library, opened at its first use rather than when `receipt` starts: only a ledger on
// PostgreSQL needs it, and with its dependencies (Kerberos, LDAP, TLS) it would add about a millisecond and a half
// to every run of the command. This target defines the libpq functions the ledger calls, each forwarding to
// libpq's own once it is open.
#ifndef C_RECEIPT_POSTGRESQL_H
#define C_RECEIPT_POSTGRESQL_H

#include <postgresql/libpq-fe.h>

/// Opens libpq (`libpq.so.5`) if it is not open yet. Returns NULL once it is open; otherwise why it cannot be
/// (dlerror's words), the same text on every call. Call it, and get NULL, before any other libpq function: the
/// functions that take a connection or a result can only have been given one by an open libpq.
const char *CReceiptPQ_open(void);

#endif

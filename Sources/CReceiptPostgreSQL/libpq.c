#include "CReceiptPostgreSQL.h"

#include <CReceiptLibraryLoading.h>

/* The libpq functions the ledger calls, each forwarded below. */
#define LIBPQ_FUNCTIONS(X)                                                                                          \
    X(PQconnectdbParams) X(PQfinish) X(PQstatus) X(PQtransactionStatus) X(PQerrorMessage) X(PQexecParams)          \
    X(PQresultStatus) X(PQresultErrorMessage) X(PQresultErrorField) X(PQntuples) X(PQnfields) X(PQgetvalue)        \
    X(PQgetlength) X(PQgetisnull) X(PQcmdStatus) X(PQcmdTuples) X(PQclear)

RECEIPT_LIBRARY_FUNCTIONS(libpq, "libpq.so.5", LIBPQ_FUNCTIONS);
/* libpq's own `name`, once open. */
#define LIBPQ(name) RECEIPT_LIBRARY_FUNCTION(libpq, name)

const char *CReceiptPQ_open(void) { return receipt_library_open(&libpq); }

PGconn *PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) {
    return CReceiptPQ_open() == NULL ? LIBPQ(PQconnectdbParams)(keywords, values, expand_dbname) : NULL;
}

/* NULL is allowed and does nothing, as in libpq, with or without libpq open. */
void PQfinish(PGconn *conn) {
    if (conn != NULL) LIBPQ(PQfinish)(conn);
}

ConnStatusType PQstatus(const PGconn *conn) { return LIBPQ(PQstatus)(conn); }

PGTransactionStatusType PQtransactionStatus(const PGconn *conn) { return LIBPQ(PQtransactionStatus)(conn); }

char *PQerrorMessage(const PGconn *conn) { return LIBPQ(PQerrorMessage)(conn); }

PGresult *PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                       const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                       int resultFormat) {
    return LIBPQ(PQexecParams)(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                               resultFormat);
}

ExecStatusType PQresultStatus(const PGresult *res) { return LIBPQ(PQresultStatus)(res); }

char *PQresultErrorMessage(const PGresult *res) { return LIBPQ(PQresultErrorMessage)(res); }

char *PQresultErrorField(const PGresult *res, int fieldcode) { return LIBPQ(PQresultErrorField)(res, fieldcode); }

int PQntuples(const PGresult *res) { return LIBPQ(PQntuples)(res); }

int PQnfields(const PGresult *res) { return LIBPQ(PQnfields)(res); }

char *PQgetvalue(const PGresult *res, int tup_num, int field_num) {
    return LIBPQ(PQgetvalue)(res, tup_num, field_num);
}

int PQgetlength(const PGresult *res, int tup_num, int field_num) {
    return LIBPQ(PQgetlength)(res, tup_num, field_num);
}

int PQgetisnull(const PGresult *res, int tup_num, int field_num) {
    return LIBPQ(PQgetisnull)(res, tup_num, field_num);
}

char *PQcmdStatus(PGresult *res) { return LIBPQ(PQcmdStatus)(res); }

char *PQcmdTuples(PGresult *res) { return LIBPQ(PQcmdTuples)(res); }

/* NULL is allowed and does nothing, as in libpq, with or without libpq open. */
void PQclear(PGresult *res) {
    if (res != NULL) LIBPQ(PQclear)(res);
}

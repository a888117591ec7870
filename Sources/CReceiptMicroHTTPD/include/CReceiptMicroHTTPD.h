// GNU libmicrohttpd, opened at its first use rather than when `receipt` starts: only `receipt serve` needs it, and
// with its dependencies (GnuTLS and what GnuTLS loads) it would add about a millisecond to every run of the
// command. This target defines the libmicrohttpd functions the server calls, each forwarding to libmicrohttpd's own
// once it is open; the helpers below are for what Swift cannot call.
#ifndef C_RECEIPT_MICROHTTPD_H
#define C_RECEIPT_MICROHTTPD_H

#include <sys/socket.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <microhttpd.h>

/// Opens libmicrohttpd (`libmicrohttpd.so.12`) if it is not open yet. Returns NULL once it is open; otherwise why it
/// cannot be (dlerror's words), the same text on every call. Call it, and get NULL, before starting a daemon: the
/// server calls the other functions only while a daemon it started runs.
const char *CReceiptMHD_open(void);

/* MHD_get_connection_info is variadic, which Swift cannot call: one wrapper for each piece of information the
   server reads. Each returns the "none" value when libmicrohttpd has no answer. */

/* The connection's socket (MHD_CONNECTION_INFO_CONNECTION_FD), or -1. */
static inline int CReceiptMHD_connectionDescriptor(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* The pointer the "connection started" notification stored (MHD_CONNECTION_INFO_SOCKET_CONTEXT), or NULL. */
static inline void *CReceiptMHD_socketContext(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/* The length of the current request's head (MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE), or 0. */
static inline size_t CReceiptMHD_requestHeaderSize(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

/* Whether libmicrohttpd is past reading the current request's head, which it is also when it refuses a head it
   could not finish reading (MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE has an answer, possibly 0). */
static inline bool CReceiptMHD_isPastHead(struct MHD_Connection *connection) {
    return MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE) != NULL;
}

/* The status of the response queued on the connection (MHD_CONNECTION_INFO_HTTP_STATUS), or 0 when none is. */
static inline unsigned int CReceiptMHD_queuedStatus(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_HTTP_STATUS);
    return info == NULL ? 0 : info->http_status;
}

/* Whether a line of libmicrohttpd's log (its format and arguments, as an MHD_OPTION_EXTERNAL_LOGGER callback
   receives them) announces an error answer of its own, the one it writes for a request it refuses before the
   access handler is called: then returns that answer's HTTP status and points `message` at its HTML text;
   otherwise returns 0 and leaves `arguments` unread. The line is libmicrohttpd 0.9.75's
   "Error processing request (HTTP response code is %u ('%s')). Closing connection." */
static inline unsigned int CReceiptMHD_errorAnswerStatus(const char *format, va_list arguments,
                                                         const char **message) {
    static const char prefix[] = "Error processing request (HTTP response code is %u";
    if (format == NULL || strncmp(format, prefix, sizeof prefix - 1) != 0) {
        return 0;
    }
    unsigned int status = va_arg(arguments, unsigned int);
    *message = va_arg(arguments, const char *);
    return status;
}

#endif

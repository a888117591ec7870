#include <sys/socket.h>
#include <stdarg.h>
#include <microhttpd.h>

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

#include "CReceiptMicroHTTPD.h"

#include <CReceiptLibraryLoading.h>

/* The libmicrohttpd functions the server calls, each forwarded below. */
#define LIBMICROHTTPD_FUNCTIONS(X)                                                                                  \
    X(MHD_start_daemon_va) X(MHD_stop_daemon) X(MHD_add_connection) X(MHD_get_connection_info)                     \
    X(MHD_get_connection_values_n) X(MHD_suspend_connection) X(MHD_resume_connection)                              \
    X(MHD_create_response_from_buffer) X(MHD_add_response_header) X(MHD_queue_response) X(MHD_destroy_response)

RECEIPT_LIBRARY_FUNCTIONS(libmicrohttpd, "libmicrohttpd.so.12", LIBMICROHTTPD_FUNCTIONS);
/* libmicrohttpd's own `name`, once open. */
#define LIBMICROHTTPD(name) RECEIPT_LIBRARY_FUNCTION(libmicrohttpd, name)

const char *CReceiptMHD_open(void) { return receipt_library_open(&libmicrohttpd); }

struct MHD_Daemon *MHD_start_daemon_va(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                       void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, va_list ap) {
    if (CReceiptMHD_open() != NULL) return NULL;
    return LIBMICROHTTPD(MHD_start_daemon_va)(flags, port, apc, apc_cls, dh, dh_cls, ap);
}

void MHD_stop_daemon(struct MHD_Daemon *daemon) { LIBMICROHTTPD(MHD_stop_daemon)(daemon); }

enum MHD_Result MHD_add_connection(struct MHD_Daemon *daemon, MHD_socket client_socket, const struct sockaddr *addr,
                                   socklen_t addrlen) {
    return LIBMICROHTTPD(MHD_add_connection)(daemon, client_socket, addr, addrlen);
}

/* Forwarded with no arguments after `info_type`: the kinds of information the server asks for (the socket, the
   socket context, the request head's size, the queued status) take none. */
const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
                                                        enum MHD_ConnectionInfoType info_type, ...) {
    return LIBMICROHTTPD(MHD_get_connection_info)(connection, info_type);
}

int MHD_get_connection_values_n(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                MHD_KeyValueIteratorN iterator, void *iterator_cls) {
    return LIBMICROHTTPD(MHD_get_connection_values_n)(connection, kind, iterator, iterator_cls);
}

void MHD_suspend_connection(struct MHD_Connection *connection) {
    LIBMICROHTTPD(MHD_suspend_connection)(connection);
}

void MHD_resume_connection(struct MHD_Connection *connection) { LIBMICROHTTPD(MHD_resume_connection)(connection); }

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode) {
    return LIBMICROHTTPD(MHD_create_response_from_buffer)(size, buffer, mode);
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header, const char *content) {
    return LIBMICROHTTPD(MHD_add_response_header)(response, header, content);
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response) {
    return LIBMICROHTTPD(MHD_queue_response)(connection, status_code, response);
}

void MHD_destroy_response(struct MHD_Response *response) { LIBMICROHTTPD(MHD_destroy_response)(response); }

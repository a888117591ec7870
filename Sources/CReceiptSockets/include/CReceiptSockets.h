/* The Linux socket interfaces Glibc's module does not export or that want a few lines of C: for the HTTP server's
   connection gate beside libmicrohttpd, epoll and eventfd, and accept4 (declared only under _GNU_SOURCE); for the
   HTTP client, a connect, send and receive that each end by a deadline. They live apart from CReceiptMicroHTTPD
   because, added to its header (which includes <sys/socket.h>), they made SOCK_* invisible to HTTPServer's files
   that import only Glibc, in release builds; this header includes no socket header. */
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

/* accept4(descriptor, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC); address is a struct sockaddr. */
int CReceiptSockets_acceptNonBlocking(int descriptor, void *address, unsigned int *length);

/* How a client socket call ended. */
typedef enum __attribute__((enum_extensibility(closed))) {
    CReceiptSockets_OutcomeOk,
    /* The deadline passed first. */
    CReceiptSockets_OutcomeTimedOut,
    /* getaddrinfo failed; the code is its EAI_* value (never EAI_SYSTEM, which is reported as a system failure). */
    CReceiptSockets_OutcomeResolveFailed,
    /* A system call failed (socket, connect, poll, send, recv); the code is errno. */
    CReceiptSockets_OutcomeSystemFailed,
    /* The peer closed the connection: end of stream (code 0), or ECONNRESET or EPIPE (the code). */
    CReceiptSockets_OutcomeClosedByPeer,
} CReceiptSockets_Outcome;

/* What a client socket call reports beside its return value. */
typedef struct {
    CReceiptSockets_Outcome outcome;
    /* errno or EAI_* code, as the outcome says; 0 when there is none. */
    int code;
    /* How many of the resolved addresses CReceiptSockets_connect tried. */
    int addressesTried;
} CReceiptSockets_Status;

/* CLOCK_MONOTONIC in milliseconds: the clock of every deadline below. */
int64_t CReceiptSockets_monotonicMilliseconds(void);

/* Resolves host and port (decimal) with getaddrinfo and tries each address in the order returned, each with a
   non-blocking connect that may use an equal share of the time left before the deadline. Returns a connected,
   non-blocking, close-on-exec TCP descriptor that the caller must close, or -1 with status saying why the last
   attempt failed (nothing is left open then). getaddrinfo itself cannot be interrupted: a slow name server holds
   the call for as long as the resolver's own timeouts allow. */
int CReceiptSockets_connect(const char *host, const char *port, int64_t deadline, CReceiptSockets_Status *status);

/* Sends all count bytes on a non-blocking descriptor with MSG_NOSIGNAL (a closed peer is an outcome, never
   SIGPIPE), waiting with poll while the send buffer is full; stops when the deadline passes. */
CReceiptSockets_Status CReceiptSockets_sendAll(int descriptor, const void *bytes, size_t count, int64_t deadline);

/* Receives at most capacity bytes from a non-blocking descriptor, waiting with poll for the time left before the
   deadline, which is checked before every recv (a peer that sends without end is still cut at the deadline).
   Returns the count received (> 0), 0 when the peer closed the connection (end of stream or reset; status says
   which), or -1 with status saying why. */
long CReceiptSockets_receive(int descriptor, void *buffer, size_t capacity, int64_t deadline,
                             CReceiptSockets_Status *status);

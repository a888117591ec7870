/* The Linux interfaces the HTTP server's connection gate uses beside libmicrohttpd, which Glibc's module does not
   export: epoll and eventfd, and accept4 (declared only under _GNU_SOURCE). They live apart from
   CReceiptMicroHTTPD because, added to its header (which includes <sys/socket.h>), they made SOCK_* invisible to
   HTTPServer's files that import only Glibc, in release builds; this header includes no socket header. */
#include <sys/epoll.h>
#include <sys/eventfd.h>

/* accept4(descriptor, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC); address is a struct sockaddr. */
int CReceiptSockets_acceptNonBlocking(int descriptor, void *address, unsigned int *length);

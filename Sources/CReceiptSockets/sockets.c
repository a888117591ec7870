#define _GNU_SOURCE
#include <sys/socket.h>
#include "CReceiptSockets.h"

int CReceiptSockets_acceptNonBlocking(int descriptor, void *address, unsigned int *length) {
    return accept4(descriptor, (struct sockaddr *)address, (socklen_t *)length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "CReceiptSockets.h"

int64_t CReceiptSockets_monotonicMilliseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static CReceiptSockets_Status status_of(CReceiptSockets_Outcome outcome, int code) {
    CReceiptSockets_Status status = {outcome, code, 0};
    return status;
}

/* Waits with poll until the descriptor is ready for events (or has an error or hang-up, which the next call
   reports), or the deadline passes. */
static CReceiptSockets_Status wait_for(int descriptor, short events, int64_t deadline) {
    for (;;) {
        int64_t remaining = deadline - CReceiptSockets_monotonicMilliseconds();
        if (remaining <= 0) {
            return status_of(CReceiptSockets_OutcomeTimedOut, 0);
        }
        struct pollfd entry = {descriptor, events, 0};
        int ready = poll(&entry, 1, remaining > INT_MAX ? INT_MAX : (int)remaining);
        if (ready > 0) {
            return status_of(CReceiptSockets_OutcomeOk, 0);
        }
        if (ready < 0 && errno != EINTR) {
            return status_of(CReceiptSockets_OutcomeSystemFailed, errno);
        }
    }
}

/* One address: a connected descriptor, or -1 with the reason in status and nothing left open. */
static int connect_one(const struct addrinfo *address, int64_t deadline, CReceiptSockets_Status *status) {
    int descriptor = socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            address->ai_protocol);
    if (descriptor < 0) {
        *status = status_of(CReceiptSockets_OutcomeSystemFailed, errno);
        return -1;
    }
    if (connect(descriptor, address->ai_addr, address->ai_addrlen) == 0) {
        return descriptor;
    }
    if (errno != EINPROGRESS) {
        *status = status_of(CReceiptSockets_OutcomeSystemFailed, errno);
        close(descriptor);
        return -1;
    }
    *status = wait_for(descriptor, POLLOUT, deadline);
    if (status->outcome == CReceiptSockets_OutcomeOk) {
        int error = 0;
        socklen_t length = sizeof error;
        if (getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
            error = errno;
        }
        if (error == 0) {
            return descriptor;
        }
        *status = status_of(CReceiptSockets_OutcomeSystemFailed, error);
    }
    close(descriptor);
    return -1;
}

int CReceiptSockets_connect(const char *host, const char *port, int64_t deadline, CReceiptSockets_Status *status) {
    struct addrinfo hints = {0};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    struct addrinfo *results = NULL;
    int resolved = getaddrinfo(host, port, &hints, &results);
    if (resolved != 0) {
        *status = resolved == EAI_SYSTEM ? status_of(CReceiptSockets_OutcomeSystemFailed, errno)
                                         : status_of(CReceiptSockets_OutcomeResolveFailed, resolved);
        return -1;
    }
    int count = 0;
    for (const struct addrinfo *address = results; address != NULL; address = address->ai_next) {
        count += 1;
    }
    *status = status_of(CReceiptSockets_OutcomeResolveFailed, EAI_NONAME);
    int descriptor = -1;
    int tried = 0;
    for (const struct addrinfo *address = results; address != NULL && descriptor < 0; address = address->ai_next) {
        int64_t now = CReceiptSockets_monotonicMilliseconds();
        if (now >= deadline) {
            *status = status_of(CReceiptSockets_OutcomeTimedOut, 0);
            break;
        }
        int64_t share = now + (deadline - now) / (count - tried);
        tried += 1;
        descriptor = connect_one(address, share, status);
    }
    freeaddrinfo(results);
    status->addressesTried = tried;
    return descriptor;
}

CReceiptSockets_Status CReceiptSockets_sendAll(int descriptor, const void *bytes, size_t count, int64_t deadline) {
    const unsigned char *next = bytes;
    size_t left = count;
    while (left > 0) {
        if (CReceiptSockets_monotonicMilliseconds() >= deadline) {
            return status_of(CReceiptSockets_OutcomeTimedOut, 0);
        }
        ssize_t sent = send(descriptor, next, left, MSG_NOSIGNAL);
        if (sent > 0) {
            next += sent;
            left -= (size_t)sent;
        } else if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            CReceiptSockets_Status waited = wait_for(descriptor, POLLOUT, deadline);
            if (waited.outcome != CReceiptSockets_OutcomeOk) {
                return waited;
            }
        } else if (sent < 0 && (errno == EPIPE || errno == ECONNRESET)) {
            return status_of(CReceiptSockets_OutcomeClosedByPeer, errno);
        } else if (sent < 0 && errno != EINTR) {
            return status_of(CReceiptSockets_OutcomeSystemFailed, errno);
        }
    }
    return status_of(CReceiptSockets_OutcomeOk, 0);
}

long CReceiptSockets_receive(int descriptor, void *buffer, size_t capacity, int64_t deadline,
                             CReceiptSockets_Status *status) {
    for (;;) {
        if (CReceiptSockets_monotonicMilliseconds() >= deadline) {
            *status = status_of(CReceiptSockets_OutcomeTimedOut, 0);
            return -1;
        }
        ssize_t received = recv(descriptor, buffer, capacity, 0);
        if (received > 0) {
            *status = status_of(CReceiptSockets_OutcomeOk, 0);
            return received;
        }
        if (received == 0 || errno == ECONNRESET) {
            *status = status_of(CReceiptSockets_OutcomeClosedByPeer, received == 0 ? 0 : ECONNRESET);
            return 0;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            *status = wait_for(descriptor, POLLIN, deadline);
            if (status->outcome != CReceiptSockets_OutcomeOk) {
                return -1;
            }
        } else if (errno != EINTR) {
            *status = status_of(CReceiptSockets_OutcomeSystemFailed, errno);
            return -1;
        }
    }
}

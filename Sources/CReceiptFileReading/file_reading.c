#define _GNU_SOURCE
#include "CReceiptFileReading.h"

#include <sys/uio.h>

ssize_t receipt_read_from_memory(int descriptor, void *buffer, size_t count) {
    struct iovec vector = {.iov_base = buffer, .iov_len = count};
    return preadv2(descriptor, &vector, 1, -1, RWF_NOWAIT);
}

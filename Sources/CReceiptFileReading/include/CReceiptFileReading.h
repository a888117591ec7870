// Reading a file only from memory: preadv2(2) with RWF_NOWAIT, which Swift's Glibc module leaves out (it needs
// _GNU_SOURCE), behind one function.
#ifndef C_RECEIPT_FILE_READING_H
#define C_RECEIPT_FILE_READING_H

#include <stddef.h>
#include <sys/types.h>

/// Reads up to `count` bytes of `descriptor` at its offset into `buffer` as read(2) does, but only what is in the
/// page cache: returns the bytes read (0 at the end of the file), or -1 with errno set, EAGAIN when they are not in
/// memory (Linux has then started reading them, or was reading them already) and EOPNOTSUPP where the file system
/// cannot read without waiting.
ssize_t receipt_read_from_memory(int descriptor, void *buffer, size_t count);

#endif

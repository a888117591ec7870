// Where threads run (Linux CPU affinity), and what they share: the cpu_set_t macros and unshare(2), which Swift
// cannot import, behind five functions.
#ifndef C_RECEIPT_THREAD_PLACEMENT_H
#define C_RECEIPT_THREAD_PLACEMENT_H

#include <pthread.h>
#include <sched.h>

/// Sets `attributes` so that a thread created with them starts on one of the calling thread's allowed CPUs other
/// than the one it runs on now, and stores the calling thread's allowed CPUs in `allowed`, for the new thread to
/// take back with `receipt_thread_allow`. Returns 1 when set; 0, with `attributes` unchanged, when the calling
/// thread may run on one CPU only or its CPUs cannot be read.
int receipt_thread_start_elsewhere(pthread_attr_t *attributes, cpu_set_t *allowed);

/// Sets `attributes` so that a thread created with them starts on the calling thread's allowed CPU that comes
/// `offset` places after the one it runs on now, counting the allowed CPUs in order and around (with 2 CPUs, offset
/// 1 is the other one and offset 2 the caller's own), and stores the calling thread's allowed CPUs in `allowed`.
/// Returns 1 when set; 0, with `attributes` unchanged, when the calling thread may run on one CPU only or its CPUs
/// cannot be read.
int receipt_thread_start_after(pthread_attr_t *attributes, cpu_set_t *allowed, int offset);

/// Lets the calling thread run on the CPUs in `allowed`. Returns 0, or the error number.
int receipt_thread_allow(const cpu_set_t *allowed);

/// How many CPUs the calling thread may run on, or 0 when they cannot be read.
int receipt_thread_allowed_cpu_count(void);

/// Gives the calling thread a file descriptor table of its own: a copy of the one it shared
/// (unshare(CLONE_FILES)). Returns 0, or the error number.
int receipt_thread_unshare_descriptors(void);

#endif

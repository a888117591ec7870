// For tests that need a thread to run before another: the calling thread kept to one CPU, and the threads it
// creates given the idle scheduling class (they run only when nothing else on their CPU can).
#ifndef THREAD_SCHEDULING_H
#define THREAD_SCHEDULING_H
#define _GNU_SOURCE
#include <sched.h>
/// Lets the calling thread, and the threads it creates from then on, run only on the CPU it runs on now; stores the
/// CPUs it was allowed in `previous`, for `receipt_thread_allow` (CReceiptThreadPlacement) to give back. Returns 0,
/// or the error number (the thread's CPUs then unchanged).
int thread_scheduling_keep_to_current_cpu(cpu_set_t *previous);
/// Puts the calling thread, and the threads it creates from then on, in the idle scheduling class (`SCHED_IDLE`).
/// Returns 0, or the error number. Only a thread that may raise its priority (CAP_SYS_NICE) can leave that class
/// again: call it on a thread of its own.
int thread_scheduling_become_idle(void);
#endif

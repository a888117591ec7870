#define _GNU_SOURCE
#include "CReceiptThreadPlacement.h"

#include <errno.h>

/// Reads the calling thread's allowed CPUs into `allowed` and returns the one it runs on now, or -1 when there is
/// nothing to place: its CPUs cannot be read, it may run on one only, or the current one is not among them.
static int current_cpu_among_allowed(cpu_set_t *allowed) {
    if (sched_getaffinity(0, sizeof(*allowed), allowed) != 0) return -1;
    int current = sched_getcpu();
    if (current < 0 || current >= CPU_SETSIZE || !CPU_ISSET(current, allowed) || CPU_COUNT(allowed) < 2) return -1;
    return current;
}

int receipt_thread_start_elsewhere(pthread_attr_t *attributes, cpu_set_t *allowed) {
    int current = current_cpu_among_allowed(allowed);
    if (current < 0) return 0;
    cpu_set_t elsewhere = *allowed;
    CPU_CLR(current, &elsewhere);
    return pthread_attr_setaffinity_np(attributes, sizeof(elsewhere), &elsewhere) == 0;
}

int receipt_thread_start_after(pthread_attr_t *attributes, cpu_set_t *allowed, int offset) {
    int current = current_cpu_among_allowed(allowed);
    if (current < 0 || offset < 0) return 0;
    int steps = offset % CPU_COUNT(allowed);
    int cpu = current;
    while (steps > 0) {
        cpu = (cpu + 1) % CPU_SETSIZE;
        if (CPU_ISSET(cpu, allowed)) steps -= 1;
    }
    cpu_set_t start;
    CPU_ZERO(&start);
    CPU_SET(cpu, &start);
    return pthread_attr_setaffinity_np(attributes, sizeof(start), &start) == 0;
}

int receipt_thread_allow(const cpu_set_t *allowed) {
    return sched_setaffinity(0, sizeof(*allowed), allowed) == 0 ? 0 : errno;
}

int receipt_thread_allowed_cpu_count(void) {
    cpu_set_t allowed;
    return sched_getaffinity(0, sizeof(allowed), &allowed) == 0 ? CPU_COUNT(&allowed) : 0;
}

int receipt_thread_unshare_descriptors(void) {
    return unshare(CLONE_FILES) == 0 ? 0 : errno;
}

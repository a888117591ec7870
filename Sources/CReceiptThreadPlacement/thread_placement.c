#define _GNU_SOURCE
#include "CReceiptThreadPlacement.h"

#include <errno.h>

int receipt_thread_start_elsewhere(pthread_attr_t *attributes, cpu_set_t *allowed) {
    if (sched_getaffinity(0, sizeof(*allowed), allowed) != 0) return 0;
    int current = sched_getcpu();
    if (current < 0 || current >= CPU_SETSIZE || !CPU_ISSET(current, allowed) || CPU_COUNT(allowed) < 2) return 0;
    cpu_set_t elsewhere = *allowed;
    CPU_CLR(current, &elsewhere);
    return pthread_attr_setaffinity_np(attributes, sizeof(elsewhere), &elsewhere) == 0;
}

int receipt_thread_start_after(pthread_attr_t *attributes, cpu_set_t *allowed, int offset) {
    if (sched_getaffinity(0, sizeof(*allowed), allowed) != 0) return 0;
    int current = sched_getcpu();
    int count = CPU_COUNT(allowed);
    if (current < 0 || current >= CPU_SETSIZE || !CPU_ISSET(current, allowed) || count < 2 || offset < 0) return 0;
    int steps = offset % count;
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

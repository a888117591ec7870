#include "ThreadScheduling.h"

#include <errno.h>

int thread_scheduling_keep_to_current_cpu(cpu_set_t *previous) {
    if (sched_getaffinity(0, sizeof(*previous), previous) != 0) return errno;
    int current = sched_getcpu();
    if (current < 0) return errno;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(current, &one);
    return sched_setaffinity(0, sizeof(one), &one) == 0 ? 0 : errno;
}

int thread_scheduling_become_idle(void) {
    struct sched_param parameter = {0};
    return sched_setscheduler(0, SCHED_IDLE, &parameter) == 0 ? 0 : errno;
}

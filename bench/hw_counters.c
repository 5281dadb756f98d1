/* Says whether this machine gives a process a hardware cycle counter, the
 * way libppw's sampler first asks (perf_event_open of PERF_COUNT_HW_CPU_CYCLES
 * on itself): "yes", or "no (<why>)".  bench/run prints it with the machine,
 * since without one libppw samples on the software task clock. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0) {
        printf("no (perf_event_open CPU_CYCLES: %s)\n", strerror(errno));
        return 0;
    }
    close((int)fd);
    puts("yes");
    return 0;
}

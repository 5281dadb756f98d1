/* The floor under rt-sampling: the least a perf-event sampler can do, as an
 * LD_PRELOAD library: the same software task-clock event, signal and
 * re-arm as libppw, and an empty handler (no walk, no record).  What the
 * kernel and the hypervisor charge per sample shows here; the difference
 * between this and rt-sampling is ppw's own cost.  With BARE_SAMPLES_OUT
 * set, the number of samples taken is written to that file at exit. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int event_fd = -1;
static volatile unsigned long samples_taken;

static void on_sample(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    (void)context;
    samples_taken++;
    ioctl(event_fd, PERF_EVENT_IOC_REFRESH, 1);
}

__attribute__((constructor)) static void start(void)
{
    const char *period = getenv("BARE_PERIOD_NS");
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = period ? strtoull(period, NULL, 10) : 1000000;
    attr.disabled = 1;
    attr.exclude_hv = 1;
    event_fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (event_fd < 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGRTMIN + 4, &sa, NULL);
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    fcntl(event_fd, F_SETFL, fcntl(event_fd, F_GETFL) | O_ASYNC);
    fcntl(event_fd, F_SETSIG, SIGRTMIN + 4);
    fcntl(event_fd, F_SETOWN_EX, &owner);
    ioctl(event_fd, PERF_EVENT_IOC_REFRESH, 1);
}

__attribute__((destructor)) static void finish(void)
{
    const char *path = getenv("BARE_SAMPLES_OUT");
    FILE *out = path ? fopen(path, "w") : NULL;
    if (out) {
        fprintf(out, "%lu\n", samples_taken);
        fclose(out);
    }
}

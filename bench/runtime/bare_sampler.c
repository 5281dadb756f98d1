/* The floor under rt-sampling: the least a perf-event sampler can do, as an
 * LD_PRELOAD library: the same software task-clock event, signal and
 * re-arm as libppw, and an empty handler (no walk, no record).  What the
 * kernel and the hypervisor charge per sample shows here; the difference
 * between this and rt-sampling is ppw's own cost.
 *
 * Every thread is sampled, as libppw samples them: the main thread from the
 * constructor, and every thread made with pthread_create (libomp's workers
 * included) from a trampoline that opens the thread's own event before its
 * start routine runs and closes it when the thread exits.
 *
 *   BARE_PERIOD_NS    task-clock period in ns (default 1000000: 1 ms)
 *   BARE_SAMPLES_OUT  file to which the number of samples taken, over all
 *                     threads, is written at exit */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BARE_SIGNAL (SIGRTMIN + 4)

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static atomic_ulong samples_taken;
static unsigned long long period_ns = 1000000;
static int started;
static pthread_key_t event_key; /* the thread's event fd + 1 (0: none) */

static void on_sample(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)context;
    atomic_fetch_add_explicit(&samples_taken, 1, memory_order_relaxed);
    /* si_fd is the overflowing event's fd (F_SETSIG): no thread lookup */
    ioctl(info->si_fd, PERF_EVENT_IOC_REFRESH, 1);
}

/* Opens the calling thread's event, its signal sent to this thread alone. */
static int open_event(void)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = period_ns;
    attr.disabled = 1;
    attr.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -1;
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC) != 0 ||
        fcntl(fd, F_SETSIG, BARE_SIGNAL) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0) {
        close(fd);
        return -1;
    }
    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
    pthread_setspecific(event_key, (void *)(intptr_t)(fd + 1));
    return fd;
}

/* At thread exit: block the signal first, so that no handler re-arms an fd
 * that is closed (or already reused by another thread's event). */
static void close_event(void *value)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, BARE_SIGNAL);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    close((int)(intptr_t)value - 1);
}

struct start {
    void *(*routine)(void *);
    void *arg;
};

static void *trampoline(void *p)
{
    struct start s = *(struct start *)p;
    free(p);
    open_event();
    return s.routine(s.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *),
                   void *arg)
{
    static create_fn real;
    if (!real)
        real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!real)
        return EAGAIN;
    struct start *s = started ? malloc(sizeof(*s)) : NULL;
    if (!s) /* not sampling: the thread runs as it would without us */
        return real(thread, attr, routine, arg);
    s->routine = routine;
    s->arg = arg;
    int rc = real(thread, attr, trampoline, s);
    if (rc != 0)
        free(s);
    return rc;
}

__attribute__((constructor)) static void start(void)
{
    const char *period = getenv("BARE_PERIOD_NS");
    if (period && strtoull(period, NULL, 10) > 0)
        period_ns = strtoull(period, NULL, 10);
    if (pthread_key_create(&event_key, close_event) != 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(BARE_SIGNAL, &sa, NULL);
    if (open_event() >= 0)
        started = 1;
}

__attribute__((destructor)) static void finish(void)
{
    const char *path = getenv("BARE_SAMPLES_OUT");
    FILE *out = path ? fopen(path, "w") : NULL;
    if (out) {
        fprintf(out, "%lu\n", atomic_load(&samples_taken));
        fclose(out);
    }
}

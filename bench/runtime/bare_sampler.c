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
 * BARE_MODE=kernel is the floor under perf's way instead: no signal; the
 * kernel walks the frame pointers at each overflow and writes the call
 * chain into the event's ring buffer (as `perf record -g` has it do), and
 * a thread of ours empties the rings every 10 ms, only counting what it
 * finds.  What a sampler built that way cannot go below.
 *
 * BARE_MODE=timer is kernel mode without the call chain: each sample is
 * the interrupted address and its time.  The timer interrupt and the
 * event's overflow alone, which any sampler on this machine pays, whatever
 * it does with the stack.
 *
 *   BARE_PERIOD_NS    task-clock period in ns (default 1000000: 1 ms)
 *   BARE_MODE         signal (default), kernel or timer
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
#include <sys/mman.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BARE_SIGNAL (SIGRTMIN + 4)

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static atomic_ulong samples_taken;
static unsigned long long period_ns = 1000000;
static int started;
static pthread_key_t event_key; /* the thread's event fd + 1 (0: none) */

/* Kernel mode: every thread's ring, emptied by the drainer. */
#define RING_PAGES 64 /* 256 KiB: about 1100 samples of 20 frames, 110 ms at 100 us */
#define MAX_RINGS 1024
struct ring {
    struct perf_event_mmap_page *page; /* NULL: a free entry */
    int fd;
};
static int kernel_mode; /* kernel or timer: samples into rings */
static int with_call_chain;
static struct ring rings[MAX_RINGS];
static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t drainer;
static atomic_int drainer_stop;

/* Counts the ring's samples and hands their space back; under rings_lock. */
static void drain(struct ring *r)
{
    uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = r->page->data_tail;
    const uint8_t *data = (const uint8_t *)r->page + r->page->data_offset;
    uint64_t size = r->page->data_size;
    unsigned long n = 0;
    while (tail < head) {
        struct perf_event_header h;
        uint64_t at = tail % size;
        if (at + sizeof h <= size) {
            memcpy(&h, data + at, sizeof h);
        } else { /* the header wraps */
            memcpy(&h, data + at, size - at);
            memcpy((uint8_t *)&h + (size - at), data, sizeof h - (size - at));
        }
        if (h.size == 0)
            break;
        n += h.type == PERF_RECORD_SAMPLE;
        tail += h.size;
    }
    __atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
    atomic_fetch_add_explicit(&samples_taken, n, memory_order_relaxed);
}

static void *drain_rings(void *unused)
{
    (void)unused;
    struct timespec tick = {0, 10000000};
    while (!atomic_load(&drainer_stop)) {
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&rings_lock);
        for (int i = 0; i < MAX_RINGS; i++)
            if (rings[i].page)
                drain(&rings[i]);
        pthread_mutex_unlock(&rings_lock);
    }
    return NULL;
}

/* The calling thread's ring; its slot + 1 goes in event_key. */
static int open_ring(int fd)
{
    size_t bytes = (RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
    void *page = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED)
        return -1;
    pthread_mutex_lock(&rings_lock);
    int slot = 0;
    while (slot < MAX_RINGS && rings[slot].page)
        slot++;
    if (slot < MAX_RINGS)
        rings[slot] = (struct ring){page, fd};
    pthread_mutex_unlock(&rings_lock);
    if (slot == MAX_RINGS) {
        munmap(page, bytes);
        return -1;
    }
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    pthread_setspecific(event_key, (void *)(intptr_t)(slot + 1));
    return fd;
}

static void close_ring(int slot)
{
    pthread_mutex_lock(&rings_lock);
    struct ring r = rings[slot];
    drain(&r);
    rings[slot].page = NULL;
    pthread_mutex_unlock(&rings_lock);
    munmap(r.page, (RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE));
    close(r.fd);
}

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
    if (kernel_mode) {
        attr.exclude_kernel = 1; /* what an unprivileged user may ask */
        attr.exclude_callchain_kernel = 1;
        attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
                           (with_call_chain ? PERF_SAMPLE_CALLCHAIN : PERF_SAMPLE_IP);
        if (with_call_chain)
            attr.sample_max_stack = 127; /* the kernel's default limit */
        attr.wakeup_events = 1u << 30; /* the drainer polls: no wake-ups */
    }
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (kernel_mode) {
        if (open_ring(fd) < 0) {
            close(fd);
            return -1;
        }
        return fd;
    }
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
    if (kernel_mode) {
        close_ring((int)(intptr_t)value - 1);
        return;
    }
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
    const char *mode = getenv("BARE_MODE");
    with_call_chain = mode && strcmp(mode, "kernel") == 0;
    kernel_mode = with_call_chain || (mode && strcmp(mode, "timer") == 0);
    if (pthread_key_create(&event_key, close_event) != 0)
        return;
    if (kernel_mode) {
        /* made before `started`: the drainer is not sampled */
        if (pthread_create(&drainer, NULL, drain_rings, NULL) == 0 && open_event() >= 0)
            started = 1;
        return;
    }
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
    if (kernel_mode && started) {
        atomic_store(&drainer_stop, 1);
        pthread_join(drainer, NULL);
        pthread_mutex_lock(&rings_lock);
        for (int i = 0; i < MAX_RINGS; i++)
            if (rings[i].page)
                drain(&rings[i]);
        pthread_mutex_unlock(&rings_lock);
    }
    const char *path = getenv("BARE_SAMPLES_OUT");
    FILE *out = path ? fopen(path, "w") : NULL;
    if (out) {
        fprintf(out, "%lu\n", atomic_load(&samples_taken));
        fclose(out);
    }
}

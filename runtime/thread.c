/* Per-thread state and the registry of live threads (see thread.h). */
#include "thread.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "lifecycle.h"
#include "log.h"
#include "measure.h"
#include "modules.h"
#include "ppw/run_format.h"
#include "runfile.h"
#include "sampler.h"

static PPW_TLS struct ppw_thread *self;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ppw_thread *registry;
static uint32_t next_index;

#define WALK_ENTRIES (PPW_MAX_FRAMES_LIMIT + 8)

struct ppw_thread *ppw_thread_self(void)
{
    return self;
}

struct ppw_thread *ppw_thread_swap_self(struct ppw_thread *t)
{
    struct ppw_thread *previous = self;
    self = t;
    return previous;
}

uint32_t ppw_thread_count(void)
{
    return __atomic_load_n(&next_index, __ATOMIC_RELAXED);
}

static size_t state_size(void)
{
    return sizeof(struct ppw_thread) + 2 * WALK_ENTRIES * sizeof(uint64_t);
}

static uint32_t gettid_now(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

/* CPU time of any live thread of this process, by tid (0 once it exited). */
static uint64_t cpu_ns_of(uint32_t tid)
{
    clockid_t clock = ppw_thread_cpu_clock(tid);
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Time the thread waited on a run queue, from the kernel's schedstat
 * (Linux 2.6.9+, CONFIG_SCHED_INFO): "cpu_ns runqueue_ns timeslices".
 * Raw system calls only: this can run at exit, from a signal handler. */
static uint64_t runqueue_ns_of(uint32_t tid)
{
    char path[64], buf[96];
    ppw_format(path, sizeof path, "/proc/self/task/%u/schedstat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return PPW_WAIT_UNKNOWN;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return PPW_WAIT_UNKNOWN;
    buf[n] = '\0';
    const char *p = buf;
    while (*p >= '0' && *p <= '9') /* the CPU time: CLOCK_THREAD_CPUTIME_ID says it */
        p++;
    if (*p++ != ' ' || *p < '0' || *p > '9')
        return PPW_WAIT_UNKNOWN;
    uint64_t wait = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        wait = wait * 10 + (uint64_t)(*p - '0');
    return wait;
}

static void write_begin(struct ppw_thread *t)
{
    struct ppw_rec_thread rec = {
        .index = t->index,
        .tid = t->tid,
        .parent = t->parent,
        .root_tag = t->root_tag,
        .start_routine = t->start_routine,
        .start_ns = t->start_ns,
    };
    ppw_runfile_append(PPW_RUN_THREAD, &rec, sizeof(rec), 0, NULL);
}

static void write_end(struct ppw_thread *t, uint32_t flags)
{
    struct ppw_rec_thread_end rec = {
        .index = t->index,
        .flags = flags,
        .end_ns = ppw_now_ns(),
        .cpu_ns = cpu_ns_of(t->tid),
        .samples = t->nsamples,
        .runqueue_ns = runqueue_ns_of(t->tid),
        .armed_cpu_ns = t->armed_cpu_ns,
    };
    ppw_runfile_append(PPW_RUN_THREAD_END, &rec, sizeof(rec), 0, NULL);
}

static void start_subsystems(struct ppw_thread *t)
{
    t->start_ns = ppw_now_ns();
    write_begin(t);
    ppw_sampler_thread_start(t);
    ppw_measure_thread_begin(t);
}

struct ppw_thread *ppw_thread_begin(uint32_t parent, uint32_t root_tag, uint64_t start_routine)
{
    if (self)
        return self;
    void *mem =
        mmap(NULL, state_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return NULL;
    struct ppw_thread *t = mem;
    t->walk = (uint64_t *)(t + 1);
    t->spawn_walk = t->walk + WALK_ENTRIES;
    t->perf_fd = -1;
    t->measuring = 1;
    t->index = __atomic_fetch_add(&next_index, 1, __ATOMIC_RELAXED);
    t->tid = gettid_now();
    t->parent = parent;
    t->root_tag = root_tag;
    t->spawn_tag = root_tag;
    t->start_routine = start_routine;
    t->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)t->tid << 32) ^ t->index;

    pthread_mutex_lock(&registry_lock);
    t->next = registry;
    registry = t;
    pthread_mutex_unlock(&registry_lock);
    self = t;
    start_subsystems(t);
    return t;
}

static void unregister(struct ppw_thread *t)
{
    pthread_mutex_lock(&registry_lock);
    for (struct ppw_thread **p = &registry; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    pthread_mutex_unlock(&registry_lock);
}

void ppw_thread_end(void)
{
    struct ppw_thread *t = self;
    if (!t)
        return;
    uint32_t faults = ppw_sampler_thread_faults(t, 1);
    ppw_sampler_thread_stop(t);
    ppw_measure_thread_end(t);
    write_end(t, faults);
    if (t->events_open)
        ppw_stream_close(&t->events);
    unregister(t);
    self = NULL;
    munmap(t, state_size());
}

void ppw_thread_end_others(void)
{
    pthread_mutex_lock(&registry_lock);
    for (struct ppw_thread *t = registry; t; t = t->next)
        if (t != self) {
            ppw_sampler_flush_other(t);
            write_end(t, PPW_THREAD_END_AT_EXIT | ppw_sampler_thread_faults(t, 0));
        }
    pthread_mutex_unlock(&registry_lock);
}

void ppw_thread_after_fork_child(void)
{
    struct ppw_thread *t = self;
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    registry_lock = fresh;
    /* Other threads do not exist in the child: release what they mapped. */
    for (struct ppw_thread *o = registry, *next; o; o = next) {
        next = o->next;
        if (o == t)
            continue;
        ppw_sampler_thread_abandon(o);
        ppw_measure_thread_abandon(o);
        if (o->events_open)
            ppw_stream_abandon(&o->events);
        munmap(o, state_size());
    }
    registry = NULL;
    next_index = 0;
    if (!t)
        return;
    ppw_sampler_thread_abandon(t);
    ppw_measure_thread_abandon(t);
    if (t->events_open)
        ppw_stream_abandon(&t->events);
    t->events_open = 0;
    t->nsamples = 0;
    t->tag_depth = 0;
    t->index = next_index++;
    t->tid = gettid_now();
    t->parent = UINT32_MAX;
    t->root_tag = 0;
    t->spawn_tag = 0;
    t->start_routine = 0;
    t->next = NULL;
    registry = t;
    start_subsystems(t);
}

int ppw_thread_each(void (*fn)(struct ppw_thread *t, void *arg), void *arg)
{
    if (!ppw_mutex_lock_bounded(&registry_lock))
        return -1;
    for (struct ppw_thread *t = registry; t; t = t->next)
        fn(t, arg);
    pthread_mutex_unlock(&registry_lock);
    return 0;
}

void ppw_thread_registry_lock(void)
{
    pthread_mutex_lock(&registry_lock);
}

void ppw_thread_registry_unlock(void)
{
    pthread_mutex_unlock(&registry_lock);
}

struct ppw_stream *ppw_thread_events(struct ppw_thread *t)
{
    if (t->events_open)
        return t->events.is_open ? &t->events : NULL;
    t->events_open = 1;
    int dirfd = ppw_output_dirfd();
    if (dirfd < 0)
        return NULL;
    char name[32];
    ppw_format(name, sizeof(name), "t%u.events.ppw", t->index);
    int rc = ppw_stream_open(&t->events, dirfd, name, PPW_FILE_EVENTS, t->index, ppw_config.window);
    if (rc != 0) {
        ppw_runfile_note_loss(
            "thread %u: cannot create %s: %s; its spawn and trace records are lost", t->index, name,
            strerror(-rc));
        return NULL;
    }
    return &t->events;
}

/* Per-thread state and the registry of live threads.
 *
 * Each thread that runs user code gets one struct ppw_thread, allocated with
 * mmap when the thread starts (main in the constructor, others in the
 * pthread_create trampoline) and found through initial-exec TLS, so the
 * signal handler can reach it without allocating. */
#ifndef PPW_RUNTIME_THREAD_H
#define PPW_RUNTIME_THREAD_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "sigsafe.h"
#include "stream.h"

#define PPW_MAX_FRAMES_LIMIT 1024 /* PPW_MAX_FRAMES may not exceed this */
#define PPW_TAG_STACK_MAX 64      /* nested OpenMP tasks/regions tracked per thread */

struct ppw_measure_thread; /* owned by measure.c */
struct ppw_stack_table;    /* owned by sampler.c */

struct ppw_thread {
    /* Read by the signal handler. */
    volatile sig_atomic_t ready;   /* sampler set up: the handler may record */
    volatile sig_atomic_t walking; /* a normal-context stack walk is running */
    uint64_t deferred_weight;      /* samples that arrived during it (sampler.c) */
    volatile sig_atomic_t measuring; /* gasp_control: 0 pauses events and samples */
    volatile uint32_t spawn_tag;   /* current spawn context; 0 = the thread's root */
    /* Set by GASP entry points while they run (re-entrancy guard). */
    volatile sig_atomic_t in_ppw;

    uint32_t index;    /* N in t<N>.*.ppw */
    uint32_t tid;
    uint32_t parent;   /* creator's index, UINT32_MAX for main */
    uint32_t root_tag; /* spawn context the thread was created in */
    uint64_t start_routine;
    uint64_t start_ns;

    /* Sampling (sampler.c). */
    struct ppw_stream samples;
    int perf_fd;
    uint64_t perf_dev, perf_ino; /* perf_fd's identity: the program may close the number */
    int has_timer;
    timer_t timer;
    uint64_t period;      /* period now armed, metric units */
    uint64_t last_cpu_ns; /* POSIX timer: CPU time at the previous sample */
    uint64_t armed_cpu_ns; /* CPU time when the sampler was armed */
    uint64_t rng;         /* jitter state */
    uint32_t period_holds; /* samples left before the next period is drawn */
    uint64_t nsamples;
    struct ppw_stack_table *stacks;
    uint64_t *walk;       /* PPW_MAX_FRAMES_LIMIT + 8 entries, for the handler */

    /* Events file (spawn records, trace), opened on first use. */
    struct ppw_stream events;
    int events_open;
    uint64_t *spawn_walk; /* PPW_MAX_FRAMES_LIMIT + 8 entries, normal context */
    uintptr_t stack_hi;   /* the stack's top, for frame-pointer walks (spawn.c); 0: not known */
    int stack_known;      /* stack_hi looked up (it may have failed) */

    /* OpenMP: spawn tags of enclosing implicit/explicit tasks. */
    uint32_t tag_stack[PPW_TAG_STACK_MAX];
    unsigned tag_depth;
    /* A team worker keeps its last region's tag after the region's body
     * returns, through the join barrier and the wait for the next region,
     * as OMPT's implicit task spans them (omp_fork.c). */
    int region_lingers;

    struct ppw_measure_thread *measure; /* GASP profile/trace state, or NULL */

    struct ppw_thread *next; /* registry link */
};

/* The calling thread's state, or NULL before set-up / after teardown. */
PPW_SIGSAFE struct ppw_thread *ppw_thread_self(void);

/* Makes t the calling thread's state and returns the previous one: only
 * for the probe calibration, which sends events through the real entry
 * points on a scratch state. */
struct ppw_thread *ppw_thread_swap_self(struct ppw_thread *t);

/* Sets up the calling thread: state, files, sampling, measurement, and its
 * PPW_RUN_THREAD record.  parent UINT32_MAX and tag 0 for main. */
struct ppw_thread *ppw_thread_begin(uint32_t parent, uint32_t root_tag, uint64_t start_routine);
/* Tears the calling thread down (its PPW_RUN_THREAD_END record included). */
void ppw_thread_end(void);
/* At process exit: end records for threads still running (OpenMP pool
 * workers, detached threads).  Their files stay mapped: they may still
 * sample until the process is gone, and committed data stays valid. */
void ppw_thread_end_others(void);
/* fork() child: forget every inherited thread, keep the caller's state
 * object but drop its inherited files; then re-begin it as thread 0. */
void ppw_thread_after_fork_child(void);
/* The CPU-time clock of any thread of this process, by tid (Linux's
 * encoding, ((~tid) << 3) | CPUCLOCK_SCHED | PERTHREAD): unlike
 * pthread_getcpuclockid, safe for a thread that just exited (EINVAL). */
static inline clockid_t ppw_thread_cpu_clock(uint32_t tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

/* Calls fn on every live thread's state, under the registry lock, which
 * is only tried (the caller may be a signal handler that interrupted its
 * holder): 0, or -1 when it could not be taken. */
int ppw_thread_each(void (*fn)(struct ppw_thread *t, void *arg), void *arg);
void ppw_thread_registry_lock(void);
void ppw_thread_registry_unlock(void);

/* Threads created so far (main included). */
uint32_t ppw_thread_count(void);

/* The events stream of t, opened on first use; NULL when it cannot be. */
struct ppw_stream *ppw_thread_events(struct ppw_thread *t);

#endif

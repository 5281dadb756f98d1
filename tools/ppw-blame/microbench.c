/* Microbenchmarks of synchronization and messages (microbench.h).  A
 * baseline is what an operation costs when nobody waits, so each keeps the
 * fastest of its batches (each a mean over many operations) and the 10th
 * percentile of single events: on a busy machine most batches include a
 * thread's wait for a CPU, which is the load, not the operation. */
#define _GNU_SOURCE /* CPU affinity */

#include "microbench.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { BATCHES = 15 };

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of v's n values; sorts v. */
static double quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, compare_double);
    return v[(size_t)(q * (double)(n - 1))];
}

static double fastest(double *v, size_t n)
{
    return quantile(v, n, 0);
}

static int thread_error(struct ppw_err *err, const char *what, int e)
{
    return ppw_err_set(err, PPW_EIO, "calibrate: %s: %s", what, strerror(e));
}

/* ---- placement ---- */

/* Each thread of a trial gets its own CPU when there are enough (the
 * main thread the first), as in a parallel program: otherwise a wake-up is
 * a context switch on a shared CPU in some trials and a cross-CPU wake-up
 * in others, which costs 10x more on a virtual machine. */
struct placement {
    cpu_set_t allowed; /* the process's CPUs, restored at the end */
    bool pinned;
};

/* The slot-th CPU (cyclically) of allowed. */
static int cpu_of_slot(const cpu_set_t *allowed, unsigned slot)
{
    int n = CPU_COUNT(allowed);
    for (int cpu = 0, seen = 0; n && cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, allowed) && (unsigned)seen++ == slot % (unsigned)n)
            return cpu;
    return -1;
}

static void place_main(struct placement *p, unsigned nthreads)
{
    p->pinned = false;
    if (sched_getaffinity(0, sizeof p->allowed, &p->allowed) != 0 ||
        (unsigned)CPU_COUNT(&p->allowed) < nthreads)
        return; /* fewer CPUs than threads: the scheduler decides */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu_of_slot(&p->allowed, 0), &one);
    p->pinned = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

static void unplace_main(const struct placement *p)
{
    if (p->pinned)
        pthread_setaffinity_np(pthread_self(), sizeof p->allowed, &p->allowed);
}

/* pthread_create, on the slot-th CPU when the main thread is pinned. */
static int start_thread(const struct placement *p, unsigned slot, pthread_t *t, void *(*fn)(void *),
                        void *arg)
{
    pthread_attr_t attr;
    int e = pthread_attr_init(&attr);
    if (e)
        return e;
    if (p->pinned) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu_of_slot(&p->allowed, slot), &one);
        pthread_attr_setaffinity_np(&attr, sizeof one, &one);
    }
    e = pthread_create(t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return e;
}

/* Pins the main thread and starts fn(arg) on the next CPU: a trial of two
 * threads.  Errors: PPW_EIO, with the main thread unpinned. */
static int start_partner(struct placement *p, pthread_t *t, void *(*fn)(void *), void *arg,
                         const char *what, struct ppw_err *err)
{
    place_main(p, 2);
    int e = start_thread(p, 1, t, fn, arg);
    if (e) {
        unplace_main(p);
        return thread_error(err, what, e);
    }
    return 0;
}

/* ---- barrier ---- */

enum { BARRIER_EPISODES = 200 };

struct barrier_bench {
    pthread_barrier_t barrier;
};

static void *barrier_worker(void *arg)
{
    struct barrier_bench *b = arg;
    for (int i = 0; i < (BATCHES + 1) * BARRIER_EPISODES; i++)
        pthread_barrier_wait(&b->barrier);
    return NULL;
}

static int barrier_trial(const void *arg, double *ns, struct ppw_err *err)
{
    unsigned nthreads = *(const unsigned *)arg;
    struct barrier_bench b;
    pthread_t *threads = calloc(nthreads, sizeof *threads);
    double batch[BATCHES];
    unsigned started = 0;
    int e = threads ? pthread_barrier_init(&b.barrier, NULL, nthreads) : ENOMEM;
    if (e) {
        free(threads);
        return thread_error(err, "barrier", e);
    }
    struct placement place;
    place_main(&place, nthreads);
    for (; started + 1 < nthreads && !e; started++)
        e = start_thread(&place, started + 1, &threads[started], barrier_worker, &b);
    if (e) { /* the started workers wait forever: that is a bug of the machine, not ours */
        unplace_main(&place);
        free(threads);
        return thread_error(err, "starting the barrier's threads", e);
    }
    uint64_t start = 0;
    for (int k = 0; k <= BATCHES; k++) { /* batch 0 warms up */
        for (int i = 0; i < BARRIER_EPISODES; i++)
            pthread_barrier_wait(&b.barrier);
        uint64_t t = now_ns();
        if (k)
            batch[k - 1] = (double)(t - start) / BARRIER_EPISODES;
        start = t;
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    unplace_main(&place);
    pthread_barrier_destroy(&b.barrier);
    free(threads);
    *ns = fastest(batch, BATCHES);
    return 0;
}

/* ---- mutex, uncontended ---- */

static int lock_trial(const void *arg, double *ns, struct ppw_err *err)
{
    enum { PAIRS = 100000 };
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    static volatile unsigned counter;
    double batch[BATCHES];
    (void)arg;
    (void)err;
    for (int k = 0; k <= BATCHES; k++) {
        uint64_t start = now_ns();
        for (int i = 0; i < PAIRS; i++) {
            pthread_mutex_lock(&m);
            counter++; /* a critical section, so the pair is not optimized away */
            pthread_mutex_unlock(&m);
        }
        if (k)
            batch[k - 1] = (double)(now_ns() - start) / PAIRS;
    }
    *ns = fastest(batch, BATCHES);
    return 0;
}

/* ---- mutex hand-off to a blocked waiter ---- */

enum { HANDOFF_EPISODES = 201, HANDOFF_WAIT_NS = 30000 };

struct handoff_bench {
    pthread_mutex_t m;
    atomic_int phase;        /* 1: the holder has the mutex; 2: the waiter goes to lock it;
                                3: the waiter got it and released it */
    _Atomic uint64_t got_ns; /* when the waiter got it */
};

static void wait_phase(atomic_int *phase, int want)
{
    while (atomic_load_explicit(phase, memory_order_acquire) != want)
        sched_yield(); /* on one CPU the other thread must run */
}

static void *handoff_waiter(void *arg)
{
    struct handoff_bench *h = arg;
    for (int i = 0; i < HANDOFF_EPISODES + 1; i++) {
        wait_phase(&h->phase, 1);
        atomic_store_explicit(&h->phase, 2, memory_order_release);
        pthread_mutex_lock(&h->m);
        atomic_store_explicit(&h->got_ns, now_ns(), memory_order_relaxed);
        pthread_mutex_unlock(&h->m);
        atomic_store_explicit(&h->phase, 3, memory_order_release);
    }
    return NULL;
}

static int handoff_trial(const void *arg, double *ns, struct ppw_err *err)
{
    (void)arg;
    struct handoff_bench h = {.m = PTHREAD_MUTEX_INITIALIZER};
    double episode[HANDOFF_EPISODES];
    pthread_t waiter;
    atomic_init(&h.phase, 0);
    atomic_init(&h.got_ns, 0);
    struct placement place;
    if (start_partner(&place, &waiter, handoff_waiter, &h, "starting the hand-off's thread", err))
        return PPW_EIO;
    for (int i = 0; i < HANDOFF_EPISODES + 1; i++) { /* episode 0 warms up */
        pthread_mutex_lock(&h.m);
        atomic_store_explicit(&h.phase, 1, memory_order_release);
        wait_phase(&h.phase, 2);
        /* Long enough for the waiter to block in the kernel: the hand-off
         * measured is a wake-up, as under real contention. */
        for (uint64_t until = now_ns() + HANDOFF_WAIT_NS; now_ns() < until;)
            sched_yield();
        uint64_t released = now_ns();
        pthread_mutex_unlock(&h.m);
        wait_phase(&h.phase, 3);
        uint64_t got = atomic_load_explicit(&h.got_ns, memory_order_relaxed);
        if (i)
            episode[i - 1] = got > released ? (double)(got - released) : 1;
    }
    pthread_join(waiter, NULL);
    unplace_main(&place);
    *ns = quantile(episode, HANDOFF_EPISODES, 0.1);
    return 0;
}

/* ---- condition variable round trip ---- */

enum { COND_ROUNDS = 100 };

struct cond_bench {
    pthread_mutex_t m;
    pthread_cond_t c;
    int turn; /* 0: the main thread's, 1: the partner's, 2: stop */
};

static void *cond_partner(void *arg)
{
    struct cond_bench *cb = arg;
    pthread_mutex_lock(&cb->m);
    for (;;) {
        while (cb->turn == 0)
            pthread_cond_wait(&cb->c, &cb->m);
        if (cb->turn == 2)
            break;
        cb->turn = 0;
        pthread_cond_signal(&cb->c);
    }
    pthread_mutex_unlock(&cb->m);
    return NULL;
}

static int cond_trial(const void *arg, double *ns, struct ppw_err *err)
{
    (void)arg;
    struct cond_bench cb = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    double batch[BATCHES];
    pthread_t partner;
    struct placement place;
    if (start_partner(&place, &partner, cond_partner, &cb,
                      "starting the condition variable's thread", err))
        return PPW_EIO;
    pthread_mutex_lock(&cb.m);
    for (int k = 0; k <= BATCHES; k++) {
        uint64_t start = now_ns();
        for (int i = 0; i < COND_ROUNDS; i++) {
            cb.turn = 1;
            pthread_cond_signal(&cb.c);
            while (cb.turn != 0)
                pthread_cond_wait(&cb.c, &cb.m);
        }
        if (k)
            batch[k - 1] = (double)(now_ns() - start) / COND_ROUNDS;
    }
    cb.turn = 2;
    pthread_cond_signal(&cb.c);
    pthread_mutex_unlock(&cb.m);
    pthread_join(partner, NULL);
    unplace_main(&place);
    *ns = fastest(batch, BATCHES);
    return 0;
}

/* ---- the results: the fastest of several trials ---- */

/* Even pinned, a trial may share its CPUs with something else for a
 * while: each result is the fastest of TRIALS trials, each with fresh
 * threads. */
enum { TRIALS = 5 };

static int fastest_of_trials(int (*trial)(const void *arg, double *ns, struct ppw_err *err),
                            const void *arg, double *ns, struct ppw_err *err)
{
    double results[TRIALS];
    for (int i = 0; i < TRIALS; i++) {
        int rc = trial(arg, &results[i], err);
        if (rc)
            return rc;
    }
    *ns = fastest(results, TRIALS);
    return 0;
}

int microbench_barrier(unsigned nthreads, double *ns, struct ppw_err *err)
{
    return fastest_of_trials(barrier_trial, &nthreads, ns, err);
}

int microbench_lock(double *ns, struct ppw_err *err)
{
    return fastest_of_trials(lock_trial, NULL, ns, err);
}

int microbench_lock_handoff(double *ns, struct ppw_err *err)
{
    return fastest_of_trials(handoff_trial, NULL, ns, err);
}

int microbench_cond_roundtrip(double *ns, struct ppw_err *err)
{
    return fastest_of_trials(cond_trial, NULL, ns, err);
}

/* ---- MPI, through the helper under mpirun ---- */

/* Reads the child's output into buf until EOF or the deadline; returns
 * false on the deadline. */
static bool read_until(int fd, char *buf, size_t size, uint64_t deadline_ns)
{
    size_t len = 0;
    for (;;) {
        uint64_t now = now_ns();
        if (now >= deadline_ns)
            return false;
        struct pollfd p = {fd, POLLIN, 0};
        int ms = (int)((deadline_ns - now) / 1000000u) + 1;
        if (poll(&p, 1, ms) < 0 && errno != EINTR)
            return true;
        if (!p.revents)
            continue;
        char scratch[512];
        ssize_t n = read(fd, len + 1 < size ? buf + len : scratch,
                         len + 1 < size ? size - len - 1 : sizeof scratch);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += len + 1 < size ? (size_t)n : 0;
    }
    buf[len] = '\0';
    return true;
}

/* The last non-empty line of text, for an error message. */
static const char *last_line(char *text)
{
    char *end = text + strlen(text);
    while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
        *--end = '\0';
    char *nl = strrchr(text, '\n');
    return nl ? nl + 1 : text;
}

static int spawn_mpirun(const char *helper, int out_fd, pid_t *pid, struct ppw_err *err)
{
    const char *argv[8];
    int n = 0;
    argv[n++] = "mpirun";
    argv[n++] = "--oversubscribe"; /* 2 ranks even on 1 CPU */
    if (geteuid() == 0)
        argv[n++] = "--allow-run-as-root";
    argv[n++] = "-np";
    argv[n++] = "2";
    argv[n++] = helper;
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", 0, 0);
    int e = posix_spawnp(pid, "mpirun", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return e ? ppw_err_set(err, PPW_EIO, "cannot run mpirun: %s", strerror(e)) : 0;
}

/* Asks mpirun to end (it takes its ranks down with it), and after 3 s
 * makes it. */
static void stop(pid_t pid)
{
    kill(pid, SIGTERM);
    for (uint64_t until = now_ns() + 3000000000ull; now_ns() < until;) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return; /* reaped: the caller's waitpid fails with ECHILD */
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
    }
    kill(pid, SIGKILL);
}

/* Parses the helper's "key value" lines; the one-sided costs are 0 when
 * the helper could not measure them. */
static int parse_mpi(char *text, struct microbench_mpi_costs *c, struct ppw_err *err)
{
    bool got_latency = false, got_bytes = false;
    *c = (struct microbench_mpi_costs){0};
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        got_latency |= sscanf(line, "latency_ns %lf", &c->latency_ns) == 1;
        got_bytes |= sscanf(line, "ns_per_byte %lf", &c->ns_per_byte) == 1;
        if (sscanf(line, "fence_ns %lf", &c->fence_ns) == 1 && !(c->fence_ns > 0))
            c->fence_ns = 0;
        if (sscanf(line, "rma_ns %lf", &c->rma_ns) == 1 && !(c->rma_ns > 0))
            c->rma_ns = 0;
    }
    if (!got_latency || !got_bytes || !(c->latency_ns > 0) || !(c->ns_per_byte >= 0))
        return ppw_err_set(err, PPW_EIO, "the MPI helper printed no costs");
    return 0;
}

/* One mpirun of the helper, to end by deadline_ns. */
static int mpi_trial(const char *helper, uint64_t deadline_ns, unsigned timeout_s,
                     struct microbench_mpi_costs *c, struct ppw_err *err)
{
    int fds[2];
    if (pipe(fds) != 0)
        return ppw_err_set(err, PPW_EIO, "pipe: %s", strerror(errno));
    pid_t pid;
    int rc = spawn_mpirun(helper, fds[1], &pid, err);
    close(fds[1]);
    if (rc) {
        close(fds[0]);
        return rc;
    }
    char out[8192];
    bool in_time = read_until(fds[0], out, sizeof out, deadline_ns);
    close(fds[0]);
    int status = 0;
    if (!in_time)
        stop(pid);
    while (in_time && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    while (!in_time && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (!in_time)
        return ppw_err_set(err, PPW_EIO, "mpirun took more than %u s", timeout_s);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        /* The one-sided part comes last: a helper that failed there has
         * printed the message costs, which stand without it. */
        char copy[sizeof out];
        memcpy(copy, out, sizeof out);
        if (parse_mpi(copy, c, err) == 0) {
            c->fence_ns = c->rma_ns = 0;
            return 0;
        }
        const char *why = last_line(out);
        return ppw_err_set(err, PPW_EIO, "mpirun failed (status %d)%s%.200s",
                           WIFEXITED(status) ? WEXITSTATUS(status) : -1, why[0] ? ": " : "", why);
    }
    return parse_mpi(out, c, err);
}

/* A few runs, as for the threads: the ranks' placement changes the costs. */
enum { MPI_TRIALS = 3 };

/* The fastest of the measured (non-zero) values, or 0. */
static double fastest_measured(const double *v, int n)
{
    double best = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > 0 && (best == 0 || v[i] < best))
            best = v[i];
    return best;
}

int microbench_mpi(const char *helper, unsigned timeout_s, struct microbench_mpi_costs *out,
                   struct ppw_err *err)
{
    if (!helper || access(helper, X_OK) != 0)
        return ppw_err_set(err, PPW_ENOTFOUND, "no MPI helper (%s)",
                           helper ? helper : "ppw was built without mpicc");
    double latency[MPI_TRIALS], per_byte[MPI_TRIALS], fence[MPI_TRIALS], rma[MPI_TRIALS];
    for (int i = 0; i < MPI_TRIALS; i++) {
        /* Each mpirun its own time: under a load of 10 the start-ups of
         * three took most of a shared 30 s. */
        uint64_t deadline_ns = now_ns() + timeout_s * 1000000000ull;
        struct microbench_mpi_costs c;
        int rc = mpi_trial(helper, deadline_ns, timeout_s, &c, err);
        if (rc)
            return rc;
        latency[i] = c.latency_ns, per_byte[i] = c.ns_per_byte, fence[i] = c.fence_ns,
        rma[i] = c.rma_ns;
    }
    /* The fastest latency; the per-byte cost of the middle run, which a
     * disturbed run's latency does not skew to 0. */
    out->latency_ns = fastest(latency, MPI_TRIALS);
    out->ns_per_byte = quantile(per_byte, MPI_TRIALS, 0.5);
    out->fence_ns = fastest_measured(fence, MPI_TRIALS);
    out->rma_ns = fastest_measured(rma, MPI_TRIALS);
    return 0;
}

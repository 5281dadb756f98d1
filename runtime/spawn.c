/* Spawn contexts and the pthread_create interposer (see spawn.h).
 *
 * Deduplication is per unique context, not per spawn: the process-wide
 * table below maps (parent tag, kind, stack) to a tag, so a loop that
 * creates a million tasks at one site records one stack.  This is what took
 * ChplBlamer from 3.5x to 14% overhead (seed 002 §3). */
#include "spawn.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "config.h"
#include "hash.h"
#include "lifecycle.h"
#include "modules.h"
#include "runfile.h"
#include "sampler.h"
#include "signals.h"
#include "thread.h"
#include "unwind.h"

#define CONTEXT_SLOTS (1u << 16)
#define FRAME_POOL (1u << 21) /* frames kept for verification: 16 MiB, touched lazily */
#define CACHE_SLOTS 256       /* per-thread, lock-free front of the table */

/* Context info by tag (tags below CONTEXT_SLOTS / 2), written once before
 * the tag is handed out. */
struct context {
    uint64_t stack_hash; /* kind and frames, without the parent */
    uint32_t parent, kind, nframes, reserved;
    uint64_t frames_at; /* index into frame_pool */
};

/* Hash index: (parent, stack) -> tag. */
struct index_slot {
    uint64_t hash;
    uint32_t tag, reserved;
};

struct cache_slot {
    uint64_t hash;
    uint32_t tag;
    uint32_t parent;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct context *contexts;
static struct index_slot *index_slots;
static uint64_t *frame_pool;
static uint64_t frame_pool_used;
static uint32_t next_tag = 1;
static PPW_TLS struct cache_slot *cache;

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static pthread_create_fn real_pthread_create;
static pthread_key_t end_key;

static void end_thread(void *unused)
{
    (void)unused;
    ppw_thread_end();
}

int ppw_spawn_init(void)
{
    if (!real_pthread_create)
        real_pthread_create = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!contexts) {
        contexts = mmap(NULL, CONTEXT_SLOTS / 2 * sizeof(*contexts), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        index_slots = mmap(NULL, CONTEXT_SLOTS * sizeof(*index_slots), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (index_slots == MAP_FAILED)
            contexts = MAP_FAILED;
        frame_pool = mmap(NULL, FRAME_POOL * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (contexts == MAP_FAILED || frame_pool == MAP_FAILED) {
            contexts = NULL;
            frame_pool = NULL;
            return -ENOMEM;
        }
    }
    return pthread_key_create(&end_key, end_thread) == 0 ? 0 : -EAGAIN;
}

uint32_t ppw_spawn_count(void)
{
    return __atomic_load_n(&next_tag, __ATOMIC_RELAXED) - 1;
}

static void write_record(struct ppw_thread *t, uint32_t tag, uint32_t parent, uint32_t kind,
                         const uint64_t *frames, uint32_t n, uint16_t flags)
{
    struct ppw_stream *events = ppw_thread_events(t);
    if (!events)
        return;
    struct ppw_rec_spawn *rec =
        ppw_stream_reserve(events, PPW_EVT_SPAWN, sizeof(*rec) + n * sizeof(uint64_t));
    if (!rec)
        return;
    *rec = (struct ppw_rec_spawn){tag, parent, kind, t->index, (uint16_t)n, flags, 0};
    memcpy(rec + 1, frames, n * sizeof(uint64_t));
    ppw_stream_commit(events);
}

static int same_frames(const struct context *c, uint32_t kind, const uint64_t *frames, uint32_t n)
{
    return c->kind == kind && c->nframes == n &&
           memcmp(frame_pool + c->frames_at, frames, n * sizeof(uint64_t)) == 0;
}

/* The tag for (parent, kind, frames), under the lock; *is_new when the
 * caller must write its record.
 *
 * Recursion folds: when a context on the parent's own chain has the same
 * kind and stack, that context is reused, as HPCToolkit compresses
 * recursion.  Otherwise a recursive task tree (fib with two task sites)
 * would make every task a new context: 2^depth records. */
static uint32_t intern(uint64_t stack_hash, uint32_t parent, uint32_t kind,
                       const uint64_t *frames, uint32_t n, int *is_new)
{
    *is_new = 0;
    if (!contexts)
        goto fresh;
    for (uint32_t c = parent, depth = 0; c && c < next_tag && c < CONTEXT_SLOTS / 2 && depth < 256;
         c = contexts[c].parent, depth++)
        if (contexts[c].stack_hash == stack_hash && same_frames(&contexts[c], kind, frames, n))
            return c;
    uint64_t hash = ppw_mix64(stack_hash ^ ((uint64_t)parent << 1));
    uint32_t at = (uint32_t)hash & (CONTEXT_SLOTS - 1);
    for (uint32_t probe = 0; probe < CONTEXT_SLOTS / 2; probe++) {
        struct index_slot *slot = &index_slots[(at + probe) & (CONTEXT_SLOTS - 1)];
        if (slot->tag == 0) {
            if (frame_pool_used + n > FRAME_POOL || next_tag >= CONTEXT_SLOTS / 2)
                break; /* full: a fresh tag without dedup is still correct */
            uint32_t tag = next_tag;
            memcpy(frame_pool + frame_pool_used, frames, n * sizeof(uint64_t));
            contexts[tag] = (struct context){stack_hash, parent, kind, n, 0, frame_pool_used};
            frame_pool_used += n;
            *slot = (struct index_slot){hash, tag, 0};
            __atomic_store_n(&next_tag, tag + 1, __ATOMIC_RELEASE);
            *is_new = 1;
            return tag;
        }
        struct context *c = &contexts[slot->tag];
        if (slot->hash == hash && c->parent == parent && c->stack_hash == stack_hash &&
            same_frames(c, kind, frames, n))
            return slot->tag;
    }
fresh:
    *is_new = 1;
    return __atomic_fetch_add(&next_tag, 1, __ATOMIC_RELAXED);
}

/* Per-thread cache of (parent, kind, call site) -> tag for OpenMP tasks,
 * which are spawned at rates where even one stack walk per task costs
 * (fib(27) makes 600k tasks).  Seen once per site and parent context, the
 * walk is skipped afterwards.  The approximation: a task site inside a
 * helper that one task body calls from two places gets the context of the
 * first. */
static PPW_TLS struct cache_slot *site_cache;

/* A per-thread cache table, mapped on first use; NULL when it cannot be. */
static struct cache_slot *thread_cache(struct cache_slot **table)
{
    if (!*table) {
        void *mem = mmap(NULL, CACHE_SLOTS * sizeof(**table), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        *table = mem == MAP_FAILED ? NULL : mem;
    }
    return *table;
}

static uint64_t site_key(uint32_t parent, uint32_t kind, uint64_t site)
{
    return ppw_mix64(site ^ ((uint64_t)parent << 40) ^ ((uint64_t)kind << 32));
}

/* Per-thread cache of (parent, kind, the callers' return addresses by
 * frame pointers) -> tag, for OpenMP parallel regions: a solver's time
 * step opens thousands a second, and a full walk costs about as much as a
 * short region's work.  Exact where the chain is: the pass gives the
 * program's functions frame pointers. */
static PPW_TLS struct cache_slot *chain_cache;

/* Return addresses outside the executable where a frame-pointer chain may
 * end, learned from full walks that found nothing of the program's above
 * them (main's caller in libc); never a library's that calls back into
 * the program (qsort's), whose callers the chain would not see. */
#define TERMINI 16
static uint64_t termini[TERMINI];
static int ntermini;

static int is_terminus(uint64_t ra)
{
    int n = __atomic_load_n(&ntermini, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (termini[i] == ra)
            return 1;
    return 0;
}

/* Under the lock: ra ends chains when nothing after it in frames (a full
 * walk) is the program's but the outermost frame (the executable's
 * _start, which calls libc's start that calls main). */
static void learn_terminus(const uint64_t *frames, int n, uint64_t ra)
{
    if (!ra || ntermini >= TERMINI || is_terminus(ra))
        return;
    int at = 0;
    while (at < n && frames[at] != ra)
        at++;
    if (at == n)
        return;
    for (int i = at + 1; i < n - 1; i++)
        if (ppw_modules_in_exe(frames[i]))
            return;
    termini[ntermini] = ra;
    __atomic_store_n(&ntermini, ntermini + 1, __ATOMIC_RELEASE);
}

/* The highest address of the process's initial stack in use when it
 * started (glibc's dynamic linker exports it): the main thread's frames
 * all lie below. */
extern void *__libc_stack_end;

/* Linux keeps every mapping, thread stacks among them, at least 128 MiB
 * below the initial stack's top (mmap_base's gap): a frame less than this
 * below __libc_stack_end is on the initial stack. */
#define INITIAL_STACK_NEAR ((uintptr_t)64 << 20)

/* An upper bound of t's frames, for walks by frame pointers.  A thread
 * this file started has it from its trampoline.  On the initial stack
 * (the main thread, or a fork child's only thread if main forked) it is
 * __libc_stack_end rather than pthread_getattr_np's, which reads
 * /proc/self/maps through stdio: a FILE, its 4 KiB buffer and a line
 * malloc'd in the program's main arena before its first parallel region
 * (docs/runtime.md, "Not a block in the program's heap"). */
static uintptr_t stack_top(struct ppw_thread *t)
{
    if (!t->stack_known) {
        t->stack_known = 1;
        uintptr_t here = (uintptr_t)__builtin_frame_address(0), end = (uintptr_t)__libc_stack_end;
        if (end && here < end && end - here < INITIAL_STACK_NEAR) {
            t->stack_hi = end;
            return t->stack_hi;
        }
        pthread_attr_t attr;
        void *lo;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &lo, &size) == 0)
                t->stack_hi = (uintptr_t)lo + size;
            pthread_attr_destroy(&attr);
        }
    }
    return t->stack_hi;
}

/* The return addresses of a spawn's callers by frame pointers, from the
 * frame of the runtime entry the program called (OMPT's enter_frame, whose
 * return address must be site), up to the first outside the executable:
 * chain->ra[0..n), and that one in chain->end.  0 when the chain cannot be
 * followed safely (a frame outside this thread's stack, misaligned, or not
 * above the one before) or is longer than CHAIN_MAX; else its hash. */
#define CHAIN_MAX 64
struct caller_chain {
    uint64_t ra[CHAIN_MAX];
    int n;
    uint64_t end;
};

static uint64_t follow_chain(struct ppw_thread *t, const void *frame, uint64_t site,
                             struct caller_chain *chain)
{
    uintptr_t hi = stack_top(t), lo = (uintptr_t)&hi;
    if (hi < 16)
        return 0;
    const uint64_t *fp = frame;
    for (chain->n = 0; chain->n < CHAIN_MAX;) {
        uintptr_t at = (uintptr_t)fp;
        if (at < lo || at > hi - 16 || (at & 7))
            return 0;
        uint64_t ra = fp[1];
        if (chain->n == 0 && ra != site)
            return 0;
        if (!ppw_modules_in_exe(ra)) {
            chain->end = ra;
            return ppw_mix64(ppw_hash_frames(site, chain->ra, (uint32_t)chain->n) ^ ra) | 1;
        }
        chain->ra[chain->n++] = ra;
        const uint64_t *next = (const uint64_t *)(uintptr_t)fp[0];
        if ((uintptr_t)next <= at)
            return 0;
        fp = next;
    }
    return 0;
}

/* After a full walk (frames[first..n)) of a spawn: its chain stands for
 * tag from now on if it is exactly the walk's frames from the spawn to the
 * chain's end, and that end is known to end chains.  A function without a
 * frame pointer on the path (code built without the pass) fails the
 * check: its callers' frames are missing from the chain, or garbage. */
static void remember_chain(const uint64_t *frames, int first, int n,
                           const struct caller_chain *chain, struct cache_slot *slot, uint64_t key,
                           uint32_t tag, uint32_t parent)
{
    if (n - first <= chain->n || frames[first + chain->n] != chain->end ||
        memcmp(frames + first, chain->ra, (size_t)chain->n * sizeof(uint64_t)) != 0)
        return;
    if (!is_terminus(chain->end)) {
        pthread_mutex_lock(&lock);
        learn_terminus(frames, n, chain->end);
        pthread_mutex_unlock(&lock);
        if (!is_terminus(chain->end))
            return;
    }
    *slot = (struct cache_slot){key, tag, parent};
}

uint32_t ppw_spawn_context(struct ppw_thread *t, enum ppw_spawn_kind kind, uint64_t site,
                           const void *frame)
{
    if (!t || !ppw_running)
        return 0;
    uint32_t parent = t->spawn_tag;
    struct cache_slot *by_site = NULL, *by_chain = NULL;
    uint64_t key = 0, chain_key = 0;
    struct caller_chain chain;
    if (site && kind == PPW_SPAWN_OMP_TASK && thread_cache(&site_cache)) {
        key = site_key(parent, kind, site);
        by_site = &site_cache[key & (CACHE_SLOTS - 1)];
        if (by_site->tag && by_site->hash == key && by_site->parent == parent)
            return by_site->tag;
    }
    uint64_t chain_hash =
        frame && site && thread_cache(&chain_cache) ? follow_chain(t, frame, site, &chain) : 0;
    if (chain_hash) {
        chain_key = site_key(parent, kind, chain_hash);
        by_chain = &chain_cache[chain_key & (CACHE_SLOTS - 1)];
        if (by_chain->tag && by_chain->hash == chain_key && by_chain->parent == parent)
            return by_chain->tag;
    }
    uint32_t cap = ppw_config.max_frames + 8;
    t->walking = 1;
    int n = ppw_unwind_walk_rarely(t->spawn_walk, (int)cap);
    /* A sample that arrived during the walk was deferred: take it now,
     * with this stack, which is where the time went. */
    ppw_sampler_take_deferred(t, t->spawn_walk, n);
    t->walking = 0;
    /* The spawn call's internals (ppw's interposer or OMPT callback, the
     * runtime's task allocation) are not the program's context. */
    int first = 0;
    while (first < n && ppw_modules_in_runtime(t->spawn_walk[first]))
        first++;
    int last = n;
    if (t->spawn_tag != 0) {
        /* Inside a spawned context: stop at its boundary (see run_format.h). */
        for (last = first; last < n && !ppw_modules_in_runtime(t->spawn_walk[last]); last++)
            ;
    }
    uint32_t count = (uint32_t)(last - first);
    uint16_t flags = 0;
    if (last == n && ((uint32_t)n == cap || count > ppw_config.max_frames)) {
        flags |= PPW_STACK_TRUNCATED;
        if (count > ppw_config.max_frames)
            count = ppw_config.max_frames;
    }
    const uint64_t *frames = t->spawn_walk + first;
    uint64_t stack_hash =
        ppw_hash_frames(((uint64_t)kind << 16) ^ count ^ ((uint64_t)flags << 24), frames, count);
    uint64_t hash = ppw_mix64(stack_hash ^ ((uint64_t)parent << 1));

    /* Per-thread cache: a 64-bit hash match on the same parent is taken as
     * the same context (the table below verifies frames; this front does
     * not, trading a ~2^-64 risk for no lock on the hot path). */
    struct cache_slot *slot = thread_cache(&cache) ? &cache[hash & (CACHE_SLOTS - 1)] : NULL;
    if (slot && slot->tag && slot->hash == hash && slot->parent == parent) {
        if (by_site)
            *by_site = (struct cache_slot){key, slot->tag, parent};
        if (by_chain)
            remember_chain(t->spawn_walk, first, n, &chain, by_chain, chain_key, slot->tag,
                           parent);
        return slot->tag;
    }

    int is_new;
    pthread_mutex_lock(&lock);
    uint32_t tag = intern(stack_hash, parent, kind, frames, count, &is_new);
    pthread_mutex_unlock(&lock);
    if (by_chain)
        remember_chain(t->spawn_walk, first, n, &chain, by_chain, chain_key, tag, parent);
    if (is_new)
        write_record(t, tag, parent, kind, frames, count, flags);
    if (slot)
        *slot = (struct cache_slot){hash, tag, parent};
    if (by_site)
        *by_site = (struct cache_slot){key, tag, parent};
    return tag;
}

void ppw_spawn_after_fork_child(void)
{
    /* Tags of the parent's run mean nothing in the child's directory. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lock = fresh;
    if (contexts) {
        memset(contexts, 0, CONTEXT_SLOTS / 2 * sizeof(*contexts));
        memset(index_slots, 0, CONTEXT_SLOTS * sizeof(*index_slots));
    }
    frame_pool_used = 0;
    next_tag = 1;
    if (cache)
        memset(cache, 0, CACHE_SLOTS * sizeof(*cache));
    if (site_cache)
        memset(site_cache, 0, CACHE_SLOTS * sizeof(*site_cache));
    if (chain_cache)
        memset(chain_cache, 0, CACHE_SLOTS * sizeof(*chain_cache));
}

/* ---- pthread_create ------------------------------------------------------ */

struct start {
    void *(*routine)(void *);
    void *arg;
    uint32_t parent;
    uint32_t tag;
    int program_blocked; /* the creator's program blocked the sampling signal */
    int in_use;          /* a slot of start_slots taken; 0: free */
};

/* What a creator hands its new thread, in slots of ppw's own rather than
 * malloc's: a block malloc'd by the creator and freed by the new thread
 * lands in the new thread's tcache as the first chunk of its size class,
 * a chunk of the creator's arena.  In bench/runtime/alloc.c that size is
 * the one its calloc'd scratch buffers share, and glibc 2.36 consolidated
 * the worker's arena 14 times as often (588 malloc_consolidate calls in 5
 * steps, against 43 with ppw off).  More creations in flight than slots
 * fall back to malloc. */
#define START_SLOTS 256
static struct start start_slots[START_SLOTS];
static uint32_t start_next;

static struct start *start_take(void)
{
    uint32_t first = __atomic_fetch_add(&start_next, 1, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < START_SLOTS; i++) {
        struct start *slot = &start_slots[(first + i) % START_SLOTS];
        int expected = 0;
        if (__atomic_compare_exchange_n(&slot->in_use, &expected, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return slot;
    }
    struct start *block = malloc(sizeof(*block));
    if (block)
        block->in_use = 0;
    return block;
}

static void start_give_back(struct start *start)
{
    if (start >= start_slots && start < start_slots + START_SLOTS)
        __atomic_store_n(&start->in_use, 0, __ATOMIC_RELEASE);
    else
        free(start);
}

static void *trampoline(void *p)
{
    struct start start = *(struct start *)p;
    start_give_back(p);
    ppw_signals_set_program_blocked(start.program_blocked); /* a new thread inherits the mask */
    if (ppw_thread_begin(start.parent, start.tag, (uint64_t)(uintptr_t)start.routine))
        pthread_setspecific(end_key, (void *)1);
    struct ppw_thread *t = ppw_thread_self();
    if (t && !t->stack_known) {
        /* the routine's frames lie below this one's record (its saved
         * frame pointer and return address); pthread_getattr_np would
         * malloc in the new thread's arena before the program does */
        t->stack_hi = (uintptr_t)__builtin_frame_address(0) + 16;
        t->stack_known = 1;
    }
    return start.routine(start.arg);
}

PPW_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                              void *(*routine)(void *), void *arg)
{
    if (!real_pthread_create)
        real_pthread_create = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!real_pthread_create)
        return EAGAIN;
    if (!ppw_running)
        return real_pthread_create(thread, attr, routine, arg);
    /* A creator without ppw state (a thread some library made with clone)
     * still gets a sampled child, with no spawn context. */
    struct ppw_thread *t = ppw_thread_self();
    int saved = errno;
    struct start *start = start_take();
    if (!start) {
        errno = saved;
        return real_pthread_create(thread, attr, routine, arg);
    }
    start->routine = routine;
    start->arg = arg;
    start->parent = t ? t->index : UINT32_MAX;
    start->tag = t ? ppw_spawn_context(t, PPW_SPAWN_PTHREAD, 0, NULL) : 0;
    start->program_blocked = ppw_signals_program_blocked();
    errno = saved;
    int rc = real_pthread_create(thread, attr, trampoline, start);
    if (rc != 0)
        start_give_back(start);
    return rc;
}

/* Sampling (see sampler.h and docs/runtime.md "Sampling").
 *
 * Metric order: PAPI_TOT_CYC overflow where the hardware counts cycles; the
 * perf_event_open software task clock, one event per thread delivering our
 * signal to that thread (F_SETOWN_EX TID); a POSIX per-thread CPU-time timer
 * as the last resort (capped at CONFIG_HZ by the kernel).
 *
 * The handler path (on_signal -> record_sample) is PPW_SIGSAFE: it walks
 * the stack into a preallocated per-thread buffer, deduplicates it against
 * the thread's stack table, and appends to the thread's samples file.  Only
 * the handler writes that file, so nothing else needs to block signals. */
#include "sampler.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "config.h"
#include "descriptors.h"
#include "hash.h"
#include "leaf.h"
#include "lifecycle.h"
#include "log.h"
#include "modules.h"
#include "ppw/run_format.h"
#include "ring.h"
#include "runfile.h"
#include "signals.h"
#include "thread.h"
#include "unwind.h"

#define CPU_PERIOD_DEFAULT_NS 1000000ull /* 1 ms of CPU time */
#define CYCLE_PERIOD_DEFAULT 3000017ull  /* prime, ~1 ms at 3 GHz (seed 002: no loop aliasing) */
#define STACK_SLOTS 4096                 /* per-thread dedup index; reset when 3/4 full */
#define STACK_ENTRIES (STACK_SLOTS * 3 / 4)
#define LEAF_SEARCH 8                    /* frames to search for the interrupted PC */
/* Bytes of entries in a thread's first BLOCK record, doubling up to the
 * last: a short thread leaves little of a block unused, a long one makes
 * few blocks. */
#define BLOCK_FIRST 512
#define BLOCK_LAST 8192
#define SAMPLE_ROOM 28     /* a SPAWN entry and the wider sample entry */
/* Context changes a ring's samples may span before it is read: a program
 * that changes context more often than this between two drain timers
 * (short OpenMP regions) has its ring read at every CONTEXT_MARKS-th
 * change after a sample instead. */
#define CONTEXT_MARKS 32

struct stack_entry {
    uint64_t hash;
    uint64_t leaf;
    uint32_t id;
    uint32_t nframes;
};

struct ppw_stack_table {
    uint32_t used;
    uint32_t next_id;
    /* The samples file's open BLOCK record (ppw/run_format.h), in the
     * stream's window, which stays put while it is open. */
    struct ppw_rec_block *block;
    uint64_t block_last_ns; /* the last sample's time: the next one's delta starts there */
    uint32_t block_spawn;   /* the spawn tag the block's samples have now */
    uint32_t block_next;    /* the next block's capacity; 0: BLOCK_FIRST */
    /* The ring sampler's buffer (ring_page set when this thread has one). */
    struct ppw_ring ring;
    uint32_t ring_busy;     /* a reader holds the ring, and with it this table */
    uint64_t ring_count;    /* the task clock at the ring's previous sample */
    uint64_t read_count;    /* the task clock and the thread's CPU clock at the previous */
    uint64_t read_cpu_ns;   /* reading of the ring (ring_drain) */
    /* The thread's previous reading of its own ring, on CLOCK_MONOTONIC:
     * samples the kernel took meanwhile are of ppw's code (ring_drain). */
    uint64_t own_begin_ns, own_end_ns;
    uint64_t own_signal_sp; /* its signal's interrupted stack pointer; 0: not in a handler */
    uint64_t own_weight;    /* their time, for the next sample of the program */
    /* The thread's context changes since its ring was last emptied: each
     * mark holds the context that ended at until_ns, so that a buffered
     * sample gets the context it was taken in without a reading of the
     * ring at every change (ppw_sampler_context_change). */
    struct context_mark {
        uint64_t until_ns; /* CLOCK_MONOTONIC, as the samples' times */
        uint32_t spawn_tag;
        uint32_t measuring;
    } marks[CONTEXT_MARKS];
    uint32_t marks_next;   /* marks written ever; the next is marks[marks_next % CONTEXT_MARKS] */
    uint32_t marks_unread; /* written since the ring was last emptied, or more (a drain's
                              signal may land between a mark and its count) */
    /* The stacks written so far: an open-addressing index of entry
     * numbers (+1; 0: empty) over entries kept in the order they came,
     * so that a thread touches the pages of as many entries as it has
     * stacks, not a hashed slot's page for each (a page's first touch is
     * a fault, 13 us in this VM: 25 a thread in a short OpenMP run). */
    uint16_t index[STACK_SLOTS];
    struct stack_entry entries[STACK_ENTRIES];
};
_Static_assert(STACK_ENTRIES < UINT16_MAX, "entry numbers fit the index");

/* The ring readers' unwind rules, one table for every thread (leaf.h). */
static struct ppw_leaf_rules *leaf_rules;

/* The ring sampler (PPW_SAMPLER=ring; docs/runtime.md, "The ring sampler"):
 * the kernel writes each sample, with its call chain from the frame
 * pointers, into a per-thread ring buffer, and takes no signal; a POSIX CPU
 * timer every RING_DRAIN_PERIODS periods empties the ring on the thread
 * itself, and so does every change of the thread's spawn context. */
#define RING_BYTES (256u << 10) /* data bytes per thread: ~55 samples at 20 frames */
#define RING_DRAIN_PERIODS 16   /* periods of CPU time between two timer drains */
#define RING_STACK_BYTES 4096   /* user stack copied with each sample, for the leaf repair */
#define RING_READ_LIMIT 4096    /* records per drain, at most */
#define RING_REGS                                                                                  \
    ((1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) | (1ull << PERF_REG_X86_IP))

static enum ppw_metric_source source;
static int ring_mode;            /* the ring sampler took: threads try a ring first */
static uint32_t ring_max_stack;  /* the call chain's depth limit (kernel.perf_event_max_stack) */
static uint32_t ring_fallbacks;  /* threads that could not map a ring: signal sampling */
static uint64_t base_period;
static int timer_cookie; /* its address marks our POSIX timer's signals */
static int handler_installed;
static uint64_t drops_without_thread; /* signals for threads with no state */

/* PAPI state (only when source == PPW_METRIC_PAPI_CYCLES). */
static PPW_TLS int papi_eventset = -1;

/* libpapi is opened by try_papi only where the hardware counts cycles:
 * loaded with libppw, it and libpfm (41k relocations) cost every run about
 * 4 ms of CPU, on machines where PAPI can do nothing. */
#define PAPI_FUNCTIONS(X)                                                                         \
    X(PAPI_library_init)                                                                          \
    X(PAPI_strerror)                                                                              \
    X(PAPI_thread_init)                                                                           \
    X(PAPI_query_event)                                                                           \
    X(PAPI_shutdown)                                                                              \
    X(PAPI_register_thread)                                                                       \
    X(PAPI_unregister_thread)                                                                     \
    X(PAPI_create_eventset)                                                                       \
    X(PAPI_add_event)                                                                             \
    X(PAPI_overflow)                                                                              \
    X(PAPI_start)                                                                                 \
    X(PAPI_stop)                                                                                  \
    X(PAPI_cleanup_eventset)                                                                      \
    X(PAPI_destroy_eventset)

static struct {
#define PAPI_POINTER(f) __typeof__(f) *f;
    PAPI_FUNCTIONS(PAPI_POINTER)
#undef PAPI_POINTER
} papi;

/* Samples that share one drawn period (perf task clock; see on_signal). */
enum { JITTER_HOLD = 8 };

PPW_SIGSAFE static uint64_t next_period(struct ppw_thread *t)
{
    if (ppw_config.jitter_pct == 0)
        return base_period;
    ppw_xorshift64(&t->rng);
    uint64_t span = base_period * ppw_config.jitter_pct / 100;
    if (span == 0)
        return base_period;
    return base_period - span + t->rng % (2 * span + 1);
}

/* Room for `size` bytes of entries in the open block, opening the next
 * one (its deltas starting at now_ns) when it is full or closed.  NULL
 * when the file cannot grow. */
PPW_SIGSAFE static uint8_t *block_room(struct ppw_thread *t, uint32_t size, uint64_t now_ns)
{
    struct ppw_stack_table *table = t->stacks;
    struct ppw_rec_block *b = table->block;
    if (b && t->samples.open_at && b->used + size <= b->capacity)
        return (uint8_t *)(b + 1) + b->used;
    uint32_t capacity = table->block_next ? table->block_next : BLOCK_FIRST;
    table->block_next = capacity < BLOCK_LAST ? 2 * capacity : BLOCK_LAST;
    if (capacity < size + SAMPLE_ROOM) /* a deep stack and its sample */
        capacity = (size + SAMPLE_ROOM + 7) & ~7u;
    b = ppw_stream_reserve(&t->samples, PPW_SMP_BLOCK, sizeof(*b) + capacity);
    table->block = b;
    if (!b)
        return NULL;
    memset(b + 1, 0, capacity); /* unwritten entries read as 0 in the file */
    b->used = 0;
    b->capacity = capacity;
    b->base_ns = now_ns;
    ppw_stream_commit_open(&t->samples);
    table->block_last_ns = now_ns;
    table->block_spawn = 0;
    return (uint8_t *)(b + 1);
}

/* The entry of `size` bytes just written is in the file: one store. */
PPW_SIGSAFE static void block_publish(struct ppw_stack_table *table, uint32_t size)
{
    __atomic_store_n(&table->block->used, table->block->used + size, __ATOMIC_RELEASE);
}

PPW_SIGSAFE static void put_u32(uint8_t *at, uint32_t value)
{
    memcpy(at, &value, sizeof value);
}

PPW_SIGSAFE static void put_u64(uint8_t *at, uint64_t value)
{
    memcpy(at, &value, sizeof value);
}

/* Stack id for frames[0..n), written as a STACK entry the first time. */
PPW_SIGSAFE static uint32_t stack_id(struct ppw_thread *t, const uint64_t *frames, uint32_t n,
                                     uint16_t flags, uint64_t now_ns)
{
    struct ppw_stack_table *table = t->stacks;
    uint64_t hash = ppw_hash_frames(((uint64_t)n << 16) ^ flags, frames, n);
    uint64_t leaf = n ? frames[0] : 0;
    uint32_t at = (uint32_t)hash & (STACK_SLOTS - 1);
    for (uint32_t probe = 0; probe < STACK_SLOTS; probe++) {
        uint16_t number = table->index[(at + probe) & (STACK_SLOTS - 1)];
        if (number == 0)
            break;
        const struct stack_entry *e = &table->entries[number - 1];
        if (e->hash == hash && e->leaf == leaf && e->nframes == n)
            return e->id;
    }
    if (table->used >= STACK_ENTRIES) {
        /* Bounded memory: forget the table; later samples re-emit stacks. */
        memset(table->index, 0, sizeof(table->index));
        table->used = 0;
    }
    uint32_t size = 8 + n * (uint32_t)sizeof(uint64_t);
    uint8_t *entry = table->next_id < PPW_BLOCK_ID_MASK ? block_room(t, size, now_ns) : NULL;
    if (!entry)
        return 0;
    uint32_t id = ++table->next_id;
    put_u32(entry, (uint32_t)PPW_BLOCK_STACK << PPW_BLOCK_KIND_SHIFT | id);
    put_u32(entry + 4, n | (uint32_t)flags << 16);
    memcpy(entry + 8, frames, n * sizeof(uint64_t));
    block_publish(table, size);
    for (uint32_t probe = 0;; probe++) {
        uint16_t *number = &table->index[(at + probe) & (STACK_SLOTS - 1)];
        if (*number == 0) {
            table->entries[table->used] = (struct stack_entry){hash, leaf, id, n};
            *number = (uint16_t)++table->used;
            break;
        }
    }
    return id;
}

PPW_SIGSAFE static void drop(struct ppw_thread *t, enum ppw_drop_reason why)
{
    if (t && t->samples.is_open)
        t->samples.header->dropped[why]++;
    else
        __atomic_fetch_add(&drops_without_thread, 1, __ATOMIC_RELAXED);
}

/* A sample entry naming stack id (0: the stack could not be written),
 * taken in spawn context `spawn`, after a SPAWN entry when the block's
 * context changes there.  12 bytes, or 20
 * when the weight or the delta needs 64 bits.  0, or -1 when dropped for
 * lack of space. */
PPW_SIGSAFE static int append_sample(struct ppw_thread *t, uint32_t id, uint64_t weight,
                                     uint64_t time_ns, uint32_t spawn)
{
    struct ppw_stack_table *table = t->stacks;
    uint8_t *at = id ? block_room(t, SAMPLE_ROOM, time_ns) : NULL;
    if (!at) {
        drop(t, PPW_DROP_NO_SPACE);
        return -1;
    }
    if (spawn != table->block_spawn) {
        put_u32(at, (uint32_t)PPW_BLOCK_SPAWN << PPW_BLOCK_KIND_SHIFT);
        put_u32(at + 4, spawn);
        block_publish(table, 8);
        table->block_spawn = spawn;
        at += 8;
    }
    uint64_t last = table->block_last_ns;
    if (weight <= UINT32_MAX && time_ns >= last && time_ns - last <= UINT32_MAX) {
        put_u32(at, (uint32_t)PPW_BLOCK_SAMPLE << PPW_BLOCK_KIND_SHIFT | id);
        put_u32(at + 4, (uint32_t)weight);
        put_u32(at + 8, (uint32_t)(time_ns - last));
        block_publish(table, 12);
    } else {
        put_u32(at, (uint32_t)PPW_BLOCK_SAMPLE_WIDE << PPW_BLOCK_KIND_SHIFT | id);
        put_u64(at + 4, weight);
        put_u64(at + 12, time_ns);
        block_publish(table, 20);
    }
    table->block_last_ns = time_ns;
    t->nsamples++;
    return 0;
}

/* (Also not walked: a thread inside dlclose, or while the dynamic
 * linker's write lock is held by it or by a thread that may wait for it,
 * ppw_modules_walk_may_block.)
 * Whether the interrupted thread is inside the dynamic linker's
 * global-scope symbol lookup (lazy binding, dlsym), which glibc marks in the
 * thread's TCB (tcbhead_t.gscope_flag: %fs:0x1c on x86-64 since glibc 2.8).
 * A walk then must not run: it could bind one of libunwind's lazy PLT slots,
 * and that nested lookup's plain store of the flag erases the WAIT mark a
 * concurrent dlclose puts there, so the dlclose sleeps forever (seen in
 * Open MPI's MPI_Finalize while its event thread was binding a symbol). */
PPW_SIGSAFE static int in_symbol_lookup(void)
{
#if defined(__x86_64__) && defined(__GLIBC__)
    int flag;
    __asm__ volatile("movl %%fs:0x1c, %0" : "=r"(flag));
    return flag != 0;
#else
    return 0;
#endif
}

/* Walks, deduplicates and appends one sample standing for `weight`. */
PPW_SIGSAFE static void record_sample(struct ppw_thread *t, const ucontext_t *uc, uint64_t weight)
{
    uint64_t start_ns = ppw_now_ns();
    if (!t->measuring) {
        drop(t, PPW_DROP_PAUSED);
        return;
    }
    if (t->walking) {
        /* libunwind is not re-entrant within one thread: the walker takes
         * this sample when it is done (ppw_sampler_take_deferred). */
        t->deferred_weight += weight;
        return;
    }
    if (in_symbol_lookup() || ppw_in_dlclose || ppw_modules_walk_may_block(t->tid)) {
        /* The interrupted PC alone keeps the sample's time. */
        if (!uc) {
            drop(t, PPW_DROP_WALK);
            return;
        }
        uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
        uint16_t flags = PPW_STACK_LEAF_PC | PPW_STACK_UNWALKED;
        if (append_sample(t, stack_id(t, &pc, 1, flags, start_ns), weight, start_ns,
                          t->spawn_tag) == 0)
            t->samples.header->handler_ns += ppw_now_ns() - start_ns;
        return;
    }
    int cap = (int)ppw_config.max_frames + LEAF_SEARCH;
    int n = ppw_unwind_walk(t->walk, cap);
    if (n <= 0) {
        drop(t, PPW_DROP_WALK);
        return;
    }
    /* Skip the handler's own frames: start at the interrupted PC when it is
     * found (libunwind reports it exactly for the frame below the signal
     * trampoline), else after handler + __restore_rt. */
    uint16_t flags = 0;
    int first = n > 2 ? 2 : 0;
    if (uc) {
        uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
        for (int i = 0; i < n && i < LEAF_SEARCH; i++)
            if (t->walk[i] == pc) {
                first = i;
                flags |= PPW_STACK_LEAF_PC;
                break;
            }
    }
    uint32_t count = (uint32_t)(n - first);
    if (n == cap || count > ppw_config.max_frames) {
        flags |= PPW_STACK_TRUNCATED;
        if (count > ppw_config.max_frames)
            count = ppw_config.max_frames;
    }
    if (append_sample(t, stack_id(t, t->walk + first, count, flags, start_ns), weight, start_ns,
                      t->spawn_tag) == 0)
        t->samples.header->handler_ns += ppw_now_ns() - start_ns;
}

void ppw_sampler_take_deferred(struct ppw_thread *t, const uint64_t *frames, int n)
{
    /* t->walking is set, so the handler only adds to deferred_weight while
     * this appends; the bounded loop picks up what arrived meanwhile. */
    for (int round = 0; round < 4; round++) {
        uint64_t weight = __atomic_exchange_n(&t->deferred_weight, 0, __ATOMIC_ACQ_REL);
        if (weight == 0 || !t->ready || !t->samples.is_open || n <= 0)
            return;
        uint32_t count = (uint32_t)n;
        uint16_t flags = 0;
        if (count > ppw_config.max_frames) {
            count = ppw_config.max_frames;
            flags |= PPW_STACK_TRUNCATED;
        }
        uint64_t now = ppw_now_ns();
        if (append_sample(t, stack_id(t, frames, count, flags, now), weight, now, t->spawn_tag) !=
            0)
            return;
    }
}

/* One PERF_RECORD_SAMPLE of the ring sampler's layout (ring_open). */
struct ring_sample {
    uint64_t time_ns; /* CLOCK_MONOTONIC, as ppw_now_ns */
    uint64_t count;   /* the task clock: the thread's CPU time since arming */
    uint64_t nr;      /* call chain entries, context markers included */
    const uint64_t *ips;
    uint64_t regs[3]; /* BP, SP, IP, in the bit order of RING_REGS; 0 when absent */
    const uint8_t *stack;
    uint64_t stack_size; /* bytes of the stack copy that hold data */
};

PPW_SIGSAFE static int parse_ring_sample(const struct perf_event_header *h, struct ring_sample *s)
{
    const uint64_t *p = (const void *)(h + 1);
    const uint64_t *end = (const void *)((const uint8_t *)h + h->size);
    if (end - p < 4)
        return -1;
    s->time_ns = p[0];
    s->count = p[1];
    s->nr = p[2];
    p += 3;
    if ((uint64_t)(end - p) <= s->nr)
        return -1;
    s->ips = p;
    p += s->nr;
    uint64_t abi = *p++;
    memset(s->regs, 0, sizeof s->regs);
    if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
        if (end - p < 3)
            return -1;
        memcpy(s->regs, p, sizeof s->regs);
        p += 3;
    }
    s->stack = NULL;
    s->stack_size = 0;
    if (p >= end)
        return -1;
    uint64_t size = *p++;
    if (size) {
        if (size % 8 || (uint64_t)(end - p) < size / 8 + 1)
            return -1;
        s->stack = (const uint8_t *)p;
        uint64_t dyn = p[size / 8];
        s->stack_size = dyn < size ? dyn : size;
    }
    return 0;
}

#define RING_CHAIN_MAX 256 /* call chain entries read from a sample, at most */

struct ring_reader {
    struct ppw_thread *t;
    int repair;   /* the reading thread may unwind (leaf.h): not inside the dynamic linker */
    double scale; /* CPU time per task-clock ns since the previous reading */
    int own;      /* t reads its own ring, since begin_ns */
    uint64_t begin_ns;
    uint64_t signal_sp; /* in the drain timer's handler: the interrupted stack pointer */
};

/* How far from a reading's clock reads the handler's entry and return may
 * lie: the stack pointer tells them from the program (HANDLER_SLACK_NS). */
#define HANDLER_SLACK_NS 20000u
/* The signal frame lies this far below the interrupted stack pointer, at
 * least (the red zone, then the saved context). */
#define SIGNAL_FRAME_MIN 512u

PPW_SIGSAFE static int below_signal_frame(uint64_t sp, uint64_t signal_sp)
{
    return signal_sp && sp && sp + SIGNAL_FRAME_MIN < signal_sp;
}

/* Whether the kernel took s while t was reading its own ring, this time
 * (when t reads it) or the time before: the handler's or callback's time, which the signal
 * sampler cannot sample.  Such a sample's stack would name ppw's frames
 * under the program's (or, where the frame pointers break at the signal
 * frame, a bare call line), so its time goes to the next sample instead,
 * as the signal sampler's handler time does, and handler_ns counts it.
 * The clock is read a little after the handler starts and before it
 * returns: near those reads, a sample on the stack below the signal frame
 * is the handler's. */
PPW_SIGSAFE static int taken_in_reading(const struct ring_reader *reader,
                                        const struct ppw_stack_table *table,
                                        const struct ring_sample *s)
{
    uint64_t at = s->time_ns, sp = s->regs[1];
    if (reader->own &&
        (at >= reader->begin_ns || (at + HANDLER_SLACK_NS >= reader->begin_ns &&
                                    below_signal_frame(sp, reader->signal_sp))))
        return 1;
    /* t's reading before, whoever reads now (at exit, another thread) */
    if (at >= table->own_begin_ns && at <= table->own_end_ns)
        return 1;
    return at + HANDLER_SLACK_NS >= table->own_begin_ns &&
           at <= table->own_end_ns + HANDLER_SLACK_NS &&
           below_signal_frame(sp, table->own_signal_sp);
}

/* The context a sample of time_ns was taken in: the oldest mark that
 * ended after it, or NULL when none did (the thread's context now).
 * Marks from before the ring was last emptied ended before any sample
 * still in it, so none of them is found. */
PPW_SIGSAFE static const struct context_mark *context_at(const struct ppw_stack_table *table,
                                                        uint64_t time_ns)
{
    uint32_t next = __atomic_load_n(&table->marks_next, __ATOMIC_ACQUIRE);
    uint32_t count = next < CONTEXT_MARKS ? next : CONTEXT_MARKS;
    for (uint32_t i = next - count; i != next; i++) {
        const struct context_mark *mark = &table->marks[i % CONTEXT_MARKS];
        if (mark->until_ns >= time_ns)
            return mark;
    }
    return NULL;
}

/* A record from the thread's ring, on the thread that reads it. */
PPW_SIGSAFE static void on_ring_record(const struct perf_event_header *h, void *arg)
{
    struct ring_reader *reader = arg;
    struct ppw_thread *t = reader->t;
    if (h->type == PERF_RECORD_LOST) {
        /* The ring was full: the kernel counted the samples it could not
         * write.  Their time stays in the next sample's weight. */
        const uint64_t *body = (const void *)(h + 1);
        if (h->size >= sizeof *h + 2 * sizeof(uint64_t))
            t->samples.header->reserved += body[1]; /* 1.7: ring losses */
        return;
    }
    if (h->type != PERF_RECORD_SAMPLE)
        return;
    struct ring_sample s;
    if (parse_ring_sample(h, &s) != 0) {
        drop(t, PPW_DROP_WALK);
        return;
    }
    struct ppw_stack_table *table = t->stacks;
    uint64_t weight = (uint64_t)((double)(s.count - table->ring_count) * reader->scale + 0.5);
    table->ring_count = s.count;
    const struct context_mark *mark = context_at(table, s.time_ns);
    if (!(mark ? mark->measuring != 0 : t->measuring != 0)) {
        drop(t, PPW_DROP_PAUSED);
        return;
    }
    if (taken_in_reading(reader, table, &s)) {
        table->own_weight += weight;
        return;
    }
    weight += table->own_weight;
    table->own_weight = 0;
    /* The chain is the interrupted PC, then return addresses, after a
     * PERF_CONTEXT_USER marker: the handler walk's layout (LEAF_PC). */
    uint64_t chain[RING_CHAIN_MAX];
    uint32_t n = 0, found = 0;
    for (uint64_t i = 0; i < s.nr; i++) {
        if (s.ips[i] >= PERF_CONTEXT_MAX)
            continue;
        found++;
        if (n < RING_CHAIN_MAX)
            chain[n++] = s.ips[i];
    }
    if (n == 0) {
        drop(t, PPW_DROP_WALK);
        return;
    }
    uint16_t flags = PPW_STACK_LEAF_PC;
    if (found > n || found >= ring_max_stack)
        flags |= PPW_STACK_TRUNCATED;
    /* The first frames again from their call-frame information, where
     * the frame pointers skipped one (leaf.h). */
    uint64_t *frames = t->walk;
    int repaired = -1;
    if (reader->repair && s.stack_size > 0 && s.regs[2] == chain[0]) {
        struct ppw_leaf_sample leaf = {s.regs[2], s.regs[1], s.regs[0], s.stack, s.stack_size};
        int cut = 0;
        repaired = ppw_leaf_repair(&leaf, chain, n, frames, PPW_MAX_FRAMES_LIMIT, &cut,
                                   leaf_rules);
        if (cut)
            flags |= PPW_STACK_TRUNCATED;
    }
    if (repaired < 0) {
        memcpy(frames, chain, n * sizeof *frames);
        repaired = (int)n;
    }
    n = (uint32_t)repaired;
    if (n > ppw_config.max_frames) {
        n = ppw_config.max_frames;
        flags |= PPW_STACK_TRUNCATED;
    }
    append_sample(t, stack_id(t, frames, n, flags, s.time_ns), weight, s.time_ns,
                  mark ? mark->spawn_tag : t->spawn_tag);
}

static int perf_fd_is_ours(const struct ppw_thread *t);

/* Empties t's ring into its samples file, on t itself or, at exit, on the
 * exiting thread (ppw_sampler_flush_other).  ring_busy makes the reader
 * alone: a drain timer's signal that lands during a drain in normal
 * context leaves the records to it.  begin_ns: when the caller entered
 * ppw's code to read (0: now); signal_sp: in the drain timer's handler,
 * the stack pointer it interrupted (else 0). */
PPW_SIGSAFE static void ring_drain(struct ppw_thread *t, uint64_t begin_ns, uint64_t signal_sp)
{
    struct ppw_stack_table *table = t->stacks;
    if (!table || !ppw_ring_pending(&table->ring) || !t->samples.is_open)
        return;
    if (__atomic_exchange_n(&table->ring_busy, 1, __ATOMIC_ACQUIRE))
        return;
    if (!t->samples.is_open) {
        __atomic_store_n(&table->ring_busy, 0, __ATOMIC_RELEASE);
        return;
    }
    uint64_t start_ns = ppw_now_ns();
    /* Signals blocked once for the whole reading, rather than by libunwind
     * around each of its locks (ppw_signals_block_all). */
    sigset_t saved;
    ppw_signals_block_all(&saved);
    /* The repair calls dl_iterate_phdr: not where the record_sample walk
     * may not run either. */
    struct ppw_thread *self = ppw_thread_self();
    int may_unwind = !in_symbol_lookup() && !ppw_in_dlclose &&
                     !(self && ppw_modules_walk_may_block(self->tid));
    struct ring_reader reader = {
        t, may_unwind, 1.0, self == t, begin_ns ? begin_ns : start_ns, signal_sp};
    /* Weights in the thread's CPU time, as the signal sampler's: the task
     * clock falls behind it in a thread that switches often (a third of
     * it in runtime.eintr's sleeper, about 3 us a switch here), so each
     * reading scales the task clock to the CPU time that passed since the
     * previous one. */
    uint64_t count_now;
    struct timespec cpu;
    /* The program may have closed the number with a raw system call and
     * reused it: a read of its pipe would block here. */
    if (perf_fd_is_ours(t) &&
        read(t->perf_fd, &count_now, sizeof count_now) == (ssize_t)sizeof count_now &&
        clock_gettime(ppw_thread_cpu_clock(t->tid), &cpu) == 0) {
        uint64_t cpu_now = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
        if (count_now > table->read_count && cpu_now > table->read_cpu_ns) {
            double scale = (double)(cpu_now - table->read_cpu_ns) /
                           (double)(count_now - table->read_count);
            /* Preemption can also run the task clock ahead (check_run.sh) */
            reader.scale = scale < 0.5 ? 0.5 : scale > 4 ? 4 : scale;
        }
        table->read_count = count_now;
        table->read_cpu_ns = cpu_now;
    }
    ppw_ring_read(&table->ring, RING_READ_LIMIT, on_ring_record, &reader);
    if (!ppw_ring_pending(&table->ring))
        table->marks_unread = 0; /* the marks so far are for no sample to come */
    ppw_signals_restore(&saved);
    uint64_t end_ns = ppw_now_ns();
    t->samples.header->handler_ns += end_ns - start_ns;
    if (reader.own) {
        table->own_begin_ns = reader.begin_ns;
        table->own_end_ns = end_ns;
        table->own_signal_sp = signal_sp;
    }
    __atomic_store_n(&table->ring_busy, 0, __ATOMIC_RELEASE);
}

void ppw_sampler_flush(struct ppw_thread *t)
{
    if (!ring_mode || !t->ready || !t->stacks || !ppw_ring_pending(&t->stacks->ring))
        return;
    /* At exit another thread may be draining this ring: wait for it, so
     * that no sample of the context ending now is read after it ended. */
    for (int i = 0; i < 1000 && __atomic_load_n(&t->stacks->ring_busy, __ATOMIC_ACQUIRE); i++)
        sched_yield();
    ring_drain(t, 0, 0);
}

void ppw_sampler_context_change(struct ppw_thread *t)
{
    if (!ring_mode || !t->ready || !t->stacks || !ppw_ring_pending(&t->stacks->ring))
        return;
    struct ppw_stack_table *table = t->stacks;
    if (table->marks_unread >= CONTEXT_MARKS) {
        /* the oldest mark may still be wanted: read the ring instead */
        ppw_sampler_flush(t);
        return;
    }
    /* The drain timer's handler may read the ring between any two of
     * these stores: a mark not yet counted in marks_next is one it needs
     * not (its samples, taken before the change, get the context now). */
    uint32_t at = table->marks_next;
    table->marks[at % CONTEXT_MARKS] =
        (struct context_mark){ppw_now_ns(), t->spawn_tag, (uint32_t)t->measuring};
    __atomic_store_n(&table->marks_next, at + 1, __ATOMIC_RELEASE);
    table->marks_unread++;
}

void ppw_sampler_flush_other(struct ppw_thread *t)
{
    if (ring_mode && t->ready && t->stacks)
        ring_drain(t, 0, 0);
}

int ppw_sampler_buffers(void)
{
    return ring_mode;
}

PPW_SIGSAFE static void save_ring(struct ppw_thread *t, void *arg)
{
    (void)arg;
    if (t->ready && t->stacks)
        ring_drain(t, 0, 0);
}

void ppw_sampler_save_all(void)
{
    if (!ring_mode)
        return;
    /* A vfork()ed child runs on its parent's thread state, not its tid. */
    struct ppw_thread *self = ppw_thread_self();
    if (self && self->tid != (uint32_t)syscall(SYS_gettid))
        return;
    if (ppw_thread_each(save_ring, NULL) != 0 && self)
        save_ring(self, NULL);
}

PPW_SIGSAFE static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The thread CPU time since the previous sample: timers fire a little after
 * each period ends (perf) or on scheduler ticks (POSIX CPU timers), so
 * weights taken this way add up to the thread's CPU time. */
PPW_SIGSAFE static uint64_t cpu_weight(struct ppw_thread *t)
{
    uint64_t now = thread_cpu_ns();
    uint64_t weight = now - t->last_cpu_ns;
    t->last_cpu_ns = now;
    return weight;
}

PPW_SIGSAFE static void on_signal(int sig, siginfo_t *info, void *uc)
{
    int saved = errno;
    ppw_signals_handler_enter();
    struct ppw_thread *t = ppw_thread_self();
    if (source == PPW_METRIC_PERF_TASK_CLOCK &&
        (info->si_code == POLL_HUP || info->si_code == POLL_IN)) {
        /* Not only through t->perf_fd: when a program's dup2 moves ppw's
         * descriptor (descriptors.c), a signal queued meanwhile names the
         * old number, and dropping it would leave the event disarmed
         * (runtime.lost saw every later sample lost).  The signal is
         * ppw's own (signals.c): re-arm through the current descriptor. */
        if (!t || !t->ready || t->perf_fd < 0) {
            drop(t, PPW_DROP_NOT_READY);
        } else {
            record_sample(t, uc, cpu_weight(t));
            /* A new period every JITTER_HOLD samples, not every one:
             * PERF_EVENT_IOC_PERIOD costs about 3.4 us here, as much as the
             * walk and the record together, and a period held a few
             * samples still drifts the phase at random. */
            if (t->period_holds > 0) {
                t->period_holds--;
            } else {
                uint64_t next = next_period(t);
                if (next != t->period && ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &next) == 0)
                    t->period = next;
                t->period_holds = JITTER_HOLD - 1;
            }
            ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
        }
    } else if (ring_mode && info->si_code == SI_TIMER &&
               info->si_value.sival_ptr == &timer_cookie) {
        /* The ring's drain timer.  While this thread walks its own stack
         * in normal context (a spawn record), the ring waits for the
         * next drain. */
        if (t && t->ready && !t->walking) {
            /* the new period first, so the reading's interval spans it */
            uint64_t begin_ns = ppw_now_ns();
            uint64_t next = next_period(t);
            if (next != t->period && ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &next) == 0)
                t->period = next;
            ring_drain(t, begin_ns, (uint64_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RSP]);
        }
    } else if (source == PPW_METRIC_POSIX_CPU_TIMER && info->si_code == SI_TIMER &&
               info->si_value.sival_ptr == &timer_cookie) {
        if (!t || !t->ready) {
            drop(t, PPW_DROP_NOT_READY);
        } else {
            record_sample(t, uc, cpu_weight(t));
        }
    } else {
        ppw_signals_handler_leave(); /* the program's handler: its masks are its own */
        ppw_signals_forward(sig, info, uc);
        ppw_signals_handler_enter();
    }
    ppw_signals_handler_leave();
    errno = saved;
}

PPW_SIGSAFE static void on_papi_overflow(int eventset, void *address, long long overflow_vector,
                                         void *context)
{
    (void)eventset;
    (void)address;
    (void)overflow_vector;
    int saved = errno;
    ppw_signals_handler_enter();
    struct ppw_thread *t = ppw_thread_self();
    if (!t || !t->ready)
        drop(t, PPW_DROP_NOT_READY);
    else
        record_sample(t, context, t->period);
    ppw_signals_handler_leave();
    errno = saved;
}

/* ---- metric selection ---------------------------------------------------- */

/* Kernel time counts toward the period when we may (root, or
 * perf_event_paranoid < 2): an overflow while in the kernel is then
 * delivered on return to user mode and charged to the caller of the system
 * call (a large MPI_Recv copies in process_vm_readv: its time must stay
 * there).  Unprivileged users must exclude the kernel, and then lose the
 * periods that end in it.  Such a signal can arrive inside a sleeping
 * system call or execve: blocking.c masks it around those. */
static int exclude_kernel = -1; /* -1: not yet known */

/* A sampling event's attributes, as far as both samplers share them. */
static struct perf_event_attr event_attr(uint32_t type, uint64_t config, uint64_t period,
                                         int disabled)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = type;
    attr.config = config;
    attr.sample_period = period;
    attr.disabled = disabled;
    attr.exclude_hv = 1;
    attr.exclude_kernel = exclude_kernel == 1;
    return attr;
}

static long perf_open(uint32_t type, uint64_t config, uint64_t period, int disabled)
{
    struct perf_event_attr attr = event_attr(type, config, period, disabled);
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && exclude_kernel == -1 && (errno == EACCES || errno == EPERM)) {
        attr.exclude_kernel = 1;
        fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd >= 0 && exclude_kernel == -1 && type == PERF_TYPE_SOFTWARE)
        exclude_kernel = attr.exclude_kernel;
    return fd;
}

static unsigned long papi_thread_id(void)
{
    return (unsigned long)syscall(SYS_gettid);
}

/* Fills `papi` from the library the build found; on failure says why.
 * The library stays loaded: its handler and threads outlive any use. */
static int papi_open(char *why, size_t size)
{
    void *lib = dlopen(PPW_PAPI_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, size, "cannot load PAPI: %s", dlerror());
        return -1;
    }
#define PAPI_RESOLVE(f)                                                                            \
    if (!(papi.f = (__typeof__(f) *)dlsym(lib, #f))) {                                             \
        snprintf(why, size, "cannot load PAPI: %s lacks %s", PPW_PAPI_SONAME, #f);                 \
        return -1;                                                                                 \
    }
    PAPI_FUNCTIONS(PAPI_RESOLVE)
#undef PAPI_RESOLVE
    return 0;
}

static int try_papi(char *why, size_t size)
{
    /* Cheap test first: PAPI_library_init costs milliseconds, and without a
     * hardware cycle counter PAPI_TOT_CYC cannot exist. */
    long fd = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, 1);
    if (fd < 0 && ppw_config.sampler != PPW_SAMPLER_PAPI) {
        snprintf(why, size, "no hardware cycle counter (perf_event_open CPU_CYCLES: %s)",
                 strerror(errno));
        return -1;
    }
    if (fd >= 0)
        close((int)fd);
    if (papi_open(why, size) != 0)
        return -1;
    int rc = papi.PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT) {
        snprintf(why, size, "PAPI_library_init: %s",
                 rc > 0 ? "version mismatch" : papi.PAPI_strerror(rc));
        return -1;
    }
    if ((rc = papi.PAPI_thread_init(papi_thread_id)) != PAPI_OK ||
        (rc = papi.PAPI_query_event(PAPI_TOT_CYC)) != PAPI_OK) {
        snprintf(why, size, "PAPI_TOT_CYC: %s", papi.PAPI_strerror(rc));
        papi.PAPI_shutdown();
        return -1;
    }
    return 0;
}

static int try_perf(char *why, size_t size)
{
    long fd = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1000000, 1);
    if (fd < 0) {
        snprintf(why, size, "perf_event_open software task clock: %s", strerror(errno));
        return -1;
    }
    close((int)fd);
    return 0;
}

/* The ring sampler's event for the calling thread, or -errno.  Its
 * samples' layout is parse_ring_sample's. */
static long ring_open(uint64_t period)
{
    struct perf_event_attr attr =
        event_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, period, 1);
    attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN |
                       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.read_format = 0; /* the value alone: the task clock */
    attr.sample_regs_user = RING_REGS;
    attr.sample_stack_user = RING_STACK_BYTES;
    attr.sample_max_stack = (uint16_t)ring_max_stack;
    attr.exclude_callchain_kernel = 1;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* The largest record of ring_open's layout. */
static uint32_t ring_record_max(void)
{
    return (uint32_t)(sizeof(struct perf_event_header) + 3 * 8 + 8 * (ring_max_stack + 8) + 8 +
                      3 * 8 + 8 + RING_STACK_BYTES + 8);
}

/* Defined by ppw's pass in every program it instruments, whose functions
 * keep frame pointers (pass/instrument.c); absent, the kernel's call
 * chains would be wrong from the first frame. */
extern const char __ppw_frame_pointers __attribute__((weak));

static int try_ring(char *why, size_t size)
{
    if (!&__ppw_frame_pointers) {
        snprintf(why, size, "the ring sampler follows frame pointers, and this program was not"
                            " built by ppw's pass, which keeps them");
        return -1;
    }
    ring_max_stack = ppw_config.max_frames;
    int fd = open("/proc/sys/kernel/perf_event_max_stack", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char text[32];
        ssize_t got = read(fd, text, sizeof text - 1);
        close(fd);
        if (got > 0) {
            text[got] = '\0';
            unsigned long limit = strtoul(text, NULL, 10);
            if (limit > 0 && limit < ring_max_stack)
                ring_max_stack = (uint32_t)limit;
        }
    }
    if (try_perf(why, size) != 0) /* also settles exclude_kernel */
        return -1;
    long event = ring_open(1000000);
    if (event < 0) {
        snprintf(why, size, "perf_event_open with call chains: %s", strerror((int)-event));
        return -1;
    }
    struct ppw_ring ring;
    int rc = ppw_ring_map(&ring, (int)event, RING_BYTES, ring_record_max());
    close((int)event);
    if (rc != 0) {
        snprintf(why, size, "mapping a %u KiB perf ring buffer: %s", RING_BYTES >> 10,
                 strerror(-rc));
        return -1;
    }
    ppw_ring_unmap(&ring);
    return 0;
}

static int try_timer(char *why, size_t size)
{
    timer_t timer;
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = ppw_config.signal;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) != 0) {
        snprintf(why, size, "timer_create(CLOCK_THREAD_CPUTIME_ID): %s", strerror(errno));
        return -1;
    }
    timer_delete(timer);
    return 0;
}

static const char *source_name(enum ppw_metric_source s)
{
    switch (s) {
    case PPW_METRIC_PAPI_CYCLES: return "PAPI_TOT_CYC";
    case PPW_METRIC_PERF_TASK_CLOCK: return "perf::TASK-CLOCK";
    case PPW_METRIC_POSIX_CPU_TIMER: return "CLOCK_THREAD_CPUTIME_ID";
    default: return "none";
    }
}

static void write_metric(const char *reason)
{
    struct ppw_rec_metric rec = {
        .source = source,
        .unit = source == PPW_METRIC_PAPI_CYCLES ? PPW_UNIT_CYCLES : PPW_UNIT_NS,
        .period = base_period,
        .jitter_pct = source == PPW_METRIC_PAPI_CYCLES ? 0 : ppw_config.jitter_pct,
        .signal = (uint32_t)ppw_config.signal,
        .max_frames = ppw_config.max_frames,
    };
    const char *strings[2] = {source_name(source), reason};
    ppw_runfile_append(PPW_RUN_METRIC, &rec, sizeof(rec), 2, strings);
    ppw_log_verbose("sampling with %s: %s", source_name(source), reason);
}

int ppw_sampler_init(void)
{
    char reason[512] = "", why[200];
    size_t len = 0;
    source = PPW_METRIC_NONE;
    ppw_unwind_init();
    enum ppw_sampler_choice choice = ppw_config.sampler;
    if (choice == PPW_SAMPLER_OFF) {
        write_metric("sampling turned off (PPW_SAMPLER=off or PPW_SAMPLE=0)");
        return 0;
    }
#define TRY(cond, fn, src)                                                                         \
    if (source == PPW_METRIC_NONE && (cond)) {                                                     \
        if (fn(why, sizeof(why)) == 0)                                                             \
            source = src;                                                                          \
        else                                                                                       \
            len += (size_t)snprintf(reason + len, len < sizeof(reason) ? sizeof(reason) - len : 0, \
                                    "%s%s", len ? "; " : "", why);                                 \
    }
    TRY(choice == PPW_SAMPLER_AUTO || choice == PPW_SAMPLER_PAPI, try_papi, PPW_METRIC_PAPI_CYCLES)
    /* Without hardware counters, the ring sampler first: about half the
     * signal sampler's CPU per sample (docs/runtime.md, "The ring
     * sampler"); PPW_SAMPLER=perf keeps the signal. */
    TRY(choice == PPW_SAMPLER_AUTO || choice == PPW_SAMPLER_RING, try_ring,
        PPW_METRIC_PERF_TASK_CLOCK)
    if (source == PPW_METRIC_PERF_TASK_CLOCK) {
        ring_mode = 1;
        ppw_leaf_init();
        /* Populated at once: the rules' hashes touch every page early,
         * each first touch a fault (24 of them in a short OpenMP run,
         * about 10 us each in this VM) */
        void *rules = mmap(NULL, sizeof *leaf_rules, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        leaf_rules = rules == MAP_FAILED ? NULL : rules; /* none: libunwind at every repair */
        ppw_signals_guard_fatal();
    }
    TRY(choice != PPW_SAMPLER_TIMER, try_perf, PPW_METRIC_PERF_TASK_CLOCK)
    TRY(1, try_timer, PPW_METRIC_POSIX_CPU_TIMER)
#undef TRY
    if (len >= sizeof(reason))
        len = sizeof(reason) - 1;
    if (source == PPW_METRIC_NONE) {
        ppw_runfile_note(1, "no sampling method works here (%s); running without samples", reason);
        write_metric(reason);
        return -ENODEV;
    }
    if (source == PPW_METRIC_PERF_TASK_CLOCK && exclude_kernel == 1)
        len += (size_t)snprintf(reason + len, len < sizeof(reason) ? sizeof(reason) - len : 0,
                                "%skernel time excluded (perf_event_paranoid forbids it for"
                                " this user): periods ending in system calls are not sampled",
                                len ? "; " : "");
    if (ring_mode)
        len += (size_t)snprintf(reason + len, len < sizeof(reason) ? sizeof(reason) - len : 0,
                                "%sthe kernel's call chains into a ring buffer per thread,"
                                " read every %d periods",
                                len ? "; " : "", RING_DRAIN_PERIODS);
    if (choice != PPW_SAMPLER_AUTO && len == 0)
        len = (size_t)snprintf(reason, sizeof(reason), "requested by PPW_SAMPLER");
    char full[768];
    snprintf(full, sizeof(full), "%s%s%s", len ? reason : "first choice", len ? "; using " : "",
             len ? source_name(source) : "");
    if (source == PPW_METRIC_PAPI_CYCLES)
        base_period = ppw_config.period ? ppw_config.period : CYCLE_PERIOD_DEFAULT;
    else
        base_period = ppw_config.period ? ppw_config.period : CPU_PERIOD_DEFAULT_NS;
    if (source == PPW_METRIC_POSIX_CPU_TIMER && base_period < 4000000)
        strncat(full,
                "; POSIX CPU timers fire at most every scheduler tick (4 ms at HZ=250),"
                " so samples are weighted by the CPU time that really passed",
                sizeof(full) - strlen(full) - 1);
    /* A real-time signal the program does not use yet (SIGRTMIN+4 first),
     * unless PPW_SIGNAL names one. */
    /* (A fork()ed child keeps its parent's, whose handler it inherited.) */
    int inherited = __atomic_load_n(&handler_installed, __ATOMIC_ACQUIRE);
    int free_sig = ppw_config.signal_set || source == PPW_METRIC_PAPI_CYCLES || inherited
                       ? 0
                       : ppw_signals_free_rt(SIGRTMIN + 4, 0);
    if (free_sig)
        ppw_config.signal = free_sig;
    write_metric(full);

    if (source != PPW_METRIC_PAPI_CYCLES) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        struct sigaction before;
        if (ppw_signals_real_sigaction(ppw_config.signal, &sa, &before) != 0) {
            ppw_runfile_note(1, "cannot install the sampling signal handler: %s", strerror(errno));
            source = PPW_METRIC_NONE;
            return -errno;
        }
        if (!inherited) /* the program's view is the parent's, already kept */
            ppw_signals_took(ppw_config.signal, &before);
        __atomic_store_n(&handler_installed, 1, __ATOMIC_RELEASE);
    }
    return 0;
}

void ppw_sampler_fini(void)
{
    if (ring_fallbacks)
        ppw_runfile_note(0, "%u threads could not map a perf ring buffer (locked-memory limit:"
                            " kernel.perf_event_mlock_kb, ulimit -l) and were sampled with signals",
                         ring_fallbacks);
    if (drops_without_thread)
        ppw_runfile_note(0, "%llu samples arrived for threads without ppw state",
                         (unsigned long long)drops_without_thread);
    if (source == PPW_METRIC_PAPI_CYCLES)
        papi.PAPI_shutdown();
    /* The handler stays installed: a late signal must not hit SIG_DFL,
     * whose action for a real-time signal is to terminate. */
}

/* fd becomes t's perf event: kept out of the program's way
 * (descriptors.c), with its identity, since the program may close the
 * number and reuse it (perf_fd_is_ours). */
static void adopt_perf_fd(struct ppw_thread *t, int fd)
{
    t->perf_fd = fd;
    ppw_fd_own(&t->perf_fd, PPW_FD_PERF);
    struct stat st;
    if (fstat(t->perf_fd, &st) == 0) {
        t->perf_dev = (uint64_t)st.st_dev;
        t->perf_ino = (uint64_t)st.st_ino;
    }
}

static int arm_perf(struct ppw_thread *t)
{
    long fd = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, t->period, 1);
    if (fd < 0)
        return -errno;
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)t->tid};
    if (fcntl((int)fd, F_SETFL, fcntl((int)fd, F_GETFL) | O_ASYNC) != 0 ||
        fcntl((int)fd, F_SETSIG, ppw_config.signal) != 0 ||
        fcntl((int)fd, F_SETOWN_EX, &owner) != 0) {
        int err = errno;
        close((int)fd);
        return -err;
    }
    adopt_perf_fd(t, (int)fd);
    ioctl(t->perf_fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
    return 0;
}

/* A POSIX timer's interval: a sample's period, or the ring's drain period. */
static struct itimerspec timer_spec(const struct ppw_thread *t)
{
    uint64_t ns = t->stacks && t->stacks->ring.page ? t->period * RING_DRAIN_PERIODS : t->period;
    struct itimerspec spec;
    spec.it_value.tv_sec = (time_t)(ns / 1000000000ull);
    spec.it_value.tv_nsec = (long)(ns % 1000000000ull);
    spec.it_interval = spec.it_value;
    return spec;
}

static int arm_timer(struct ppw_thread *t)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = ppw_config.signal;
    sev.sigev_value.sival_ptr = &timer_cookie;
    sev._sigev_un._tid = (pid_t)t->tid;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->timer) != 0)
        return -errno;
    t->has_timer = 1;
    t->last_cpu_ns = thread_cpu_ns();
    struct itimerspec spec = timer_spec(t);
    return timer_settime(t->timer, 0, &spec, NULL) == 0 ? 0 : -errno;
}

/* The ring sampler on t: its event and buffer, and the timer that drains
 * it.  0, or -errno, after which nothing of it is left. */
static int arm_ring(struct ppw_thread *t)
{
    struct ppw_stack_table *table = t->stacks;
    long fd = ring_open(t->period);
    if (fd < 0)
        return (int)fd;
    int rc = ppw_ring_map(&table->ring, (int)fd, RING_BYTES, ring_record_max());
    if (rc != 0) {
        close((int)fd);
        return rc;
    }
    adopt_perf_fd(t, (int)fd);
    table->ring_count = 0;
    table->read_count = 0;
    table->read_cpu_ns = t->armed_cpu_ns;
    if ((rc = arm_timer(t)) != 0) {
        ppw_fd_close(&t->perf_fd);
        ppw_fd_release(&t->perf_fd);
        t->perf_fd = -1;
        ppw_ring_unmap(&table->ring);
        return rc;
    }
    ioctl(t->perf_fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(t->perf_fd, PERF_EVENT_IOC_ENABLE, 0);
    return 0;
}

static int arm_papi(struct ppw_thread *t)
{
    int rc, es = PAPI_NULL;
    if ((rc = papi.PAPI_register_thread()) != PAPI_OK || (rc = papi.PAPI_create_eventset(&es)) != PAPI_OK ||
        (rc = papi.PAPI_add_event(es, PAPI_TOT_CYC)) != PAPI_OK ||
        (rc = papi.PAPI_overflow(es, PAPI_TOT_CYC, (int)t->period, 0, on_papi_overflow)) != PAPI_OK ||
        (rc = papi.PAPI_start(es)) != PAPI_OK)
        return rc;
    papi_eventset = es;
    return 0;
}

void ppw_sampler_thread_start(struct ppw_thread *t)
{
    if (source == PPW_METRIC_NONE || ppw_output_dirfd() < 0)
        return;
    char name[32];
    ppw_format(name, sizeof(name), "t%u.samples.ppw", t->index);
    int rc = ppw_stream_open(&t->samples, ppw_output_dirfd(), name, PPW_FILE_SAMPLES, t->index,
                             ppw_config.window);
    if (rc != 0) {
        ppw_runfile_note_loss("thread %u: cannot create %s: %s; it is not sampled", t->index, name,
                              strerror(-rc));
        return;
    }
    t->stacks = mmap(NULL, sizeof(struct ppw_stack_table), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t->stacks == MAP_FAILED) {
        t->stacks = NULL;
        ppw_stream_close(&t->samples);
        return;
    }
    t->period = source == PPW_METRIC_PAPI_CYCLES ? base_period : next_period(t);
    t->period_holds = JITTER_HOLD - 1; /* the first drawn period holds too */
    t->last_cpu_ns = thread_cpu_ns();
    t->armed_cpu_ns = t->last_cpu_ns;
    t->ready = 1;
    if (ring_mode && (rc = arm_ring(t)) != 0) {
        __atomic_fetch_add(&ring_fallbacks, 1, __ATOMIC_RELAXED);
        ppw_log_verbose("thread %u: no ring buffer (%s); sampling with signals", t->index,
                        strerror(-rc));
    }
    /* The signal handler walks with libunwind, whose first walk in a thread
     * fills its caches: not in a sample.  (A ring's samples are walked by
     * the kernel, so its threads skip this.) */
    if (!t->stacks->ring.page)
        ppw_unwind_warm_up();
    if (t->stacks->ring.page)
        rc = 0;
    else if (source == PPW_METRIC_PERF_TASK_CLOCK)
        rc = arm_perf(t);
    else if (source == PPW_METRIC_POSIX_CPU_TIMER)
        rc = arm_timer(t);
    else
        rc = arm_papi(t);
    if (rc != 0) {
        t->ready = 0;
        ppw_runfile_note(1, "thread %u: cannot start its %s sampler (%d); it is not sampled",
                         t->index, source_name(source), rc);
    }
}

/* t's perf descriptor is still the event ppw opened: the program may have
 * closed the number, and opened a file of its own under it. */
static int perf_fd_is_ours(const struct ppw_thread *t)
{
    struct stat st;
    return t->perf_fd >= 0 && fstat(t->perf_fd, &st) == 0 && (uint64_t)st.st_dev == t->perf_dev &&
           (uint64_t)st.st_ino == t->perf_ino;
}

/* Bit sig - 1 of the SigBlk mask in /proc/self/task/TID/status. */
static int blocked_in_task(uint32_t tid, int sig)
{
    char path[64], buf[2048];
    ppw_format(path, sizeof path, "/proc/self/task/%u/status", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nSigBlk:");
    if (!p)
        return 0;
    p += 9;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *end = p;
    while ((*end >= '0' && *end <= '9') || (*end >= 'a' && *end <= 'f'))
        end++;
    int bit = sig - 1, digit_from_end = bit / 4;
    if (end - p <= digit_from_end)
        return 0;
    char c = end[-1 - digit_from_end];
    int v = c <= '9' ? c - '0' : c - 'a' + 10;
    return (v >> (bit % 4)) & 1;
}

uint32_t ppw_sampler_thread_faults(struct ppw_thread *t, int on_thread)
{
    if (source == PPW_METRIC_NONE || source == PPW_METRIC_PAPI_CYCLES || !t->ready)
        return 0;
    uint32_t faults = 0;
    int sig = ppw_config.signal;
    sigset_t mask;
    if (on_thread ? ppw_signals_real_mask(SIG_BLOCK, NULL, &mask) == 0 && sigismember(&mask, sig) == 1
                  : blocked_in_task(t->tid, sig))
        faults |= PPW_THREAD_END_SIGNAL_BLOCKED;
    struct sigaction now;
    if (ppw_signals_real_sigaction(sig, NULL, &now) == 0) {
        if (!(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN)
            faults |= PPW_THREAD_END_SIGNAL_IGNORED;
        else if (!(now.sa_flags & SA_SIGINFO) || now.sa_sigaction != on_signal)
            faults |= PPW_THREAD_END_SIGNAL_TAKEN;
    }
    if (source == PPW_METRIC_PERF_TASK_CLOCK && t->perf_fd >= 0 && !perf_fd_is_ours(t))
        faults |= PPW_THREAD_END_TIMER_CLOSED;
    return faults;
}

static void disarm(struct ppw_thread *t)
{
    t->ready = 0;
    if (t->perf_fd >= 0 && perf_fd_is_ours(t)) {
        ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
        ppw_fd_close(&t->perf_fd);
    }
    ppw_fd_release(&t->perf_fd);
    t->perf_fd = -1;
    if (t->has_timer) {
        timer_delete(t->timer);
        t->has_timer = 0;
    }
}

void ppw_sampler_thread_stop(struct ppw_thread *t)
{
    if (t->stacks && t->stacks->ring.page) {
        ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
        /* ppw_sampler_flush_other reads rings of ready threads under the
         * registry lock, all through: once t is not ready under it, no
         * other thread reads t's ring or writes its samples file, and t
         * empties the ring alone before closing them. */
        ppw_thread_registry_lock();
        t->ready = 0;
        ppw_thread_registry_unlock();
        ring_drain(t, 0, 0);
    }
    disarm(t);
    if (source == PPW_METRIC_PAPI_CYCLES && papi_eventset >= 0) {
        long long value;
        papi.PAPI_stop(papi_eventset, &value);
        papi.PAPI_cleanup_eventset(papi_eventset);
        papi.PAPI_destroy_eventset(&papi_eventset);
        papi.PAPI_unregister_thread();
        papi_eventset = -1;
    }
    if (t->samples.is_open)
        ppw_stream_close(&t->samples);
    if (t->stacks) {
        /* Under the registry lock: ppw_sampler_flush_other reads the
         * table of every registered thread. */
        ppw_thread_registry_lock();
        struct ppw_stack_table *table = t->stacks;
        t->stacks = NULL;
        ppw_thread_registry_unlock();
        ppw_ring_unmap(&table->ring);
        munmap(table, sizeof(struct ppw_stack_table));
    }
}

void ppw_sampler_thread_abandon(struct ppw_thread *t)
{
    /* After fork the perf event still counts the parent's thread, and POSIX
     * timers are not inherited: only the descriptor needs closing. */
    t->ready = 0;
    if (t->perf_fd >= 0 && perf_fd_is_ours(t))
        close(t->perf_fd);
    t->perf_fd = -1;
    t->has_timer = 0;
    papi_eventset = -1;
    ppw_stream_abandon(&t->samples);
    if (t->stacks) {
        /* The kernel does not copy a perf buffer into a child (VM_DONTCOPY):
         * its pages may hold the child's own mappings by now. */
        ppw_ring_forget(&t->stacks->ring);
        munmap(t->stacks, sizeof(struct ppw_stack_table));
    }
    t->stacks = NULL;
}

int ppw_sampler_signal(void)
{
    return __atomic_load_n(&handler_installed, __ATOMIC_ACQUIRE)
               ? __atomic_load_n(&ppw_config.signal, __ATOMIC_ACQUIRE)
               : 0;
}

/* Points t's timer at signal *arg: a perf event through F_SETSIG, a POSIX
 * timer by a new timer on the thread's CPU clock, armed as the old one was. */
static void retarget(struct ppw_thread *t, void *arg)
{
    int sig = *(int *)arg;
    if (t->perf_fd >= 0)
        fcntl(t->perf_fd, F_SETSIG, sig);
    if (t->has_timer) {
        struct sigevent sev;
        memset(&sev, 0, sizeof(sev));
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = sig;
        sev.sigev_value.sival_ptr = &timer_cookie;
        sev._sigev_un._tid = (pid_t)t->tid;
        clockid_t clock = ppw_thread_cpu_clock(t->tid);
        timer_t fresh;
        struct itimerspec left;
        if (timer_gettime(t->timer, &left) == 0 && timer_create(clock, &sev, &fresh) == 0) {
            timer_settime(fresh, 0, &left, NULL);
            timer_delete(t->timer);
            t->timer = fresh;
        }
    }
}

int ppw_sampler_move_signal(void)
{
    int old = ppw_sampler_signal();
    if (!old || source == PPW_METRIC_PAPI_CYCLES)
        return -1;
    int sig = ppw_signals_free_rt(old + 1, old);
    if (!sig)
        return -1;
    struct sigaction sa, before;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (ppw_signals_real_sigaction(sig, &sa, &before) != 0)
        return -1;
    /* Threads armed from now on take the new signal; those armed before
     * are moved.  Until the program's handler replaces it, the old signal
     * still reaches on_signal. */
    __atomic_store_n(&ppw_config.signal, sig, __ATOMIC_RELEASE);
    if (ppw_thread_each(retarget, &sig) != 0) {
        __atomic_store_n(&ppw_config.signal, old, __ATOMIC_RELEASE);
        ppw_signals_real_sigaction(sig, &before, NULL);
        return -1;
    }
    ppw_signals_took(sig, &before);
    ppw_runfile_note(0, "the program took signal %d, the sampling signal; sampling moved to %d",
                     old, sig);
    return 0;
}

void ppw_sampler_thread_pause(struct ppw_thread *t)
{
    if (t->perf_fd >= 0)
        ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
    ppw_sampler_flush(t);
    if (t->has_timer) {
        struct itimerspec off = {{0, 0}, {0, 0}};
        timer_settime(t->timer, 0, &off, NULL);
    }
}

void ppw_sampler_thread_resume(struct ppw_thread *t)
{
    /* A ring's event samples until disabled; a signal's is armed for one
     * overflow at a time. */
    if (t->perf_fd >= 0)
        ioctl(t->perf_fd, t->stacks && t->stacks->ring.page ? PERF_EVENT_IOC_ENABLE
                                                             : PERF_EVENT_IOC_REFRESH,
              t->stacks && t->stacks->ring.page ? 0 : 1);
    if (t->has_timer) {
        struct itimerspec spec = timer_spec(t);
        timer_settime(t->timer, 0, &spec, NULL);
    }
}

/* GASP measurement: profile and trace modes, throttling and probe-cost
 * calibration.  docs/runtime.md ("GASP measurement") explains the
 * statistics and the compensation formulas; run_format.h the records. */
#include "measure.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "descriptors.h"
#include "hash.h"
#include "lifecycle.h"
#include "ppw/crc32c.h"
#include "ppw/gasp_events.h"
#include "ppw/run_format.h"
#include "regions.h"
#include "runfile.h"
#include "sampler.h"
#include "stream.h"
#include "thread.h"

#define SLOT_NONE UINT32_MAX
#define UNWIND_WINDOW 8      /* a mismatched END closes at most 7 calls above its match */
#define STACK_INITIAL 64     /* frames */
#define STACK_MAX (1u << 20) /* deeper calls are counted, not timed */
#define TABLE_INITIAL 256    /* region cache and callpath table entries */
#define PROF_INITIAL 24 /* profile slots: with the header, one page (closing trims no block) */
#define TRACE_TEXT_MAX 256   /* a user event's formatted description, NUL included */
#define TRACE_ARGS_MAX 33    /* 24 operands, an element size and the result, with room */

/* One open call.  stack[0] is the thread's root (region 0). */
struct frame {
    const void *funcsig; /* GASP_C_FUNC frames: lets a matching END skip the lookup */
    uint32_t region;
    uint32_t slot; /* timer slot of this call's callpath, or SLOT_NONE */
    uint64_t start_ns;
    uint64_t child_incl;           /* inclusive time of recorded direct children */
    uint64_t subcalls;             /* direct child calls completed, throttled ones included */
    uint64_t rec_desc, thr_desc;   /* probe pairs of descendants: recorded, throttled */
    uint64_t rec_child, thr_child; /* the same for direct children */
    uint64_t bytes;                /* data the call moves (MPI), for its timer */
    uint32_t last_child;           /* the last child region started from here (0: none) */
    uint32_t last_slot;            /* and its slot: most STARTs repeat their sibling's */
};

/* One region on one thread, indexed by region id. */
struct region_state {
    uint64_t calls;       /* recorded calls completed, all callpaths */
    uint64_t incl_sum;    /* their inclusive time */
    uint64_t suppressed;  /* open STARTs of the throttled region, not pushed */
    uint64_t deep;        /* open STARTs beyond STACK_MAX, not pushed */
    uint64_t calls_after; /* calls since throttling */
    uint64_t mean_ns;     /* mean inclusive time when throttled */
    uint32_t throttled;
    uint32_t throttle_slot; /* slot index + 1; 0: none yet */
    unsigned char *gate;    /* GASP_C_FUNC_GATED's enable switch, when given */
    struct ppw_gasp_site *site; /* the last call site seen in this region */
    bool allocation;            /* ... an allocation site: throttled sooner */
    /* Calls timed after throttling at a quiet site, one a window of calls
     * the compiled code let by (ppw/gasp.h): */
    uint64_t sampled_calls, sampled_ns;
    uint64_t sampled_weight;  /* the calls of the windows they closed (1 for the first) */
    uint32_t last_window;     /* the window the last one opened: the gate it read */
    uint32_t spacing;         /* this thread's mean window here; 0 until timed (K) */
    uint64_t last_sampled_ns; /* when the last one ended */
};

struct cache_entry {
    struct ppw_region_key key;
    uint32_t region; /* 0: empty */
};

/* The last two child callpaths started under one callpath: a recursion or
 * a loop alternating between two callees finds its child's slot here
 * instead of hashing the callpath at every call. */
struct child_cache {
    uint32_t region[2]; /* 0: empty */
    uint32_t slot[2];
};

struct path_entry {
    uint64_t hash;
    uint32_t slot; /* SLOT_NONE: empty */
    uint32_t reserved;
};

enum prof_state { PROF_NONE, PROF_OPEN, PROF_FAILED };

/* t<N>.profile.ppw, mapped shared from offset 0: the header, then slots.
 * Everything refers to slots by index, since growing may move the map. */
struct profile {
    enum prof_state state;
    int fd; /* -1: anonymous (calibration) */
    uint8_t *base;
    size_t len;
    uint32_t nslots, cap;
};

#define SAMPLED_DEPTH 8

struct ppw_measure_thread {
    struct ppw_thread *thread;
    int profile_on, trace_on, scratch;
    unsigned depth; /* callpath depth */
    uint64_t throttle_calls, throttle_ns, throttle_alloc_calls;
    uint32_t throttle_sample; /* 0: throttled allocation sites go quiet */
    uint64_t throttle_sample_gap_ns;
    /* The sampled calls open on this thread, innermost last (a sampled
     * parallel region may hold a sampled lock); deeper ones go untimed. */
    struct {
        uint32_t region;
        uint64_t start;
    } sampled[SAMPLED_DEPTH];
    uint32_t nsampled;
    uint64_t gate_rng;        /* spacing of sampled calls */
    struct frame *stack;
    uint32_t top, stack_cap;
    struct region_state *regions;
    uint32_t regions_cap;
    struct cache_entry *cache; /* region key -> id, in front of the registry's lock */
    uint32_t cache_mask, cache_used;
    struct path_entry *paths; /* callpath hash -> timer slot */
    uint32_t paths_mask, paths_used;
    struct child_cache *kids; /* by timer slot */
    uint32_t kids_cap;
    struct profile prof;
    struct ppw_stream *trace;
    int trace_failed;
    uint32_t probe_slot; /* the PROBE slot's index + 1; 0: none yet */
    uint64_t unwound, unmatched, deep_calls, trace_lost; /* reported at thread end */
};

static struct ppw_rec_config config_rec;
static struct ppw_rec_calib calib_rec;

/* ---- memory ------------------------------------------------------------- */

static void *map_anon(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Grows an anonymous array of *cap elements to hold index `need`. */
static int grow_array(void **base, uint32_t *cap, size_t elem, uint64_t need, uint32_t max)
{
    if (need >= max)
        return -1;
    uint64_t n = *cap ? *cap : 64;
    while (n <= need)
        n *= 2;
    if (n > max)
        n = max;
    void *p =
        *base ? mremap(*base, *cap * elem, n * elem, MREMAP_MAYMOVE)
              : mmap(NULL, n * elem, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    *base = p;
    *cap = (uint32_t)n;
    return 0;
}

static struct region_state *region_state(struct ppw_measure_thread *m, uint32_t id)
{
    if (id >= m->regions_cap &&
        grow_array((void **)&m->regions, &m->regions_cap, sizeof *m->regions, id, UINT32_MAX))
        return NULL;
    return &m->regions[id];
}

/* ---- region lookup ------------------------------------------------------ */

static void cache_put(struct ppw_measure_thread *m, const struct ppw_region_key *k, uint32_t id)
{
    if ((m->cache_used + 1) * 2 > m->cache_mask + 1) {
        uint32_t old_cap = m->cache_mask + 1;
        struct cache_entry *old = m->cache, *fresh = map_anon(2 * old_cap * sizeof *fresh);
        if (!fresh)
            return; /* stays correct, only slower: misses go to the registry */
        m->cache = fresh;
        m->cache_mask = 2 * old_cap - 1;
        m->cache_used = 0;
        for (uint32_t i = 0; i < old_cap; i++)
            if (old[i].region)
                cache_put(m, &old[i].key, old[i].region);
        munmap(old, old_cap * sizeof *old);
    }
    uint32_t i = (uint32_t)ppw_regions_key_hash(k) & m->cache_mask;
    while (m->cache[i].region)
        i = (i + 1) & m->cache_mask;
    m->cache[i] = (struct cache_entry){.key = *k, .region = id};
    m->cache_used++;
}

static uint32_t cache_get(const struct ppw_measure_thread *m, const struct ppw_region_key *k)
{
    for (uint32_t i = (uint32_t)ppw_regions_key_hash(k) & m->cache_mask;;
         i = (i + 1) & m->cache_mask) {
        const struct cache_entry *e = &m->cache[i];
        if (!e->region || ppw_regions_key_equal(&e->key, k))
            return e->region;
    }
}

/* The event's region (0: none); funcsig is GASP_C_FUNC's.  Sets *desc
 * for user events and *ti for library operations. */
static uint32_t resolve(struct ppw_measure_thread *m, unsigned tag, const char *funcsig,
                        const char *file, int line, int col, const char **desc,
                        const struct ppw_tag_info **ti)
{
    struct ppw_region_key key = {.tag = tag};
    if (tag == GASP_C_FUNC) {
        key.ptr = funcsig;
    } else if ((*ti = ppw_regions_tag(tag))) {
        key = (struct ppw_region_key){.ptr = file, .tag = tag, .line = line, .col = col};
    } else {
        uint32_t id = ppw_regions_user(tag, desc);
        if (id)
            return id;
    }
    uint32_t id = cache_get(m, &key);
    if (id || m->scratch)
        return id;
    id = ppw_regions_intern(&key, file, line, col);
    if (id)
        cache_put(m, &key, id);
    return id;
}

/* ---- the profile file ---------------------------------------------------- */

static void *slot_at(const struct ppw_measure_thread *m, uint32_t slot)
{
    return m->prof.base + PPW_RUN_HEADER_SIZE + (size_t)slot * PPW_PROFILE_SLOT_SIZE;
}

static size_t prof_len(uint32_t slots)
{
    return PPW_RUN_HEADER_SIZE + (size_t)slots * PPW_PROFILE_SLOT_SIZE;
}

static void prof_fail(struct ppw_measure_thread *m, const char *what, int err)
{
    m->prof.state = PROF_FAILED;
    ppw_runfile_note_loss("thread %u: profile incomplete: %s t%u.profile.ppw: %s", m->thread->index,
                          what, m->thread->index, strerror(err));
}

static int prof_open(struct ppw_measure_thread *m)
{
    struct profile *p = &m->prof;
    size_t len = prof_len(PROF_INITIAL);
    if (m->scratch) {
        if (!(p->base = map_anon(len)))
            return -1;
    } else {
        char name[64];
        snprintf(name, sizeof name, "t%u.profile.ppw", m->thread->index);
        int dirfd = ppw_output_dirfd(), err = 0;
        p->fd = dirfd < 0
                    ? -1
                    : openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (dirfd < 0)
            err = EBADF;
        else if (p->fd < 0)
            err = errno;
        else {
            ppw_fd_own(&p->fd, PPW_FD_PROFILE); /* left unprotected when it cannot be */
            if ((err = -ppw_file_reserve(p->fd, 0, len)) == 0) {
                void *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
                if (b == MAP_FAILED)
                    err = errno;
                else
                    p->base = b;
            }
        }
        if (err) {
            if (p->fd >= 0) {
                ppw_fd_close(&p->fd);
                unlinkat(dirfd, name, 0);
            }
            p->fd = -1;
            prof_fail(m, "cannot create", err);
            return -1;
        }
        struct ppw_file_header *h = (struct ppw_file_header *)p->base;
        ppw_file_header_init(h, PPW_FILE_PROFILE, m->thread->index);
        h->slot_size = PPW_PROFILE_SLOT_SIZE;
    }
    p->len = len;
    p->cap = PROF_INITIAL;
    p->nslots = 0;
    p->state = PROF_OPEN;
    return 0;
}

static int prof_grow(struct ppw_measure_thread *m)
{
    struct profile *p = &m->prof;
    size_t len = prof_len(p->cap * 2);
    int err = p->fd >= 0 ? -ppw_file_reserve(p->fd, p->len, len - p->len) : 0;
    if (p->cap * 2 > SLOT_NONE / 2)
        err = EFBIG;
    void *b = err ? MAP_FAILED : mremap(p->base, p->len, len, MREMAP_MAYMOVE);
    if (b == MAP_FAILED) {
        prof_fail(m, "cannot grow", err ? err : errno);
        return -1;
    }
    p->base = b;
    p->len = len;
    p->cap *= 2;
    return 0;
}

/* A zeroed slot to fill, then publish with slot_commit; NULL without a
 * profile. */
static void *slot_new(struct ppw_measure_thread *m, uint32_t *slot)
{
    struct profile *p = &m->prof;
    if (p->state == PROF_FAILED || (p->state == PROF_NONE && prof_open(m) < 0) ||
        (p->nslots == p->cap && prof_grow(m) < 0))
        return NULL;
    *slot = p->nslots;
    return memset(slot_at(m, p->nslots), 0, PPW_PROFILE_SLOT_SIZE);
}

static void slot_commit(struct ppw_measure_thread *m)
{
    struct profile *p = &m->prof;
    p->nslots++;
    if (p->fd >= 0)
        __atomic_store_n(&((struct ppw_file_header *)p->base)->committed,
                         (uint64_t)p->nslots * PPW_PROFILE_SLOT_SIZE, __ATOMIC_RELEASE);
}

static void prof_close(struct ppw_measure_thread *m, int keep_file)
{
    struct profile *p = &m->prof;
    if (p->base && keep_file && p->fd >= 0) {
        struct ppw_file_header *h = (struct ppw_file_header *)p->base;
        /* Sealed: a checksum of the slots, now that they no longer change. */
        h->reserved = ppw_crc32c(0, (const uint8_t *)p->base + PPW_RUN_HEADER_SIZE,
                                 (size_t)p->nslots * PPW_PROFILE_SLOT_SIZE);
        __atomic_or_fetch(&h->flags, PPW_FILE_CLOSED | PPW_FILE_SEALED, __ATOMIC_RELEASE);
        if (ftruncate(p->fd, (off_t)prof_len(p->nslots)) < 0) {
            /* the preallocated tail stays; committed still bounds the data */
        }
    }
    if (p->base)
        munmap(p->base, p->len);
    ppw_fd_close(&p->fd);
    *p = (struct profile){.state = PROF_NONE, .fd = -1};
}

/* ---- timers ---------------------------------------------------------------- */

static uint64_t path_hash(const uint32_t *path, uint32_t depth)
{
    uint64_t h = depth * 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < depth; i++)
        h = (h ^ path[i]) * 0x100000001b3ull;
    return h ^ (h >> 31);
}

static int paths_insert(struct ppw_measure_thread *m, uint64_t hash, uint32_t slot)
{
    if ((m->paths_used + 1) * 2 > m->paths_mask + 1) {
        uint32_t old_cap = m->paths_mask + 1;
        struct path_entry *old = m->paths, *fresh = map_anon(2 * old_cap * sizeof *fresh);
        if (!fresh)
            return -1;
        memset(fresh, 0xff, 2 * old_cap * sizeof *fresh);
        m->paths = fresh;
        m->paths_mask = 2 * old_cap - 1;
        m->paths_used = 0;
        for (uint32_t i = 0; i < old_cap; i++)
            if (old[i].slot != SLOT_NONE)
                paths_insert(m, old[i].hash, old[i].slot);
        munmap(old, old_cap * sizeof *old);
    }
    uint32_t i = (uint32_t)hash & m->paths_mask;
    while (m->paths[i].slot != SLOT_NONE)
        i = (i + 1) & m->paths_mask;
    m->paths[i] = (struct path_entry){.hash = hash, .slot = slot};
    m->paths_used++;
    return 0;
}

/* The timer slot of `region` called from stack[below] (created on first
 * use), or SLOT_NONE without a profile. */
static uint32_t find_slot(struct ppw_measure_thread *m, uint32_t region, uint32_t below)
{
    uint32_t path[PPW_CALLPATH_MAX], depth = 0;
    path[depth++] = region;
    for (uint32_t i = below; i >= 1 && depth < m->depth; i--)
        path[depth++] = m->stack[i].region;
    uint64_t hash = path_hash(path, depth);
    for (uint32_t i = (uint32_t)hash & m->paths_mask;; i = (i + 1) & m->paths_mask) {
        const struct path_entry *e = &m->paths[i];
        if (e->slot == SLOT_NONE)
            break;
        const struct ppw_rec_timer *t = slot_at(m, e->slot);
        if (e->hash == hash && t->depth == depth &&
            memcmp(t->path, path, depth * sizeof *path) == 0)
            return e->slot;
    }
    uint32_t slot;
    struct ppw_rec_timer *t = slot_new(m, &slot);
    if (!t)
        return SLOT_NONE;
    t->slot_kind = PPW_SLOT_TIMER;
    t->depth = depth;
    memcpy(t->path, path, depth * sizeof *path);
    if (paths_insert(m, hash, slot) < 0) {
        prof_fail(m, "no memory for", ENOMEM);
        return SLOT_NONE;
    }
    slot_commit(m);
    return slot;
}

/* The slot of `region` as a child of the top frame: the frame's last
 * child, else its callpath's two last children, else a lookup.  A child's
 * callpath is the region followed by its parent's, so the parent's slot
 * determines it. */
static uint32_t child_slot(struct ppw_measure_thread *m, uint32_t region)
{
    struct frame *p = &m->stack[m->top];
    if (p->last_child == region)
        return p->last_slot;
    struct child_cache *k = NULL;
    if (p->slot != SLOT_NONE &&
        (p->slot < m->kids_cap ||
         !grow_array((void **)&m->kids, &m->kids_cap, sizeof *m->kids, p->slot, UINT32_MAX)))
        k = &m->kids[p->slot];
    uint32_t slot = k && k->region[0] == region   ? k->slot[0]
                    : k && k->region[1] == region ? k->slot[1]
                                                  : find_slot(m, region, m->top);
    if (k && k->region[0] != region && slot != SLOT_NONE) { /* to the front */
        k->region[1] = k->region[0];
        k->slot[1] = k->slot[0];
        k->region[0] = region;
        k->slot[0] = slot;
    }
    p->last_child = region;
    p->last_slot = slot;
    return slot;
}

static void timer_add(struct ppw_rec_timer *t, const struct frame *f, uint64_t incl, uint64_t excl,
                      uint32_t flags)
{
    if (t->count == 0 || incl < t->incl_min_ns)
        t->incl_min_ns = incl;
    if (incl > t->incl_max_ns)
        t->incl_max_ns = incl;
    t->subcalls += f->subcalls;
    t->incl_sum_ns += incl;
    t->excl_sum_ns += excl;
    t->excl_sumsq_ns2 += (double)excl * (double)excl;
    t->probes_inner += f->rec_desc;
    t->probes_throttled += f->thr_desc;
    t->probes_child += f->rec_child;
    t->throttled_child += f->thr_child;
    t->bytes += f->bytes;
    t->flags |= flags;
    t->count++;
}

/* ---- throttling ------------------------------------------------------------ */

/* The throttled region's calls_after, in its THROTTLE slot (made on first
 * use: after a fork the child's file needs its own). */
static void throttle_update(struct ppw_measure_thread *m, struct region_state *r, uint32_t region)
{
    if (!m->profile_on)
        return;
    struct ppw_rec_throttle *s;
    if (!r->throttle_slot) {
        uint32_t slot;
        if (!(s = slot_new(m, &slot)))
            return;
        *s = (struct ppw_rec_throttle){.slot_kind = PPW_SLOT_THROTTLE,
                                       .region = region,
                                       .calls_before = r->calls,
                                       .mean_ns = r->mean_ns};
        slot_commit(m);
        r->throttle_slot = slot + 1;
    }
    s = slot_at(m, r->throttle_slot - 1);
    s->calls_after = r->calls_after;
    if (r->sampled_calls) {
        /* The mean window: the closed ones, and half the open one. */
        uint64_t calls = r->sampled_weight + r->last_window / 2;
        uint64_t period = (calls + r->sampled_calls / 2) / r->sampled_calls;
        s->sample_period = period < 2 ? 2 : period > PPW_THROTTLE_SAMPLE_MAX ? PPW_THROTTLE_SAMPLE_MAX
                                                                             : period;
        s->sampled_calls = r->sampled_calls;
        s->sampled_ns = r->sampled_ns;
    }
}

/* The largest mean spacing: the largest window drawn, 3/2 of it, stays
 * within what a run's reader accepts as a mean. */
#define SPACING_MAX (PPW_THROTTLE_SAMPLE_MAX / 3 * 2)

/* A throttled site's gate: one call in about the region's spacing on this
 * thread (at first throttle_sample), drawn at random in [K/2, 3K/2) so
 * that no loop's period aliases with it; 0 (quiet) when sampling is off. */
static void gate_sampled(struct ppw_measure_thread *m, const struct region_state *r,
                         struct ppw_gasp_site *site)
{
    int gate = 0;
    if (m->throttle_sample > 1) {
        uint32_t k = r->spacing ? r->spacing : m->throttle_sample;
        gate = (int)(k / 2 + ppw_xorshift64(&m->gate_rng) % k);
        if (gate < 2)
            gate = 2;
    } else if (m->throttle_sample == 1) {
        gate = 1;
    }
    __atomic_store_n(&site->gate, gate, __ATOMIC_RELAXED);
}

static void throttle(struct ppw_measure_thread *m, struct region_state *r, uint32_t region)
{
    r->throttled = 1;
    r->mean_ns = r->incl_sum / r->calls;
    /* Compiled code with an enable switch stops calling altogether, in
     * every thread: a throttled probe then costs a load and a branch. */
    if (r->gate && !m->scratch)
        __atomic_store_n(r->gate, 0, __ATOMIC_RELAXED);
    if (r->site && !m->scratch)
        gate_sampled(m, r, r->site);
    throttle_update(m, r, region);
    if (!m->scratch && ppw_regions_claim_note(region))
        ppw_runfile_note(0, "throttled region %s after %llu calls, mean %llu ns (thread %u)",
                         ppw_regions_name(region), (unsigned long long)r->calls,
                         (unsigned long long)r->mean_ns, m->thread->index);
}

static int mean_below(const struct region_state *r, uint64_t ns)
{
    uint64_t limit;
    return __builtin_mul_overflow(r->calls, ns, &limit) || r->incl_sum < limit;
}

/* ---- events ---------------------------------------------------------------- */

enum start_result { START_SKIPPED, START_UNTIMED, START_PUSHED };

static enum start_result on_start(struct ppw_measure_thread *m, struct region_state *r,
                                  uint32_t region, const char *funcsig)
{
    if (r->throttled) {
        r->suppressed++;
        return START_SKIPPED;
    }
    if (m->top + 1 >= m->stack_cap &&
        grow_array((void **)&m->stack, &m->stack_cap, sizeof *m->stack, m->top + 1, STACK_MAX)) {
        r->deep++;
        m->deep_calls++;
        return START_UNTIMED;
    }
    uint32_t slot = m->profile_on ? child_slot(m, region) : SLOT_NONE;
    m->stack[++m->top] = (struct frame){.funcsig = funcsig, .region = region, .slot = slot};
    return START_PUSHED;
}

/* Pops the top frame: its timer, its parent's child sums, throttling. */
static void close_top(struct ppw_measure_thread *m, uint64_t now, uint32_t flags)
{
    struct frame *f = &m->stack[m->top], *p = f - 1;
    uint32_t region = f->region;
    uint64_t incl = now > f->start_ns ? now - f->start_ns : 0;
    uint64_t excl = incl > f->child_incl ? incl - f->child_incl : 0;
    if (m->profile_on) {
        if (f->slot == SLOT_NONE && m->prof.state != PROF_FAILED)
            f->slot = find_slot(m, region, m->top - 1); /* after a fork reset */
        if (f->slot != SLOT_NONE)
            timer_add(slot_at(m, f->slot), f, incl, excl, flags);
    }
    p->child_incl += incl;
    p->subcalls++;
    p->rec_child++;
    p->rec_desc += f->rec_desc + 1;
    p->thr_desc += f->thr_desc;
    m->top--;
    struct region_state *r = &m->regions[region];
    r->calls++;
    r->incl_sum += incl;
    /* Allocation sites throttle sooner, and only when their calls are a
     * tenth as long (1 us by default): a small block's malloc is the
     * cheapest call there is, while a large one's page faults take longer
     * than its probes and are worth timing exactly (CoMD's allocator,
     * 10 us a call, was throttled after 1000 calls and estimated from 4). */
    uint64_t limit = r->allocation ? m->throttle_alloc_calls : m->throttle_calls;
    uint64_t tiny = r->allocation ? m->throttle_ns / 10 : m->throttle_ns;
    if (!r->throttled && m->throttle_calls && r->calls >= limit && mean_below(r, tiny))
        throttle(m, r, region);
}

enum end_result { END_THROTTLED, END_UNMATCHED, END_DEEP, END_CLOSED };

/* Traced unless END_THROTTLED or END_UNMATCHED.  Reads the clock into *now
 * once it knows the call was timed: a throttled END never reads it. */
static enum end_result on_end(struct ppw_measure_thread *m, struct region_state *r, uint32_t region,
                              uint64_t *now)
{
    /* Open STARTs not on the stack are the innermost calls of their region:
     * throttled ones began after every pushed one, and STARTs go untimed
     * only above a full stack. */
    if (r->suppressed) {
        struct frame *p = &m->stack[m->top];
        r->suppressed--;
        r->calls_after++;
        throttle_update(m, r, region);
        p->subcalls++;
        p->thr_child++;
        p->thr_desc++;
        return END_THROTTLED;
    }
    *now = ppw_now_ns();
    if (r->deep) {
        r->deep--;
        return END_DEEP;
    }
    uint32_t k = 0;
    while (k < UNWIND_WINDOW && k < m->top && m->stack[m->top - k].region != region)
        k++;
    if (k == UNWIND_WINDOW || k == m->top) {
        m->unmatched++; /* never started here, or too far down to be a missed END */
        return END_UNMATCHED;
    }
    for (; k > 0; k--) {
        close_top(m, *now, PPW_TIMER_UNWOUND);
        m->unwound++;
    }
    close_top(m, *now, 0);
    return END_CLOSED;
}

/* A call of zero time.  1 when traced. */
static int on_atomic(struct ppw_measure_thread *m, struct region_state *r, uint32_t region)
{
    if (r->throttled) {
        r->calls_after++;
        throttle_update(m, r, region);
        return 0;
    }
    uint32_t slot = m->profile_on ? child_slot(m, region) : SLOT_NONE;
    if (slot != SLOT_NONE) {
        struct ppw_rec_timer *t = slot_at(m, slot);
        if (t->count == 0)
            t->incl_min_ns = 0;
        t->count++;
    }
    m->stack[m->top].subcalls++;
    return 1;
}

/* ---- message volume ---------------------------------------------------------- */

/* MPI and SHMEM operations that move data (ppw/gasp_events.h), or
 * (window creation, symmetric allocation) make memory others reach: their
 * bytes go into the frame. */
static bool moves_data(unsigned tag)
{
    return ppw_gasp_tag_moves_elements(tag) || tag == GASP_MPI_WIN_CREATE ||
           tag == GASP_MPI_WIN_ALLOCATE || ppw_gasp_tag_is_shmem(tag);
}

static uint64_t message_bytes(unsigned tag, const uint64_t *args, uint32_t nargs)
{
    if (tag == GASP_MPI_WIN_CREATE && nargs >= 2) /* base size disp_unit comm &win */
        return (int64_t)args[1] > 0 ? args[1] : 0;
    if (tag == GASP_MPI_WIN_ALLOCATE && nargs >= 1) /* size disp_unit comm &base &win */
        return (int64_t)args[0] > 0 ? args[0] : 0;
    if ((tag == GASP_SHMEM_MALLOC && nargs >= 1) || (tag == GASP_SHMEM_REALLOC && nargs >= 2))
        return args[nargs - 1]; /* (size) or (ptr, size) */
    uint64_t bytes = 0;
    if (tag == GASP_SHMEM_CALLOC && nargs >= 2)
        return __builtin_mul_overflow(args[0], args[1], &bytes) ? 0 : bytes;
    if (ppw_gasp_tag_is_shmem(tag))
        return ppw_gasp_shmem_bytes(tag, args, nargs);
    struct ppw_gasp_moved moved;
    int pairs = ppw_mpi_bytes ? ppw_gasp_moved_elements(tag, args, nargs, &moved) : 0;
    for (int i = 0; i < pairs; i++)
        bytes += ppw_mpi_bytes((uint64_t)moved.count[i], moved.type[i]);
    return bytes;
}

/* A window's creation and free pass the handle (and MPI_Win_allocate the
 * base) by address: the trace keeps the handle and the base, which the
 * window's later calls name, instead.  The addresses are the program's
 * own, just written by a call that succeeded (END, result 0) or about to
 * be read by MPI_Win_free (START). */
static void window_handles(unsigned tag, gasp_evttype_t type, uint64_t *args, uint32_t nargs)
{
    void *const *p;
    if (type == GASP_END && nargs >= 6 && args[nargs - 1] == 0 &&
        (tag == GASP_MPI_WIN_CREATE || tag == GASP_MPI_WIN_ALLOCATE)) {
        /* create: base size disp_unit comm &win; allocate: size disp_unit
         * comm &base &win */
        if (args[4] && ppw_mpi_window_at)
            args[4] = ppw_mpi_window_at(args[4]);
        if (tag == GASP_MPI_WIN_ALLOCATE && (p = (const void *)(uintptr_t)args[3]))
            args[3] = (uint64_t)(uintptr_t)*p;
    } else if (tag == GASP_MPI_WIN_FREE && type == GASP_START && nargs >= 1 && args[0] &&
               ppw_mpi_window_at) {
        args[0] = ppw_mpi_window_at(args[0]);
    }
}

/* ---- trace ----------------------------------------------------------------- */

static void *trace_reserve(struct ppw_measure_thread *m, uint32_t size)
{
    static _Alignas(8)
        uint8_t scratch[sizeof(struct ppw_rec_trace) + 8 * TRACE_ARGS_MAX + TRACE_TEXT_MAX + 8];
    if (m->scratch)
        return scratch;
    if (!m->trace) {
        if (m->trace_failed || !(m->trace = ppw_thread_events(m->thread))) {
            m->trace_failed = 1;
            m->trace_lost++;
            return NULL;
        }
    }
    void *body = ppw_stream_reserve(m->trace, PPW_EVT_TRACE, size);
    if (!body)
        m->trace_lost++;
    return body;
}

/* One PPW_EVT_TRACE record: library operations carry their operands
 * (args, read by the caller; see ppw_tag_info), user events their
 * formatted description. */
static void trace_event(struct ppw_measure_thread *m, uint32_t region, gasp_evttype_t type,
                        const char *desc, va_list *ap, const uint64_t *args, uint32_t nargs,
                        uint64_t now)
{
    char text[TRACE_TEXT_MAX];
    uint32_t textlen = 0;
    if (desc) {
        int n =
            ap ? vsnprintf(text, sizeof text, desc, *ap) : snprintf(text, sizeof text, "%s", desc);
        textlen = n < 0 ? 0 : n >= (int)sizeof text ? sizeof text - 1 : (uint32_t)n;
        text[textlen] = '\0';
        nargs = 0;
    }
    uint32_t used = sizeof(struct ppw_rec_trace) + 8 * nargs + (desc ? textlen + 1 : 0);
    uint32_t size = (used + 7) & ~7u;
    uint8_t *body = trace_reserve(m, size);
    if (!body)
        return;
    struct ppw_rec_trace rec = {.time_ns = now,
                                .region = region,
                                .evttype = (uint16_t)type,
                                .nargs = (uint16_t)(nargs | (desc ? 0x8000u : 0))};
    memcpy(body, &rec, sizeof rec);
    memcpy(body + sizeof rec, args, 8 * nargs);
    if (desc)
        memcpy(body + sizeof rec + 8 * nargs, text, textlen + 1);
    memset(body + used, 0, size - used);
    if (!m->scratch)
        ppw_stream_commit(m->trace);
}

/* A hot site's spacing grows with its rate: the window just closed took
 * `now - last_sampled_ns`, so that many calls a gap apart come at
 * last_window x gap / elapsed.  A thread then times a site's calls about
 * a gap apart at most (PPW_THROTTLE_SAMPLE_USEC), never more than 1 in
 * throttle_sample, whatever the site's rate: a malloc site of 50M calls a
 * second would otherwise cost a timed call every 20 us.  The estimate
 * stays exact, as every timed call adds the window it closed. */
static void space_sampled_calls(struct ppw_measure_thread *m, struct region_state *r,
                                uint64_t now)
{
    if (!m->throttle_sample_gap_ns || !r->last_window || now <= r->last_sampled_ns ||
        !r->last_sampled_ns)
        return;
    uint64_t k = (uint64_t)r->last_window * m->throttle_sample_gap_ns / (now - r->last_sampled_ns);
    /* Growing at most twofold a window: one fast window (the thread's
     * partner preempted, say) does not make the next one, whose calls the
     * estimate may count only half, many times too long. */
    uint64_t most = 2 * (uint64_t)(r->spacing ? r->spacing : m->throttle_sample);
    if (k > most)
        k = most;
    r->spacing = k < m->throttle_sample ? m->throttle_sample : k > SPACING_MAX ? SPACING_MAX
                                                                              : (uint32_t)k;
}

/* A call at a throttled site let through 1 in about throttle_sample
 * (ppw/gasp.h): timed apart from the region's timers, which it must not
 * skew, and not pushed, as a throttled call is not (what runs inside it
 * belongs to its caller's frame). */
static void sampled_call(struct ppw_measure_thread *m, struct region_state *r, uint32_t region,
                         gasp_evttype_t type, struct ppw_gasp_site *site, int64_t window)
{
    if (type == GASP_START) {
        if (m->nsampled < SAMPLED_DEPTH) {
            m->sampled[m->nsampled].region = region;
            m->sampled[m->nsampled].start = ppw_now_ns();
        }
        m->nsampled++;
        return;
    }
    if (type != GASP_END || m->nsampled == 0)
        return;
    uint32_t top = --m->nsampled;
    if (top >= SAMPLED_DEPTH || m->sampled[top].region != region)
        return;
    uint64_t now = ppw_now_ns(), start = m->sampled[top].start;
    r->sampled_calls++;
    r->sampled_ns += now > start ? now - start : 0;
    r->sampled_weight += r->last_window ? r->last_window : 1;
    space_sampled_calls(m, r, now);
    r->last_window = window > UINT32_MAX ? UINT32_MAX : (uint32_t)window;
    r->last_sampled_ns = now;
    if (!r->throttle_slot && !r->throttled)
        r->mean_ns = r->calls ? r->incl_sum / r->calls : 0;
    struct frame *p = &m->stack[m->top];
    p->subcalls++;
    p->rec_child++;
    p->rec_desc++;
    r->site = site;
    gate_sampled(m, r, site); /* the next window */
    throttle_update(m, r, region);
}

static bool is_allocation(const struct ppw_tag_info *ti)
{
    return ti && (ti->op == PPW_OP_MEM_ALLOC || ti->op == PPW_OP_MEM_FREE);
}

enum ppw_probe_kind ppw_measure_event(struct ppw_thread *t, unsigned int tag, gasp_evttype_t type,
                                      const char *file, int line, int col,
                                      struct ppw_gasp_site *site, int64_t gate_read, va_list *ap,
                                      uint64_t *clock_read)
{
    struct ppw_measure_thread *m = t->measure;
    if (!m) {
        /* Nothing measures events in this process: close the site, so
         * that its calls stop coming here at all. */
        if (site && !(ppw_config.modes & (PPW_MODE_PROFILE | PPW_MODE_TRACE)))
            __atomic_store_n(&site->gate, 0, __ATOMIC_RELAXED);
        return PPW_PROBE_OTHER;
    }
    /* START reads the clock last (only its trace record follows) and END
     * as early as it can, so that little of ppw's own work lands inside
     * the region (inner_ns); a throttled END does not read it at all. */
    uint64_t now = 0;
    const char *desc = NULL, *funcsig = NULL;
    const struct ppw_tag_info *ti = NULL;
    uint32_t region = 0;
    unsigned char *gate = NULL;
    if (tag == GASP_C_FUNC || tag == GASP_C_FUNC_GATED) {
        funcsig = ap ? va_arg(*ap, const char *) : NULL;
        if (tag == GASP_C_FUNC_GATED && ap)
            gate = va_arg(*ap, unsigned char *);
        tag = GASP_C_FUNC; /* one region, whichever form the compiler used */
        const struct frame *top = &m->stack[m->top];
        if (type == GASP_END && top->funcsig == funcsig && funcsig)
            region = top->region; /* the usual END: no lookup */
    }
    if (site && !m->scratch && (region = __atomic_load_n(&site->region, __ATOMIC_RELAXED)))
        ti = ppw_regions_tag(tag); /* resolved once, then indexed */
    if (!region) {
        region = resolve(m, tag, funcsig, file, line, col, &desc, &ti);
        if (site && region && !m->scratch)
            __atomic_store_n(&site->region, region, __ATOMIC_RELAXED);
    }
    struct region_state *r = region ? region_state(m, region) : NULL;
    if (!r)
        return PPW_PROBE_OTHER;
    if (site && !m->scratch) {
        if (gate_read > 1) {
            sampled_call(m, r, region, type, site, gate_read);
            return PPW_PROBE_OTHER;
        }
        r->site = site;
        r->allocation = is_allocation(ti);
        /* Another site of a region this thread throttled: sample it too. */
        if (r->throttled && m->throttle_sample != 1)
            gate_sampled(m, r, site);
    }
    if (gate) {
        r->gate = gate;
        /* The same function in a library loaded again: its switch is set
         * again, and stays cleared once the region is throttled. */
        if (r->throttled && !m->scratch)
            __atomic_store_n(gate, 0, __ATOMIC_RELAXED);
    }
    /* A library operation's operands: for its trace record, and an MPI
     * START's for the bytes it moves. */
    uint64_t args[TRACE_ARGS_MAX];
    uint32_t nargs = 0;
    bool moves = type == GASP_START && ti && moves_data(tag);
    if (ti && ap && type != GASP_ATOMIC && (m->trace_on || moves)) {
        nargs = type == GASP_START ? ti->nargs_start : ti->nargs_end;
        for (uint32_t i = 0; i < nargs; i++)
            args[i] = va_arg(*ap, uint64_t);
        window_handles(tag, type, args, nargs);
    }
    int traced, pushed = 0;
    enum ppw_probe_kind kind = PPW_PROBE_OTHER;
    switch (type) {
    case GASP_START: {
        enum start_result s = on_start(m, r, region, tag == GASP_C_FUNC ? funcsig : NULL);
        traced = s != START_SKIPPED;
        pushed = s == START_PUSHED;
        kind = pushed ? PPW_PROBE_START : traced ? PPW_PROBE_OTHER : PPW_PROBE_THROTTLED;
        break;
    }
    case GASP_END: {
        enum end_result e = on_end(m, r, region, &now);
        traced = e == END_DEEP || e == END_CLOSED;
        kind = e == END_CLOSED      ? PPW_PROBE_END
               : e == END_THROTTLED ? PPW_PROBE_THROTTLED
                                    : PPW_PROBE_OTHER;
        break;
    }
    case GASP_ATOMIC: traced = on_atomic(m, r, region); break;
    default: return PPW_PROBE_OTHER;
    }
    if (pushed || (traced && m->trace_on && type != GASP_END))
        now = ppw_now_ns();
    if (traced && m->trace_on)
        trace_event(m, region, type, desc, ap, args, nargs, now);
    if (pushed) {
        m->stack[m->top].start_ns = now;
        if (moves)
            m->stack[m->top].bytes = message_bytes(tag, args, nargs);
    }
    if (kind == PPW_PROBE_START || kind == PPW_PROBE_END)
        *clock_read = now;
    return kind;
}

/* ---- probe windows (docs/runtime.md, "In-situ probe cost") --------------- */

static struct ppw_rec_probe *probe_slot(struct ppw_measure_thread *m)
{
    if (!m->profile_on)
        return NULL;
    if (!m->probe_slot) {
        uint32_t slot;
        struct ppw_rec_probe *w = slot_new(m, &slot);
        if (!w)
            return NULL;
        *w = (struct ppw_rec_probe){.slot_kind = PPW_SLOT_PROBE,
                                    .window_period = PPW_PROBE_WINDOW_PERIOD};
        slot_commit(m);
        m->probe_slot = slot + 1;
    }
    return slot_at(m, m->probe_slot - 1);
}

void ppw_measure_probe_window(struct ppw_thread *t, enum ppw_probe_kind kind, uint64_t gap_start,
                              uint64_t entry, uint64_t now, uint64_t exit)
{
    struct ppw_measure_thread *m = t->measure;
    struct ppw_rec_probe *w;
    if (!m || kind == PPW_PROBE_OTHER || !(w = probe_slot(m)))
        return;
    if (exit < entry || entry < gap_start || exit - gap_start > PPW_PROBE_WINDOW_MAX_NS) {
        w->interrupted++;
        return;
    }
    uint64_t span = exit - entry;
    w->clock_ns += entry - gap_start;
    switch (kind) {
    case PPW_PROBE_START:
        w->start_count++;
        w->start_ns += span;
        w->start_tail_ns += exit - now;
        break;
    case PPW_PROBE_END:
        w->end_count++;
        w->end_ns += span;
        w->end_head_ns += now - entry;
        break;
    case PPW_PROBE_THROTTLED:
        w->throttled_count++;
        w->throttled_ns += span;
        break;
    case PPW_PROBE_OTHER: break;
    }
}

/* While set (calibration only, on the calibrating thread), every event
 * gets a window. */
static int window_every_event;

int32_t ppw_probe_window_next(uint64_t *rng)
{
    if (window_every_event)
        return 1;
    if (!*rng) /* each thread's own seed: its state's address */
        *rng = (uint64_t)(uintptr_t)rng | 1u;
    return PPW_PROBE_WINDOW_PERIOD / 2 + (int32_t)(ppw_xorshift64(rng) % PPW_PROBE_WINDOW_PERIOD);
}

unsigned int ppw_measure_create_event(const char *name, const char *desc)
{
    return ppw_regions_create_user(name, desc);
}

/* ---- threads --------------------------------------------------------------- */

static void state_free(struct ppw_measure_thread *m)
{
    if (m->stack)
        munmap(m->stack, m->stack_cap * sizeof *m->stack);
    if (m->regions)
        munmap(m->regions, m->regions_cap * sizeof *m->regions);
    if (m->cache)
        munmap(m->cache, (m->cache_mask + 1) * sizeof *m->cache);
    if (m->paths)
        munmap(m->paths, (m->paths_mask + 1) * sizeof *m->paths);
    if (m->kids)
        munmap(m->kids, m->kids_cap * sizeof *m->kids);
    munmap(m, sizeof *m);
}

static unsigned callpath_depth(void)
{
    unsigned d = ppw_config.callpath_depth;
    return d == 0 || d > PPW_CALLPATH_MAX ? PPW_CALLPATH_MAX : d;
}

static struct ppw_measure_thread *state_new(struct ppw_thread *t, int scratch)
{
    struct ppw_measure_thread *m = map_anon(sizeof *m);
    if (!m)
        return NULL;
    m->thread = t;
    m->scratch = scratch;
    m->profile_on = !!(ppw_config.modes & PPW_MODE_PROFILE);
    m->trace_on = !!(ppw_config.modes & PPW_MODE_TRACE);
    m->depth = callpath_depth();
    m->throttle_calls = scratch ? 0 : ppw_config.throttle_calls;
    m->throttle_ns = ppw_config.throttle_ns;
    m->throttle_sample = ppw_config.throttle_sample;
    m->throttle_sample_gap_ns = ppw_config.throttle_sample_gap_ns;
    m->throttle_alloc_calls = ppw_config.throttle_alloc_calls;
    m->gate_rng = ((uint64_t)(uintptr_t)m ^ ppw_now_ns()) | 1; /* xorshift: never 0 */
    m->prof.fd = -1;
    m->stack_cap = STACK_INITIAL;
    m->cache_mask = m->paths_mask = TABLE_INITIAL - 1;
    m->stack = map_anon(STACK_INITIAL * sizeof *m->stack);
    m->cache = map_anon(TABLE_INITIAL * sizeof *m->cache);
    m->paths = map_anon(TABLE_INITIAL * sizeof *m->paths);
    if (!m->stack || !m->cache || !m->paths) {
        state_free(m);
        return NULL;
    }
    memset(m->paths, 0xff, TABLE_INITIAL * sizeof *m->paths);
    m->stack[0].slot = SLOT_NONE;
    return m;
}

void ppw_measure_thread_begin(struct ppw_thread *t)
{
    if (t->measure || !(ppw_config.modes & (PPW_MODE_PROFILE | PPW_MODE_TRACE)))
        return;
    if (!(t->measure = state_new(t, 0)))
        ppw_runfile_note(1, "thread %u: no memory for GASP measurement", t->index);
}

void ppw_measure_thread_end(struct ppw_thread *t)
{
    struct ppw_measure_thread *m = t->measure;
    if (!m)
        return;
    uint64_t now = ppw_now_ns();
    while (m->top > 0)
        close_top(m, now, PPW_TIMER_OPEN);
    prof_close(m, 1);
    if (m->unwound || m->unmatched || m->deep_calls || m->trace_lost)
        ppw_runfile_note(0,
                         "thread %u: %llu calls closed by an outer END (longjmp or missing END); "
                         "%llu END events without an open START ignored; %llu calls nested "
                         "deeper than %u not timed; %llu trace records lost",
                         t->index, (unsigned long long)m->unwound, (unsigned long long)m->unmatched,
                         (unsigned long long)m->deep_calls, STACK_MAX,
                         (unsigned long long)m->trace_lost);
    t->measure = NULL;
    state_free(m);
}

void ppw_measure_thread_abandon(struct ppw_thread *t)
{
    struct ppw_measure_thread *m = t->measure;
    if (!m)
        return;
    prof_close(m, 0);
    if (t != ppw_thread_self()) { /* a thread the fork()ed child does not have */
        t->measure = NULL;
        state_free(m);
        return;
    }
    memset(m->paths, 0xff, (m->paths_mask + 1) * sizeof *m->paths);
    m->paths_used = 0;
    if (m->kids) /* slot numbers start again in the child's file */
        memset(m->kids, 0, m->kids_cap * sizeof *m->kids);
    for (uint32_t i = 0; i <= m->top; i++) {
        m->stack[i].slot = SLOT_NONE;
        m->stack[i].last_child = 0;
    }
    for (uint32_t i = 0; i < m->regions_cap; i++) {
        /* calls_after counts this process's calls; open frames keep
         * theirs, since their time spans the fork too */
        m->regions[i].throttle_slot = 0;
        m->regions[i].calls_after = 0;
    }
    m->trace = NULL;
    m->trace_failed = 0;
    m->probe_slot = 0;
    m->unwound = m->unmatched = m->deep_calls = m->trace_lost = 0;
}

/* ---- calibration (seed 001 §6) ------------------------------------------- */

#define CALIB_BATCH 200
#define CALIB_BATCHES 16
#define CALIB_WINDOW_BATCHES 8
#define CALIB_REGION 1

static const char calib_sig[] = "ppw probe calibration";

/* The pass's probe call exactly: the gate test, then an indirect call of
 * the exported entry point (as through the PLT) with the pass's eight
 * arguments, so that the calibration pays what a probe in the program
 * pays outside libppw too. */
typedef void (*entry_point_fn)(gasp_context_t, unsigned int, gasp_evttype_t, const char *, int, int,
                               ...);
static entry_point_fn volatile calib_entry = gasp_event_notify;
static unsigned char calib_gate = 1;

static __attribute__((noinline)) void calib_probe(gasp_evttype_t type)
{
    if (*(volatile unsigned char *)&calib_gate)
        calib_entry(NULL, GASP_C_FUNC_GATED, type, __FILE__, __LINE__, 0, calib_sig, &calib_gate);
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One batch of START/END pairs through the entry point. */
static void probe_batch(void)
{
    for (int i = 0; i < CALIB_BATCH; i++) {
        calib_probe(GASP_START);
        calib_probe(GASP_END);
    }
}

/* Median over batches of the mean cost of a START/END pair, and of the
 * dummy region's mean inclusive time.  The events go through the entry
 * point on the calling thread with t as its state, windows timed as in
 * the program, so that their amortized cost is in the pair's. */
static double time_pairs(struct ppw_thread *t, double *inner)
{
    struct region_state *r = &t->measure->regions[CALIB_REGION];
    double pair[CALIB_BATCHES], in[CALIB_BATCHES];
    struct ppw_thread *self = ppw_thread_swap_self(t);
    for (int b = -1; b < CALIB_BATCHES; b++) { /* batch -1 warms up */
        uint64_t sum = r->incl_sum, t0 = ppw_now_ns();
        probe_batch();
        uint64_t t1 = ppw_now_ns();
        if (b >= 0) {
            pair[b] = (double)(t1 - t0) / CALIB_BATCH;
            in[b] = (double)(r->incl_sum - sum) / CALIB_BATCH;
        }
    }
    ppw_thread_swap_self(self);
    *inner = median(in, CALIB_BATCHES);
    return median(pair, CALIB_BATCHES);
}

/* The probe windows of the same loop, every event timed: per kind, the
 * median over batches of a batch's mean window (a mean over a few
 * hundred windows of the program's own rate would move with one
 * interrupt). */
static void time_windows(struct ppw_thread *t, struct ppw_rec_calib *c, int throttled)
{
    struct ppw_rec_probe *w = probe_slot(t->measure);
    if (!w)
        return;
    double v[5][CALIB_WINDOW_BATCHES];
    struct ppw_thread *self = ppw_thread_swap_self(t);
    window_every_event = 1;
    for (int b = -1; b < CALIB_WINDOW_BATCHES; b++) {
        struct ppw_rec_probe a = *w;
        probe_batch();
        if (b < 0)
            continue;
#define MEAN(sum, n) ((w->n - a.n) ? (double)(w->sum - a.sum) / (double)(w->n - a.n) : 0)
        uint64_t kept = w->start_count + w->end_count + w->throttled_count -
                        (a.start_count + a.end_count + a.throttled_count);
        v[0][b] = MEAN(start_ns, start_count);
        v[1][b] = MEAN(end_ns, end_count);
        v[2][b] = MEAN(start_tail_ns, start_count) + MEAN(end_head_ns, end_count);
        v[3][b] = MEAN(throttled_ns, throttled_count);
        v[4][b] = kept ? (double)(w->clock_ns - a.clock_ns) / (double)kept : 0;
#undef MEAN
    }
    window_every_event = 0;
    ppw_thread_swap_self(self);
    if (throttled) {
        c->window_throttled_ns = median(v[3], CALIB_WINDOW_BATCHES);
        return;
    }
    c->window_start_ns = median(v[0], CALIB_WINDOW_BATCHES);
    c->window_end_ns = median(v[1], CALIB_WINDOW_BATCHES);
    c->window_inner_ns = median(v[2], CALIB_WINDOW_BATCHES);
    c->window_clock_ns = median(v[4], CALIB_WINDOW_BATCHES);
    c->window_period = PPW_PROBE_WINDOW_PERIOD;
}

static double time_clock(void)
{
    double v[CALIB_BATCHES];
    volatile uint64_t sink = 0;
    for (int b = 0; b < CALIB_BATCHES; b++) {
        uint64_t t0 = ppw_now_ns();
        for (int i = 0; i < CALIB_BATCH; i++)
            sink += ppw_now_ns();
        v[b] = (double)(ppw_now_ns() - t0) / CALIB_BATCH;
    }
    (void)sink;
    return median(v, CALIB_BATCHES);
}

/* Probe costs on a scratch thread state: anonymous profile storage, trace
 * records into a scratch buffer, no throttling, nothing written. */
static int calibrate(struct ppw_rec_calib *c)
{
    c->clock_ns = time_clock();
    if (!(ppw_config.modes & (PPW_MODE_PROFILE | PPW_MODE_TRACE)))
        return 0;
    int rc = -ENOMEM;
    struct ppw_thread *t = map_anon(sizeof *t);
    struct ppw_measure_thread *m = t ? state_new(t, 1) : NULL;
    if (!m || !region_state(m, CALIB_REGION))
        goto out;
    t->measuring = 1;
    t->measure = m;
    cache_put(m, &(struct ppw_region_key){.ptr = calib_sig, .tag = GASP_C_FUNC}, CALIB_REGION);
    double inner, unused;
    c->pair_ns = time_pairs(t, &inner);
    c->inner_ns = inner < c->pair_ns ? inner : c->pair_ns;
    time_windows(t, c, 0);
    throttle(m, &m->regions[CALIB_REGION], CALIB_REGION);
    c->throttled_pair_ns = time_pairs(t, &unused);
    time_windows(t, c, 1);
    c->iterations = (uint64_t)CALIB_BATCH * CALIB_BATCHES;
    rc = 0;
out:
    if (m) {
        prof_close(m, 0);
        state_free(m);
    }
    if (t)
        munmap(t, sizeof *t);
    return rc;
}

/* ---- process --------------------------------------------------------------- */

int ppw_measure_init(void)
{
    static pid_t calibrated_in; /* the process whose calibration calib_rec holds */
    int rc = 0, fork_child = calibrated_in && calibrated_in != getpid();
    config_rec = (struct ppw_rec_config){.modes = ppw_config.modes,
                                         .callpath_depth = callpath_depth(),
                                         .throttle_calls = ppw_config.throttle_calls,
                                         .throttle_ns = ppw_config.throttle_ns,
                                         .throttle_sample = ppw_config.throttle_sample,
                                         .throttle_alloc_calls = ppw_config.throttle_alloc_calls};
    if (!fork_child) { /* a fork()ed child keeps its parent's */
        ppw_regions_init();
        calib_rec = (struct ppw_rec_calib){0};
        /* handler_ns stays 0: each samples file measures its own
         * handler's time (a calibrating walk cost 48 libunwind walks,
         * 0.7 ms of every run, and knew neither signal delivery nor the
         * ring sampler's reading) */
        rc = calibrate(&calib_rec);
        calibrated_in = getpid();
    }
    ppw_runfile_append(PPW_RUN_CONFIG, &config_rec, sizeof config_rec, 0, NULL);
    ppw_runfile_append(PPW_RUN_CALIB, &calib_rec, sizeof calib_rec, 0, NULL);
    if (fork_child) /* the child's run directory must name its regions too */
        ppw_regions_rewrite();
    return rc;
}

void ppw_measure_fini(void)
{
    /* Nothing: threads may still send events until the process is gone,
     * and the registry must outlive them. */
}

void ppw_measure_fork_prepare(void)
{
    ppw_regions_fork_prepare();
}

void ppw_measure_fork_parent(void)
{
    ppw_regions_fork_parent();
}

void ppw_measure_fork_child(void)
{
    ppw_regions_fork_child();
}

/* An OTF2 trace of a traced run or job (export.h), written through the OTF2
 * library (3.x) by one process for every location: a location group per
 * rank (or the run's process), a location per thread; a region per GASP
 * region as ppw-blame names it; Enter/Leave for START/END; MPI messages as
 * MpiSend/MpiRecv (export_trace.h's matching), collectives, and one-sided
 * calls as OTF2's RMA records.  Times are ns on rank 0's clock (the drift
 * model).  What maps to what, and what is left out: docs/ppw-blame.md,
 * "ppw-blame export". */
#define _POSIX_C_SOURCE 200809L
#include <otf2/otf2.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "export_trace.h"
#include "names.h"
#include "read_run.h"
#include "strmap.h"
#include "ppw/gasp.h"
#include "ppw/gasp_events.h"

/* MPI_LOCK_EXCLUSIVE as the trace keeps it: Open MPI's value and MPICH's
 * (their MPI_LOCK_SHARED, 2 and 235, differ from both). */
enum { OPEN_MPI_LOCK_EXCLUSIVE = 1, MPICH_LOCK_EXCLUSIVE = 234 };

/* OTF2 reports errors through a callback, by default on stderr; ppw-blame
 * reports one error line, so the library's text is kept for it. */
static char otf2_detail[256];

static OTF2_ErrorCode keep_otf2_error(void *ud, const char *file, uint64_t line,
                                      const char *function, OTF2_ErrorCode code, const char *fmt,
                                      va_list va)
{
    (void)ud, (void)file, (void)line, (void)function;
    if (fmt)
        vsnprintf(otf2_detail, sizeof otf2_detail, fmt, va);
    return code;
}

/* Pre-flush: write full buffers out; no post-flush callback, so no
 * BufferFlush records (whose "now" would be meaningless here). */
static OTF2_FlushType flush_always(void *ud, OTF2_FileType type, OTF2_LocationRef loc, void *cd,
                                   bool final)
{
    (void)ud, (void)type, (void)loc, (void)cd, (void) final;
    return OTF2_FLUSH;
}
static OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = flush_always};

struct region_def {
    uint32_t name, file, line;
    OTF2_RegionRole role;
    OTF2_Paradigm paradigm;
};

/* A message end the trace walk writes: the event it belongs to, its peer
 * and tag, and its size. */
struct message_record {
    size_t unit, thread, event;
    uint32_t peer;
    uint64_t tag, bytes;
};

/* A window of one rank: the handle its calls name, the global id. */
struct window {
    uint64_t handle;
    uint32_t id;
    bool live;
};

/* An RMA transfer not yet completed, and a lock held, on one thread. */
struct rma_op {
    uint32_t win, target;
    uint64_t id;
};

struct thread_state {
    OTF2_EvtWriter *w;
    uint64_t last; /* timestamps must not decrease on a location */
    struct rma_op *ops, *locks;
    size_t nops, cap_ops, nlocks, cap_locks;
    uint64_t next_op, next_lock;
    uint32_t closing_win; /* the window an MPI_Win_free in progress frees */
    bool shmem_blocking;  /* a blocking SHMEM get or atomic in progress issued ... */
    uint64_t shmem_op;    /* ... this op, which its END completes */
};

struct otf2_export {
    const char *dir, *source; /* the trace written, the run or job read */
    struct export_trace trace;
    OTF2_Archive *archive;
    struct ppw_err *err;
    /* definitions, written last, made while the events are */
    struct ppw_strmap strings;
    const char **string_list;
    size_t nstrings, cap_strings;
    struct ppw_strmap region_index;
    struct region_def *regions;
    size_t nregions, cap_regions;
    uint32_t windows;     /* RmaWin definitions: the most windows one rank created */
    bool mpi;             /* MPI regions: the communicator is defined */
    bool shmem;           /* SHMEM regions: its PEs' communicator and heap window too */
    uint32_t window_base; /* the first MPI window's id: 1 when the heap is window 0 */
    uint64_t **nevents;   /* by unit and thread */
    uint32_t *mpi_thread; /* by unit: the thread index whose location is the rank's */
    uint64_t first, last; /* timestamps written */
    bool any;
    /* per unit while its events are written */
    uint32_t *region_of; /* by run region index; UINT32_MAX: not made yet */
    uint64_t *type_size; /* by run region index: bytes of one element; 0: not known */
    struct window *wins;
    size_t nwins, cap_wins;
    uint32_t created;
    /* matched messages, by (unit, thread, event), and the walk's place in them */
    struct message_record *sends, *recvs;
    size_t nsends, nrecvs, cap_sends, cap_recvs, next_send, next_recv;
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t grown = *cap ? 2 * *cap : 16;
    void *p = realloc(*v, grown * size);
    if (!p)
        return -1;
    *v = p;
    *cap = grown;
    return 0;
}

static int oom(struct otf2_export *x)
{
    return ppw_err_set(x->err, PPW_ENOMEM, "out of memory");
}

static int otf2_failed(struct otf2_export *x, OTF2_ErrorCode code, const char *what)
{
    return ppw_err_set(x->err, PPW_EIO, "cannot write the OTF2 trace %s: %s: %s%s%s", x->dir, what,
                       OTF2_Error_GetDescription(code), *otf2_detail ? ": " : "", otf2_detail);
}

#define CHECK(x, call)                                                                             \
    do {                                                                                           \
        OTF2_ErrorCode code_ = (call);                                                             \
        if (code_ != OTF2_SUCCESS)                                                                 \
            return otf2_failed((x), code_, #call);                                                 \
    } while (0)

/* The id of string s (interned); UINT32_MAX when out of memory. */
static uint32_t string_id(struct otf2_export *x, const char *s)
{
    bool added;
    struct ppw_strmap_entry *e = ppw_strmap_put(&x->strings, s ? s : "", x->nstrings, &added);
    if (!e || (added && grow((void **)&x->string_list, &x->cap_strings, x->nstrings,
                             sizeof *x->string_list)))
        return UINT32_MAX;
    if (added)
        x->string_list[x->nstrings++] = e->key;
    return (uint32_t)e->value;
}

/* ---- regions ---- */

static void mpi_role(uint32_t tag, OTF2_RegionRole *role)
{
    switch (tag) {
    case GASP_MPI_INIT:
    case GASP_MPI_FINALIZE: *role = OTF2_REGION_ROLE_FUNCTION; break;
    case GASP_MPI_BARRIER:
    case GASP_MPI_WIN_FENCE: *role = OTF2_REGION_ROLE_BARRIER; break;
    case GASP_MPI_BCAST:
    case GASP_MPI_SCATTER: *role = OTF2_REGION_ROLE_COLL_ONE2ALL; break;
    case GASP_MPI_REDUCE:
    case GASP_MPI_GATHER: *role = OTF2_REGION_ROLE_COLL_ALL2ONE; break;
    case GASP_MPI_ALLREDUCE:
    case GASP_MPI_ALLGATHER:
    case GASP_MPI_ALLTOALL: *role = OTF2_REGION_ROLE_COLL_ALL2ALL; break;
    case GASP_MPI_WIN_CREATE:
    case GASP_MPI_WIN_ALLOCATE:
    case GASP_MPI_WIN_FREE: *role = OTF2_REGION_ROLE_COLL_OTHER; break;
    default: *role = tag >= GASP_MPI_PUT ? OTF2_REGION_ROLE_RMA : OTF2_REGION_ROLE_POINT2POINT;
    }
}

static void shmem_role(uint32_t tag, OTF2_RegionRole *role)
{
    switch (tag) {
    case GASP_SHMEM_INIT:
    case GASP_SHMEM_FINALIZE: *role = OTF2_REGION_ROLE_FUNCTION; break;
    case GASP_SHMEM_BARRIER:
    case GASP_SHMEM_SYNC: *role = OTF2_REGION_ROLE_BARRIER; break;
    case GASP_SHMEM_BROADCAST: *role = OTF2_REGION_ROLE_COLL_ONE2ALL; break;
    case GASP_SHMEM_COLLECT:
    case GASP_SHMEM_ALLTOALL:
    case GASP_SHMEM_REDUCE: *role = OTF2_REGION_ROLE_COLL_ALL2ALL; break;
    case GASP_SHMEM_MALLOC:
    case GASP_SHMEM_CALLOC: *role = OTF2_REGION_ROLE_ALLOCATE; break;
    case GASP_SHMEM_REALLOC: *role = OTF2_REGION_ROLE_REALLOCATE; break;
    case GASP_SHMEM_FREE: *role = OTF2_REGION_ROLE_DEALLOCATE; break;
    case GASP_SHMEM_SET_LOCK:
    case GASP_SHMEM_TEST_LOCK:
    case GASP_SHMEM_CLEAR_LOCK:
    case GASP_SHMEM_WAIT_UNTIL: *role = OTF2_REGION_ROLE_FUNCTION; break;
    default: *role = OTF2_REGION_ROLE_RMA;
    }
}

/* OTF2's role and paradigm for a GASP region. */
static void region_kind(uint32_t tag, uint32_t op, OTF2_RegionRole *role, OTF2_Paradigm *paradigm)
{
    *role = OTF2_REGION_ROLE_FUNCTION;
    *paradigm = OTF2_PARADIGM_USER;
    if (ppw_gasp_tag_is_mpi(tag)) {
        *paradigm = OTF2_PARADIGM_MPI;
        mpi_role(tag, role);
    } else if (ppw_gasp_tag_is_shmem(tag)) {
        *paradigm = OTF2_PARADIGM_SHMEM;
        shmem_role(tag, role);
    } else if (tag >= GASP_PTHREAD_CREATE && tag <= GASP_PTHREAD_RWLOCK_UNLOCK) {
        *paradigm = OTF2_PARADIGM_PTHREAD;
        *role = tag == GASP_PTHREAD_CREATE         ? OTF2_REGION_ROLE_THREAD_CREATE
                : tag == GASP_PTHREAD_JOIN         ? OTF2_REGION_ROLE_THREAD_WAIT
                : tag == GASP_PTHREAD_BARRIER_WAIT ? OTF2_REGION_ROLE_BARRIER
                                                   : OTF2_REGION_ROLE_FUNCTION;
    } else if (tag >= GASP_OMP_PARALLEL && tag <= GASP_OMP_TASKLOOP) {
        *paradigm = OTF2_PARADIGM_OPENMP;
        *role =
            tag == GASP_OMP_PARALLEL                                  ? OTF2_REGION_ROLE_PARALLEL
            : tag == GASP_OMP_BARRIER                                 ? OTF2_REGION_ROLE_BARRIER
            : tag == GASP_OMP_CRITICAL                                ? OTF2_REGION_ROLE_CRITICAL
            : tag == GASP_OMP_TASK_CREATE || tag == GASP_OMP_TASKLOOP ? OTF2_REGION_ROLE_TASK_CREATE
            : tag == GASP_OMP_TASKWAIT || tag == GASP_OMP_TASKGROUP_END ? OTF2_REGION_ROLE_TASK_WAIT
                                                                        : OTF2_REGION_ROLE_FUNCTION;
    } else if (op == PPW_OP_MEM_ALLOC) {
        *role = tag == GASP_C_REALLOC ? OTF2_REGION_ROLE_REALLOCATE : OTF2_REGION_ROLE_ALLOCATE;
    } else if (op == PPW_OP_MEM_FREE) {
        *role = OTF2_REGION_ROLE_DEALLOCATE;
    } else if (op == PPW_OP_USER_REGION) {
        *role = OTF2_REGION_ROLE_CODE;
    }
}

/* The global region of the run's region g: one per name as ppw-blame
 * shows it, file, line and tag, across ranks.  UINT32_MAX: out of memory. */
static uint32_t region_id(struct otf2_export *x, const struct ppw_run *run,
                          const struct ppw_run_region *g)
{
    size_t k = (size_t)(g - run->regions);
    if (x->region_of[k] != UINT32_MAX)
        return x->region_of[k];
    char shown_buf[512], key[1200];
    const char *shown =
        ppw_names_region(NULL, g->name, g->file, g->line, shown_buf, sizeof shown_buf);
    shown = shown ? shown : "?";
    snprintf(key, sizeof key, "%s\x1f%s\x1f%" PRIu32 "\x1f%" PRIu32, shown, g->file ? g->file : "",
             g->line, g->tag);
    bool added;
    struct ppw_strmap_entry *e = ppw_strmap_put(&x->region_index, key, x->nregions, &added);
    if (!e)
        return UINT32_MAX;
    if (added) {
        if (grow((void **)&x->regions, &x->cap_regions, x->nregions, sizeof *x->regions))
            return UINT32_MAX;
        struct region_def *d = &x->regions[x->nregions++];
        d->name = string_id(x, shown);
        d->file = string_id(x, g->file);
        d->line = g->line;
        if (d->name == UINT32_MAX || d->file == UINT32_MAX)
            return UINT32_MAX;
        region_kind(g->tag, g->op, &d->role, &d->paradigm);
        x->mpi |= d->paradigm == OTF2_PARADIGM_MPI;
    }
    return x->region_of[k] = (uint32_t)e->value;
}

/* ---- bytes: the profile's rule, count x type size ---- */

/* The elements an event moves (ppw/gasp_events.h), and its datatypes
 * (type2: the second pair's, else the first's). */
static bool transfer(uint32_t tag, const struct ppw_run_trace *ev, uint64_t *elements,
                     uint64_t *type, uint64_t *type2)
{
    struct ppw_gasp_moved moved;
    int pairs = ppw_gasp_moved_elements(tag, ev->args, ev->nargs, &moved);
    if (!pairs)
        return false;
    *elements = 0;
    for (int i = 0; i < pairs; i++)
        *elements += (uint64_t)(moved.count[i] > 0 ? moved.count[i] : 0);
    *type = moved.type[0];
    *type2 = pairs > 1 ? moved.type[1] : moved.type[0];
    return true;
}

/* The trace keeps counts and datatype handles, not type sizes; the
 * profile keeps each region's bytes.  Where every traced call of a region
 * used one datatype and the trace holds as many calls as the profile, the
 * type's size is the bytes over the elements; else it is not known (0). */
static int region_type_sizes(struct otf2_export *x, const struct ppw_run *run)
{
    size_t n = run->region_count;
    uint64_t *bytes = calloc(n ? n : 1, sizeof *bytes), *calls = calloc(n ? n : 1, sizeof *calls);
    uint64_t *elements = calloc(n ? n : 1, sizeof *elements),
             *type = calloc(n ? n : 1, sizeof *type);
    uint64_t *starts = calloc(n ? n : 1, sizeof *starts);
    bool *mixed = calloc(n ? n : 1, sizeof *mixed);
    int rc = 0;
    if (!bytes || !calls || !elements || !type || !starts || !mixed) {
        rc = oom(x);
        goto out;
    }
    for (size_t t = 0; t < run->thread_count; t++) {
        const struct ppw_run_thread *th = &run->threads[t];
        for (size_t i = 0; i < th->timer_count; i++) {
            const struct ppw_run_region *g = ppw_run_find_region(run, th->timers[i].path[0]);
            if (g) {
                bytes[g - run->regions] += th->timers[i].bytes;
                calls[g - run->regions] += th->timers[i].count;
            }
        }
        for (size_t i = 0; i < th->trace_count; i++) {
            const struct ppw_run_trace *ev = &th->traces[i];
            size_t k = (size_t)(ev->region - run->regions);
            uint64_t el, ty, ty2;
            if (ev->evttype != GASP_START || !transfer(ev->region->tag, ev, &el, &ty, &ty2))
                continue;
            mixed[k] |= ty != ty2 || (starts[k] && ty != type[k]);
            type[k] = ty;
            elements[k] += el;
            starts[k]++;
        }
    }
    for (size_t k = 0; k < n; k++)
        x->type_size[k] = !mixed[k] && starts[k] && starts[k] == calls[k] && elements[k] &&
                                  bytes[k] % elements[k] == 0
                              ? bytes[k] / elements[k]
                              : 0;
out:
    free(bytes), free(calls), free(elements), free(type), free(starts), free(mixed);
    return rc;
}

static uint64_t bytes_of(const struct otf2_export *x, const struct ppw_run *run,
                         const struct ppw_run_trace *ev, uint64_t count)
{
    int64_t n = (int64_t)count;
    return n > 0 ? (uint64_t)n * x->type_size[ev->region - run->regions] : 0;
}

/* ---- messages ---- */

struct match_ctx {
    struct otf2_export *x;
    int failed;
};

static void keep_message(const struct export_message_end *send,
                         const struct export_message_end *recv, void *ctx)
{
    struct match_ctx *m = ctx;
    struct otf2_export *x = m->x;
    /* both ends carry the size the sender sent (match_messages) */
    if (grow((void **)&x->sends, &x->cap_sends, x->nsends, sizeof *x->sends) ||
        grow((void **)&x->recvs, &x->cap_recvs, x->nrecvs, sizeof *x->recvs)) {
        m->failed = 1;
        return;
    }
    x->sends[x->nsends++] =
        (struct message_record){send->unit, send->thread, send->event, send->peer, send->tag, 0};
    /* the receive's record points back at the send, whose size it takes */
    x->recvs[x->nrecvs++] = (struct message_record){recv->unit, recv->thread, recv->event,
                                                    send->rank, send->tag,    x->nsends - 1};
}

static int record_order(const void *a, const void *b)
{
    const struct message_record *p = a, *q = b;
    if (p->unit != q->unit)
        return p->unit < q->unit ? -1 : 1;
    if (p->thread != q->thread)
        return p->thread < q->thread ? -1 : 1;
    return (p->event > q->event) - (p->event < q->event);
}

/* Every matched message, its ends in walk order, sizes from the senders'
 * type sizes. */
static int match_messages(struct otf2_export *x)
{
    struct export_messages m = {0};
    int rc = 0;
    for (size_t u = 0; u < x->trace.nunits && !rc; u++)
        for (size_t t = 0; t < x->trace.units[u].run->thread_count && !rc; t++)
            if (export_messages_collect(&m, &x->trace, u, &x->trace.units[u].run->threads[t]))
                rc = oom(x);
    struct match_ctx ctx = {x, 0};
    if (!rc)
        export_messages_match(&m, keep_message, &ctx);
    export_messages_free(&m);
    if (rc || ctx.failed)
        return rc ? rc : oom(x);
    /* sizes, unit by unit (type sizes are a unit's own) */
    for (size_t u = 0; u < x->trace.nunits && !rc; u++) {
        const struct ppw_run *run = x->trace.units[u].run;
        if (!(x->type_size =
                  calloc(run->region_count ? run->region_count : 1, sizeof *x->type_size)))
            return oom(x);
        rc = region_type_sizes(x, run);
        for (size_t s = 0; s < x->nsends && !rc; s++) {
            struct message_record *r = &x->sends[s];
            if (r->unit != u)
                continue;
            const struct ppw_run_trace *ev = &run->threads[r->thread].traces[r->event];
            r->bytes = ev->nargs >= 1 ? bytes_of(x, run, ev, ev->args[0]) : 0;
        }
        free(x->type_size);
        x->type_size = NULL;
    }
    for (size_t r = 0; r < x->nrecvs; r++)
        x->recvs[r].bytes = x->sends[x->recvs[r].bytes].bytes;
    if (x->nsends) {
        qsort(x->sends, x->nsends, sizeof *x->sends, record_order);
        qsort(x->recvs, x->nrecvs, sizeof *x->recvs, record_order);
    }
    return rc;
}

/* The matched message end of event (u, t, i), or NULL; the walk visits
 * events in the records' order. */
static const struct message_record *message_at(const struct message_record *v, size_t n,
                                               size_t *next, size_t u, size_t t, size_t i)
{
    struct message_record key = {.unit = u, .thread = t, .event = i};
    while (*next < n && record_order(&v[*next], &key) < 0)
        (*next)++;
    return *next < n && record_order(&v[*next], &key) == 0 ? &v[(*next)++] : NULL;
}

/* ---- one-sided ---- */

static struct window *window_of(struct otf2_export *x, uint64_t handle)
{
    for (size_t k = x->nwins; k-- > 0;)
        if (x->wins[k].live && x->wins[k].handle == handle)
            return &x->wins[k];
    return NULL;
}

/* The window a call names: its handle is the last forwarded operand
 * (END events add the result after it).  OTF2_UNDEFINED_RMA_WIN when the
 * trace did not see the window made. */
static uint32_t window_named(struct otf2_export *x, const struct ppw_run_trace *ev)
{
    size_t at = ev->evttype == GASP_END ? 2 : 1;
    if (ev->nargs < at)
        return OTF2_UNDEFINED_RMA_WIN;
    const struct window *w = window_of(x, ev->args[ev->nargs - at]);
    return w ? w->id : OTF2_UNDEFINED_RMA_WIN;
}

/* A window made (the END of MPI_Win_create or MPI_Win_allocate, which
 * carries the handle at 4): windows are collective, so the k-th a rank
 * makes is the k-th of every rank. */
static uint32_t window_made(struct otf2_export *x, const struct ppw_run_trace *ev)
{
    if (ev->nargs < 6 || ev->args[ev->nargs - 1] != 0 || !ev->args[4])
        return OTF2_UNDEFINED_RMA_WIN;
    if (grow((void **)&x->wins, &x->cap_wins, x->nwins, sizeof *x->wins))
        return UINT32_MAX - 1;
    struct window *old = window_of(x, ev->args[4]);
    if (old)
        old->live = false;
    x->wins[x->nwins++] = (struct window){ev->args[4], x->created + x->window_base, true};
    if (++x->created > x->windows)
        x->windows = x->created;
    return x->created - 1 + x->window_base;
}

static int push_op(struct rma_op **v, size_t *n, size_t *cap, struct rma_op op)
{
    if (grow((void **)v, cap, *n, sizeof **v))
        return -1;
    (*v)[(*n)++] = op;
    return 0;
}

/* Settles what the thread holds on win (on target only, unless
 * UINT32_MAX): completes the transfers it issued since the last
 * completion, or (locks) releases its locks. */
static int settle(struct otf2_export *x, struct thread_state *s, uint64_t ts, uint32_t win,
                  uint32_t target, bool locks)
{
    struct rma_op *v = locks ? s->locks : s->ops;
    size_t *n = locks ? &s->nlocks : &s->nops, kept = 0;
    for (size_t k = 0; k < *n; k++) {
        if (v[k].win != win || (target != UINT32_MAX && v[k].target != target))
            v[kept++] = v[k];
        else if (locks)
            CHECK(x, OTF2_EvtWriter_RmaReleaseLock(s->w, NULL, ts, win, v[k].target, v[k].id));
        else
            CHECK(x, OTF2_EvtWriter_RmaOpCompleteBlocking(s->w, NULL, ts, win, v[k].id));
    }
    *n = kept;
    return 0;
}

static int request_lock(struct otf2_export *x, struct thread_state *s, uint64_t ts, uint32_t win,
                        uint32_t target, OTF2_LockType type)
{
    uint64_t id = s->next_lock++;
    CHECK(x, OTF2_EvtWriter_RmaRequestLock(s->w, NULL, ts, win, target, id, type));
    return push_op(&s->locks, &s->nlocks, &s->cap_locks, (struct rma_op){win, target, id}) ? oom(x)
                                                                                           : 0;
}

/* The records of a one-sided call's START: a transfer (put, get, atomic)
 * or the beginning of a collective window call. */
static int rma_start(struct otf2_export *x, const struct ppw_run *run, struct thread_state *s,
                     const struct ppw_run_trace *ev, uint64_t ts)
{
    uint32_t tag = ev->region->tag;
    const uint64_t *a = ev->args;
    /* A fence or free of a window the trace never saw made (or freed
     * already) has no OTF2 window: it stays a plain region, so that no
     * record names an undefined window. */
    if (tag == GASP_MPI_WIN_CREATE || tag == GASP_MPI_WIN_ALLOCATE ||
        (tag == GASP_MPI_WIN_FENCE && window_named(x, ev) != OTF2_UNDEFINED_RMA_WIN))
        CHECK(x, OTF2_EvtWriter_RmaCollectiveBegin(s->w, NULL, ts));
    if (tag == GASP_MPI_WIN_FREE) {
        struct window *w = ev->nargs >= 1 ? window_of(x, a[0]) : NULL;
        s->closing_win = w && w->live ? w->id : OTF2_UNDEFINED_RMA_WIN;
        if (w && w->live) {
            w->live = false;
            CHECK(x, OTF2_EvtWriter_RmaCollectiveBegin(s->w, NULL, ts));
        }
        return 0;
    }
    uint64_t el, type, type2;
    uint32_t win = window_named(x, ev);
    if (win == OTF2_UNDEFINED_RMA_WIN || !transfer(tag, ev, &el, &type, &type2))
        return 0;
    /* every START operand this reads (ppw/gasp_events.h): a short record
     * of a damaged trace is left out */
    bool accumulate = tag == GASP_MPI_GET_ACCUMULATE || tag == GASP_MPI_RGET_ACCUMULATE;
    bool element = tag == GASP_MPI_FETCH_AND_OP || tag == GASP_MPI_COMPARE_AND_SWAP;
    if (ev->nargs < (accumulate ? 7u : element ? 4u : 5u))
        return 0;
    uint64_t id = s->next_op++;
    switch (tag) {
    case GASP_MPI_PUT:
    case GASP_MPI_RPUT:
    case GASP_MPI_ACCUMULATE:
    case GASP_MPI_RACCUMULATE: /* ocount otype rank disp win */
        CHECK(x, OTF2_EvtWriter_RmaPut(s->w, NULL, ts, win, (uint32_t)a[2],
                                       bytes_of(x, run, ev, a[0]), id));
        break;
    case GASP_MPI_GET:
    case GASP_MPI_RGET:
        CHECK(x, OTF2_EvtWriter_RmaGet(s->w, NULL, ts, win, (uint32_t)a[2],
                                       bytes_of(x, run, ev, a[0]), id));
        break;
    case GASP_MPI_GET_ACCUMULATE:
    case GASP_MPI_RGET_ACCUMULATE: /* ocount otype rcount rtype rank disp win */
        CHECK(x, OTF2_EvtWriter_RmaAtomic(
                     s->w, NULL, ts, win, (uint32_t)a[4], OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE,
                     bytes_of(x, run, ev, a[0]), bytes_of(x, run, ev, a[2]), id));
        break;
    default: /* MPI_Fetch_and_op, MPI_Compare_and_swap: type rank disp win */
        CHECK(x, OTF2_EvtWriter_RmaAtomic(s->w, NULL, ts, win, (uint32_t)a[1],
                                          tag == GASP_MPI_COMPARE_AND_SWAP
                                              ? OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP
                                              : OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE,
                                          bytes_of(x, run, ev, 1), bytes_of(x, run, ev, 1), id));
    }
    uint32_t target = (uint32_t)a[accumulate ? 4 : element ? 1 : 2];
    return push_op(&s->ops, &s->nops, &s->cap_ops, (struct rma_op){win, target, id}) ? oom(x) : 0;
}

/* The records of a one-sided call's END: windows made and freed, the end
 * of collective calls, locks, and the completion of transfers. */
static int rma_end(struct otf2_export *x, struct thread_state *s, const struct ppw_run_trace *ev,
                   uint64_t ts)
{
    uint32_t tag = ev->region->tag, win, all = UINT32_MAX;
    const uint64_t *a = ev->args;
    int rc = 0;
    switch (tag) {
    case GASP_MPI_WIN_CREATE:
    case GASP_MPI_WIN_ALLOCATE:
        if ((win = window_made(x, ev)) == UINT32_MAX - 1)
            return oom(x);
        if (win != OTF2_UNDEFINED_RMA_WIN)
            CHECK(x, OTF2_EvtWriter_RmaWinCreate(s->w, NULL, ts, win));
        CHECK(x, OTF2_EvtWriter_RmaCollectiveEnd(s->w, NULL, ts, OTF2_COLLECTIVE_OP_CREATE_HANDLE,
                                                 OTF2_RMA_SYNC_LEVEL_NONE, win,
                                                 OTF2_COLLECTIVE_ROOT_NONE, 0, 0));
        return 0;
    case GASP_MPI_WIN_FREE:
        win = s->closing_win;
        if (win == OTF2_UNDEFINED_RMA_WIN)
            return 0; /* no Begin either (rma_start) */
        /* MPI wants the window's epochs closed before: nothing left, normally */
        if ((rc = settle(x, s, ts, win, all, false)) || (rc = settle(x, s, ts, win, all, true)))
            return rc;
        CHECK(x, OTF2_EvtWriter_RmaWinDestroy(s->w, NULL, ts, win));
        CHECK(x, OTF2_EvtWriter_RmaCollectiveEnd(s->w, NULL, ts, OTF2_COLLECTIVE_OP_DESTROY_HANDLE,
                                                 OTF2_RMA_SYNC_LEVEL_NONE, win,
                                                 OTF2_COLLECTIVE_ROOT_NONE, 0, 0));
        return 0;
    case GASP_MPI_WIN_FENCE: /* OTF2 has no fence: a barrier that syncs memory too */
        win = window_named(x, ev);
        if (win == OTF2_UNDEFINED_RMA_WIN)
            return 0; /* no Begin either (rma_start) */
        if ((rc = settle(x, s, ts, win, all, false)))
            return rc;
        CHECK(x, OTF2_EvtWriter_RmaCollectiveEnd(s->w, NULL, ts, OTF2_COLLECTIVE_OP_BARRIER,
                                                 OTF2_RMA_SYNC_LEVEL_PROCESS |
                                                     OTF2_RMA_SYNC_LEVEL_MEMORY,
                                                 win, OTF2_COLLECTIVE_ROOT_NONE, 0, 0));
        return 0;
    default: break;
    }
    if ((win = window_named(x, ev)) == OTF2_UNDEFINED_RMA_WIN || ev->nargs < 2 ||
        ev->args[ev->nargs - 1] != 0)
        return 0; /* an unknown window, or the call failed */
    switch (tag) {
    case GASP_MPI_WIN_LOCK: /* lock_type rank win */
        return request_lock(x, s, ts, win, (uint32_t)a[1],
                            a[0] == OPEN_MPI_LOCK_EXCLUSIVE || a[0] == MPICH_LOCK_EXCLUSIVE
                                ? OTF2_LOCK_EXCLUSIVE
                                : OTF2_LOCK_SHARED);
    case GASP_MPI_WIN_LOCK_ALL: { /* a shared lock on every rank */
        uint32_t size = x->trace.job ? x->trace.job_size : 1;
        for (uint32_t r = 0; r < size && !rc; r++)
            rc = request_lock(x, s, ts, win, r, OTF2_LOCK_SHARED);
        return rc;
    }
    case GASP_MPI_WIN_UNLOCK: /* rank win */
        if ((rc = settle(x, s, ts, win, (uint32_t)a[0], false)))
            return rc;
        return settle(x, s, ts, win, (uint32_t)a[0], true);
    case GASP_MPI_WIN_UNLOCK_ALL:
        if ((rc = settle(x, s, ts, win, all, false)))
            return rc;
        return settle(x, s, ts, win, all, true);
    case GASP_MPI_WIN_FLUSH: return settle(x, s, ts, win, (uint32_t)a[0], false);
    case GASP_MPI_WIN_FLUSH_ALL:
    case GASP_MPI_WIN_COMPLETE: return settle(x, s, ts, win, all, false);
    default: return 0;
    }
}

/* ---- OpenSHMEM ---- */

/* The symmetric heap is one window over all PEs (OTF2 has no SHMEM
 * records of its own): puts, gets and atomics are RMA operations on it,
 * blocking gets and atomics complete when they return, puts at the next
 * quiet or barrier (a barrier implies a quiet; shmem_sync does not).
 * shmem_ctx_quiet is taken for a quiet of every context. */
#define SHMEM_HEAP_WINDOW 0u

static int shmem_start(struct otf2_export *x, struct thread_state *s, const struct ppw_run_trace *ev,
                       uint64_t ts)
{
    uint32_t tag = ev->region->tag, win = SHMEM_HEAP_WINDOW;
    const uint64_t *a = ev->args;
    s->shmem_blocking = false;
    if (tag == GASP_SHMEM_BARRIER || tag == GASP_SHMEM_SYNC) {
        CHECK(x, OTF2_EvtWriter_RmaCollectiveBegin(s->w, NULL, ts));
        return 0;
    }
    /* the START operands (ppw/gasp_events.h): addr nelems pe size, or
     * addr pe size; a short record of a damaged trace is left out */
    bool counted = tag == GASP_SHMEM_PUT || tag == GASP_SHMEM_PUT_NBI || tag == GASP_SHMEM_GET ||
                   tag == GASP_SHMEM_GET_NBI;
    bool single = tag == GASP_SHMEM_P || tag == GASP_SHMEM_G || tag == GASP_SHMEM_ATOMIC;
    if ((!counted && !single) || ev->nargs < (counted ? 4u : 3u))
        return 0;
    uint64_t pe = a[counted ? 2 : 1], bytes = ppw_gasp_shmem_bytes(tag, a, ev->nargs);
    uint64_t pes = x->trace.job ? x->trace.nunits : 1; /* the communicator's members */
    if (pe >= pes)
        return 0;
    uint64_t id = s->next_op++;
    s->shmem_blocking = tag == GASP_SHMEM_GET || tag == GASP_SHMEM_G || tag == GASP_SHMEM_ATOMIC;
    s->shmem_op = id;
    if (tag == GASP_SHMEM_PUT || tag == GASP_SHMEM_PUT_NBI || tag == GASP_SHMEM_P)
        CHECK(x, OTF2_EvtWriter_RmaPut(s->w, NULL, ts, win, (uint32_t)pe, bytes, id));
    else if (tag == GASP_SHMEM_ATOMIC)
        CHECK(x, OTF2_EvtWriter_RmaAtomic(s->w, NULL, ts, win, (uint32_t)pe,
                                          OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE, bytes, bytes,
                                          id));
    else
        CHECK(x, OTF2_EvtWriter_RmaGet(s->w, NULL, ts, win, (uint32_t)pe, bytes, id));
    return push_op(&s->ops, &s->nops, &s->cap_ops, (struct rma_op){win, (uint32_t)pe, id}) ? oom(x)
                                                                                             : 0;
}

static int shmem_end(struct otf2_export *x, struct thread_state *s, const struct ppw_run_trace *ev,
                     uint64_t ts)
{
    uint32_t tag = ev->region->tag, win = SHMEM_HEAP_WINDOW;
    switch (tag) {
    case GASP_SHMEM_GET: /* blocking: the data is there when it returns */
    case GASP_SHMEM_G:
    case GASP_SHMEM_ATOMIC:
        /* the op its START pushed, last: calls do not nest on a thread
         * (none when the START's record was short or named no member) */
        if (s->shmem_blocking && s->nops && s->ops[s->nops - 1].id == s->shmem_op) {
            s->nops--;
            CHECK(x, OTF2_EvtWriter_RmaOpCompleteBlocking(s->w, NULL, ts, win, s->shmem_op));
        }
        s->shmem_blocking = false;
        return 0;
    case GASP_SHMEM_QUIET: return settle(x, s, ts, win, UINT32_MAX, false);
    case GASP_SHMEM_BARRIER: {
        int rc = settle(x, s, ts, win, UINT32_MAX, false);
        if (!rc)
            CHECK(x, OTF2_EvtWriter_RmaCollectiveEnd(
                         s->w, NULL, ts, OTF2_COLLECTIVE_OP_BARRIER,
                         OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY, win,
                         OTF2_COLLECTIVE_ROOT_NONE, 0, 0));
        return rc;
    }
    case GASP_SHMEM_SYNC: /* the PEs meet; their transfers need not be complete */
        CHECK(x, OTF2_EvtWriter_RmaCollectiveEnd(s->w, NULL, ts, OTF2_COLLECTIVE_OP_BARRIER,
                                                 OTF2_RMA_SYNC_LEVEL_PROCESS, win,
                                                 OTF2_COLLECTIVE_ROOT_NONE, 0, 0));
        return 0;
    default: return 0;
    }
}

/* ---- MPI collectives ---- */

static bool collective(uint32_t tag, OTF2_CollectiveOp *op)
{
    switch (tag) {
    case GASP_MPI_BARRIER: *op = OTF2_COLLECTIVE_OP_BARRIER; return true;
    case GASP_MPI_BCAST: *op = OTF2_COLLECTIVE_OP_BCAST; return true;
    case GASP_MPI_REDUCE: *op = OTF2_COLLECTIVE_OP_REDUCE; return true;
    case GASP_MPI_ALLREDUCE: *op = OTF2_COLLECTIVE_OP_ALLREDUCE; return true;
    case GASP_MPI_GATHER: *op = OTF2_COLLECTIVE_OP_GATHER; return true;
    case GASP_MPI_ALLGATHER: *op = OTF2_COLLECTIVE_OP_ALLGATHER; return true;
    case GASP_MPI_SCATTER: *op = OTF2_COLLECTIVE_OP_SCATTER; return true;
    case GASP_MPI_ALLTOALL: *op = OTF2_COLLECTIVE_OP_ALLTOALL; return true;
    default: return false;
    }
}

static int collective_end(struct otf2_export *x, const struct ppw_run *run, struct thread_state *s,
                          const struct ppw_run_trace *ev, uint64_t ts, OTF2_CollectiveOp op)
{
    uint32_t tag = ev->region->tag, root = OTF2_COLLECTIVE_ROOT_NONE;
    /* (count, type, root, comm) for those with a root */
    if ((tag == GASP_MPI_BCAST || tag == GASP_MPI_REDUCE || tag == GASP_MPI_GATHER ||
         tag == GASP_MPI_SCATTER) &&
        ev->nargs >= 3)
        root = (uint32_t)ev->args[2];
    uint64_t sent =
        tag != GASP_MPI_BARRIER && ev->nargs >= 2 ? bytes_of(x, run, ev, ev->args[0]) : 0;
    CHECK(x, OTF2_EvtWriter_MpiCollectiveEnd(s->w, NULL, ts, op, 0, root, sent, 0));
    return 0;
}

/* ---- the walk ---- */

static uint64_t location_id(size_t unit, uint32_t thread)
{
    return (uint64_t)thread << 32 | unit;
}

static int write_thread(struct otf2_export *x, size_t u, size_t t)
{
    const struct ppw_run *run = x->trace.units[u].run;
    const struct ppw_run_thread *th = &run->threads[t];
    struct thread_state s = {.closing_win = OTF2_UNDEFINED_RMA_WIN};
    s.w = OTF2_Archive_GetEvtWriter(x->archive, location_id(u, th->index));
    if (!s.w)
        return otf2_failed(x, OTF2_ERROR_MEM_ALLOC_FAILED, "OTF2_Archive_GetEvtWriter");
    int rc = 0;
    for (size_t i = 0; i < th->trace_count && !rc; i++) {
        const struct ppw_run_trace *ev = &th->traces[i];
        if (ev->evttype != GASP_START && ev->evttype != GASP_END)
            continue; /* ATOMIC events: not exported */
        uint64_t ts = ppw_run_master_ns(run, ev->time_ns);
        ts = ts < s.last ? s.last : ts; /* (the drift model keeps order; rounding might not) */
        s.last = ts;
        if (!x->any || ts < x->first)
            x->first = ts;
        x->last = ts > x->last ? ts : x->last;
        x->any = true;
        uint32_t region = region_id(x, run, ev->region), tag = ev->region->tag;
        if (region == UINT32_MAX) {
            rc = oom(x);
            break;
        }
        bool rma = tag >= GASP_MPI_PUT && tag <= GASP_MPI_LAST;
        bool shmem = x->shmem && ppw_gasp_tag_is_shmem(tag);
        OTF2_CollectiveOp op;
        const struct message_record *m;
        if (ev->evttype == GASP_START) {
            CHECK(x, OTF2_EvtWriter_Enter(s.w, NULL, ts, region));
            if ((m = message_at(x->sends, x->nsends, &x->next_send, u, t, i)))
                CHECK(x, OTF2_EvtWriter_MpiSend(s.w, NULL, ts, m->peer, 0, (uint32_t)m->tag,
                                                m->bytes));
            if (collective(tag, &op))
                CHECK(x, OTF2_EvtWriter_MpiCollectiveBegin(s.w, NULL, ts));
            if (rma)
                rc = rma_start(x, run, &s, ev, ts);
            if (shmem && !rc)
                rc = shmem_start(x, &s, ev, ts);
        } else {
            if ((m = message_at(x->recvs, x->nrecvs, &x->next_recv, u, t, i)))
                CHECK(x, OTF2_EvtWriter_MpiRecv(s.w, NULL, ts, m->peer, 0, (uint32_t)m->tag,
                                                m->bytes));
            if (collective(tag, &op))
                rc = collective_end(x, run, &s, ev, ts, op);
            if (rma && !rc)
                rc = rma_end(x, &s, ev, ts);
            if (shmem && !rc)
                rc = shmem_end(x, &s, ev, ts);
            if (!rc)
                CHECK(x, OTF2_EvtWriter_Leave(s.w, NULL, ts, region));
        }
    }
    free(s.ops);
    free(s.locks);
    if (!rc)
        CHECK(x, OTF2_EvtWriter_GetNumberOfEvents(s.w, &x->nevents[u][t]));
    OTF2_ErrorCode closed = OTF2_Archive_CloseEvtWriter(x->archive, s.w);
    if (!rc && closed != OTF2_SUCCESS)
        return otf2_failed(x, closed, "OTF2_Archive_CloseEvtWriter");
    return rc;
}

static int write_events(struct otf2_export *x)
{
    int rc = 0;
    /* SHMEM's heap is window 0, known before any event names it */
    for (size_t u = 0; u < x->trace.nunits && !x->shmem; u++) {
        const struct ppw_run *run = x->trace.units[u].run;
        for (size_t r = 0; r < run->region_count && !x->shmem; r++)
            x->shmem = ppw_gasp_tag_is_shmem(run->regions[r].tag);
    }
    x->window_base = x->shmem ? 1 : 0;
    CHECK(x, OTF2_Archive_OpenEvtFiles(x->archive));
    for (size_t u = 0; u < x->trace.nunits && !rc; u++) {
        const struct ppw_run *run = x->trace.units[u].run;
        size_t n = run->region_count ? run->region_count : 1;
        x->nevents[u] = calloc(run->thread_count ? run->thread_count : 1, sizeof **x->nevents);
        x->region_of = malloc(n * sizeof *x->region_of);
        x->type_size = calloc(n, sizeof *x->type_size);
        if (!x->nevents[u] || !x->region_of || !x->type_size)
            rc = oom(x);
        else
            rc = region_type_sizes(x, run);
        for (size_t k = 0; k < n && x->region_of; k++)
            x->region_of[k] = UINT32_MAX;
        x->nwins = x->created = 0;
        for (size_t t = 0; t < run->thread_count && !rc; t++)
            rc = write_thread(x, u, t);
        /* the rank's location: its first thread with MPI or SHMEM events */
        x->mpi_thread[u] = run->thread_count ? run->threads[0].index : 0;
        for (size_t t = run->thread_count; t-- > 0;)
            for (size_t i = 0; i < run->threads[t].trace_count; i++)
                if (ppw_gasp_tag_is_mpi(run->threads[t].traces[i].region->tag) ||
                    ppw_gasp_tag_is_shmem(run->threads[t].traces[i].region->tag)) {
                    x->mpi_thread[u] = run->threads[t].index;
                    break;
                }
        free(x->region_of);
        free(x->type_size);
        x->region_of = NULL;
        x->type_size = NULL;
    }
    if (!rc)
        CHECK(x, OTF2_Archive_CloseEvtFiles(x->archive));
    return rc;
}

/* Every location gets a local definition file, empty: the events use the
 * global ids. */
static int write_local_defs(struct otf2_export *x)
{
    CHECK(x, OTF2_Archive_OpenDefFiles(x->archive));
    for (size_t u = 0; u < x->trace.nunits; u++) {
        const struct ppw_run *run = x->trace.units[u].run;
        for (size_t t = 0; t < run->thread_count; t++) {
            OTF2_DefWriter *d =
                OTF2_Archive_GetDefWriter(x->archive, location_id(u, run->threads[t].index));
            if (!d)
                return otf2_failed(x, OTF2_ERROR_MEM_ALLOC_FAILED, "OTF2_Archive_GetDefWriter");
            CHECK(x, OTF2_Archive_CloseDefWriter(x->archive, d));
        }
    }
    CHECK(x, OTF2_Archive_CloseDefFiles(x->archive));
    return 0;
}

static const char *unit_host(const struct ppw_run *run)
{
    return run->has_mpi && run->mpi.host     ? run->mpi.host
           : run->has_info && run->info.host ? run->info.host
                                             : "unknown host";
}

/* Rank 0's (or the run's) wall-clock time at master-clock time t. */
static uint64_t realtime_of(const struct export_trace *trace, uint64_t t)
{
    const struct ppw_run *run = trace->units[0].run;
    if (!run->has_info || (trace->job && trace->units[0].pid != 0))
        return OTF2_UNDEFINED_TIMESTAMP;
    return run->info.start_real_ns + t - run->info.start_mono_ns;
}

/* The strings the global definitions name, interned before they are
 * written (definitions may only name strings written before them). */
struct def_names {
    uint32_t empty, machine, node, world, mpi, omp, pthread, job, shmem, pes, heap;
    uint32_t *group, *host_node, *host_name; /* by unit, by unit, by node */
    uint32_t *thread, *window;               /* by thread index, by window */
    size_t nhosts;
};

static void def_names_free(struct def_names *d)
{
    free(d->group), free(d->host_node), free(d->host_name), free(d->thread), free(d->window);
}

static int intern_def_names(struct otf2_export *x, struct def_names *d)
{
    size_t n = x->trace.nunits;
    uint32_t threads = 0;
    for (size_t u = 0; u < n; u++) {
        const struct ppw_run *run = x->trace.units[u].run;
        for (size_t t = 0; t < run->thread_count; t++)
            threads = run->threads[t].index >= threads ? run->threads[t].index + 1 : threads;
    }
    d->group = calloc(n, sizeof *d->group);
    d->host_node = calloc(n, sizeof *d->host_node);
    d->host_name = calloc(n + 1, sizeof *d->host_name);
    d->thread = calloc(threads ? threads : 1, sizeof *d->thread);
    d->window = calloc(x->windows ? x->windows : 1, sizeof *d->window);
    if (!d->group || !d->host_node || !d->host_name || !d->thread || !d->window)
        return oom(x);
    uint32_t failed = 0; /* UINT32_MAX when any string_id was */
    failed |= (d->empty = string_id(x, "")) == UINT32_MAX;
    failed |= (d->machine = string_id(x, "machine")) == UINT32_MAX;
    failed |= (d->node = string_id(x, "node")) == UINT32_MAX;
    failed |= (d->world = string_id(x, "MPI_COMM_WORLD")) == UINT32_MAX;
    failed |= (d->mpi = string_id(x, "MPI")) == UINT32_MAX;
    failed |= (d->omp = string_id(x, "OpenMP")) == UINT32_MAX;
    failed |= (d->pthread = string_id(x, "Pthreads")) == UINT32_MAX;
    failed |= (d->shmem = string_id(x, "SHMEM")) == UINT32_MAX;
    failed |= (d->pes = string_id(x, "SHMEM PEs")) == UINT32_MAX;
    failed |= (d->heap = string_id(x, "symmetric heap")) == UINT32_MAX;
    failed |= (d->job = string_id(x, x->source)) == UINT32_MAX;
    struct ppw_strmap hosts = {0}; /* host -> its node, 1.. (node 0 is the job) */
    char name[64];
    for (size_t u = 0; u < n && !failed; u++) {
        const struct ppw_run *run = x->trace.units[u].run;
        if (x->trace.job)
            snprintf(name, sizeof name, "%s %" PRIu32, x->shmem && !x->mpi ? "PE" : "MPI Rank",
                     x->trace.units[u].pid);
        else
            snprintf(name, sizeof name, "Process %" PRIu32, run->pid);
        failed |= (d->group[u] = string_id(x, name)) == UINT32_MAX;
        bool added;
        struct ppw_strmap_entry *e = ppw_strmap_put(&hosts, unit_host(run), d->nhosts + 1, &added);
        if (!e)
            break;
        if (added)
            failed |= (d->host_name[++d->nhosts] = string_id(x, unit_host(run))) == UINT32_MAX;
        d->host_node[u] = (uint32_t)e->value;
    }
    bool mapped = hosts.count == d->nhosts;
    ppw_strmap_free(&hosts);
    for (uint32_t k = 0; k < threads && !failed; k++) {
        snprintf(name, sizeof name, "Thread %" PRIu32, k);
        failed |= (d->thread[k] = string_id(x, name)) == UINT32_MAX;
    }
    for (uint32_t k = 0; k < x->windows && !failed; k++) {
        snprintf(name, sizeof name, "MPI_Win %" PRIu32, k);
        failed |= (d->window[k] = string_id(x, name)) == UINT32_MAX;
    }
    return failed || !mapped ? oom(x) : 0;
}

/* A paradigm's world: the group of each rank's (PE's) location, the group
 * of their indices, and the communicator over it.  Rank r is the r-th
 * member: a job's units are its ranks 0..n-1. */
static int write_world(struct otf2_export *x, OTF2_GlobalDefWriter *g, const struct def_names *d,
                       OTF2_Paradigm paradigm, uint32_t first_group, uint32_t comm, uint32_t name)
{
    size_t n = x->trace.nunits;
    uint64_t *members = calloc(n ? n : 1, sizeof *members);
    if (!members)
        return oom(x);
    for (size_t u = 0; u < n; u++)
        members[u] = location_id(u, x->mpi_thread[u]);
    OTF2_ErrorCode code = OTF2_GlobalDefWriter_WriteGroup(
        g, first_group, d->empty, OTF2_GROUP_TYPE_COMM_LOCATIONS, paradigm, OTF2_GROUP_FLAG_NONE,
        (uint32_t)n, members);
    for (size_t u = 0; u < n; u++)
        members[u] = u;
    if (code == OTF2_SUCCESS)
        code = OTF2_GlobalDefWriter_WriteGroup(g, first_group + 1, d->empty,
                                               OTF2_GROUP_TYPE_COMM_GROUP, paradigm,
                                               OTF2_GROUP_FLAG_NONE, (uint32_t)n, members);
    free(members);
    CHECK(x, code);
    CHECK(x, OTF2_GlobalDefWriter_WriteComm(g, comm, name, first_group + 1, OTF2_UNDEFINED_COMM,
                                            OTF2_COMM_FLAG_NONE));
    return 0;
}

/* Clock, strings, paradigms, regions, the system tree, location groups,
 * locations, then MPI_COMM_WORLD (its locations, its group, the
 * communicator) and the windows: each defined after what it names. */
static int write_defs(struct otf2_export *x, OTF2_GlobalDefWriter *g, const struct def_names *d)
{
    size_t n = x->trace.nunits;
    CHECK(x, OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, x->first,
                                                       x->last - x->first + 1,
                                                       realtime_of(&x->trace, x->first)));
    for (size_t k = 0; k < x->nstrings; k++)
        CHECK(x, OTF2_GlobalDefWriter_WriteString(g, (uint32_t)k, x->string_list[k]));
    bool mpi = false, omp = false, pthread = false;
    for (size_t k = 0; k < x->nregions; k++) {
        mpi |= x->regions[k].paradigm == OTF2_PARADIGM_MPI;
        omp |= x->regions[k].paradigm == OTF2_PARADIGM_OPENMP;
        pthread |= x->regions[k].paradigm == OTF2_PARADIGM_PTHREAD;
    }
    if (mpi)
        CHECK(x, OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, d->mpi,
                                                    OTF2_PARADIGM_CLASS_PROCESS));
    if (omp)
        CHECK(x, OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_OPENMP, d->omp,
                                                    OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN));
    if (pthread)
        CHECK(x, OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_PTHREAD, d->pthread,
                                                    OTF2_PARADIGM_CLASS_THREAD_CREATE_WAIT));
    if (x->shmem)
        CHECK(x, OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_SHMEM, d->shmem,
                                                    OTF2_PARADIGM_CLASS_PROCESS));
    for (size_t k = 0; k < x->nregions; k++) {
        const struct region_def *r = &x->regions[k];
        CHECK(x, OTF2_GlobalDefWriter_WriteRegion(g, (uint32_t)k, r->name, r->name, d->empty,
                                                  r->role, r->paradigm, OTF2_REGION_FLAG_NONE,
                                                  r->file, r->line, r->line));
    }
    CHECK(x, OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, d->job, d->machine,
                                                      OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    for (size_t k = 1; k <= d->nhosts; k++)
        CHECK(x, OTF2_GlobalDefWriter_WriteSystemTreeNode(g, (uint32_t)k, d->host_name[k], d->node,
                                                          0));
    for (size_t u = 0; u < n; u++)
        CHECK(x, OTF2_GlobalDefWriter_WriteLocationGroup(
                     g, (uint32_t)u, d->group[u], OTF2_LOCATION_GROUP_TYPE_PROCESS, d->host_node[u],
                     OTF2_UNDEFINED_LOCATION_GROUP));
    for (size_t u = 0; u < n; u++) {
        const struct ppw_run *run = x->trace.units[u].run;
        for (size_t t = 0; t < run->thread_count; t++)
            CHECK(x, OTF2_GlobalDefWriter_WriteLocation(
                         g, location_id(u, run->threads[t].index), d->thread[run->threads[t].index],
                         OTF2_LOCATION_TYPE_CPU_THREAD, x->nevents[u][t], (uint32_t)u));
    }
    int rc = 0;
    if (x->mpi && (rc = write_world(x, g, d, OTF2_PARADIGM_MPI, 0, 0, d->world)))
        return rc;
    for (uint32_t k = 0; k < x->windows; k++)
        CHECK(x, OTF2_GlobalDefWriter_WriteRmaWin(g, k + x->window_base, d->window[k], 0,
                                                  OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS));
    if (!x->shmem)
        return 0;
    /* the PEs: groups 2 and 3 and communicator 1 beside MPI's */
    uint32_t comm = x->mpi ? 1 : 0;
    if ((rc = write_world(x, g, d, OTF2_PARADIGM_SHMEM, 2 * comm, comm, d->pes)))
        return rc;
    CHECK(x, OTF2_GlobalDefWriter_WriteRmaWin(g, SHMEM_HEAP_WINDOW, d->heap, comm,
                                              OTF2_RMA_WIN_FLAG_NONE));
    return 0;
}

static int write_global_defs(struct otf2_export *x)
{
    struct def_names d = {0};
    int rc = intern_def_names(x, &d);
    OTF2_GlobalDefWriter *g = rc ? NULL : OTF2_Archive_GetGlobalDefWriter(x->archive);
    if (!rc && !g)
        rc = otf2_failed(x, OTF2_ERROR_MEM_ALLOC_FAILED, "OTF2_Archive_GetGlobalDefWriter");
    if (!rc)
        rc = write_defs(x, g, &d);
    if (!rc)
        CHECK(x, OTF2_Archive_CloseGlobalDefWriter(x->archive, g));
    def_names_free(&d);
    return rc;
}

/* ---- the archive ---- */

/* Removes what a failed export wrote: DIR/traces/ and its files, the
 * anchor and definition files, and DIR when the export made it. */
static void remove_partial(const char *dir, bool made_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/traces", dir);
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char file[4096 + 256];
            snprintf(file, sizeof file, "%s/%s", path, e->d_name);
            unlink(file);
        }
        closedir(d);
        rmdir(path);
    }
    snprintf(path, sizeof path, "%s/traces.otf2", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/traces.def", dir);
    unlink(path);
    if (made_dir)
        rmdir(dir);
}

/* DIR must be a writable directory (made when absent, its parent must
 * exist) without a traces/ in it: OTF2 writes no trace over another. */
static int check_output(const char *dir, bool *made, struct ppw_err *err)
{
    struct stat st;
    char traces[4096];
    *made = false;
    if (snprintf(traces, sizeof traces, "%s/traces", dir) >= (int)sizeof traces)
        return ppw_err_set(err, PPW_EUSAGE, "export: the directory name is too long");
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT || mkdir(dir, 0777) != 0)
            return ppw_err_set(err, PPW_EIO, "cannot write %s: %s", dir, strerror(errno));
        *made = true;
    } else if (!S_ISDIR(st.st_mode)) {
        return ppw_err_set(err, PPW_EIO, "cannot write %s: not a directory", dir);
    } else if (access(dir, W_OK | X_OK) != 0) {
        return ppw_err_set(err, PPW_EIO, "cannot write %s: %s", dir, strerror(errno));
    } else if (lstat(traces, &st) == 0) {
        return ppw_err_set(err, PPW_EIO,
                           "%s already holds a trace (%s exists): remove it or export to "
                           "another directory",
                           dir, traces);
    }
    return 0;
}

static int write_archive(struct otf2_export *x)
{
    int rc = 0;
    CHECK(x, OTF2_Archive_SetFlushCallbacks(x->archive, &flush_callbacks, NULL));
    /* one process writes every location: the serial collectives */
    CHECK(x, OTF2_Archive_SetSerialCollectiveCallbacks(x->archive));
    CHECK(x, OTF2_Archive_SetDefChunkSize(x->archive, OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT));
    CHECK(x, OTF2_Archive_SetCreator(x->archive, "ppw-blame export"));
    CHECK(x, OTF2_Archive_SetDescription(x->archive, x->source));
    CHECK(x, OTF2_Archive_SetMachineName(x->archive, unit_host(x->trace.units[0].run)));
    if ((rc = write_events(x)) || (rc = write_local_defs(x)) || (rc = write_global_defs(x)))
        return rc;
    OTF2_ErrorCode closed = OTF2_Archive_Close(x->archive);
    x->archive = NULL;
    if (closed != OTF2_SUCCESS)
        return otf2_failed(x, closed, "OTF2_Archive_Close");
    return 0;
}

int export_otf2(const char *out_dir, const char *dir, struct ppw_err *err)
{
    struct otf2_export x = {.dir = out_dir, .source = dir, .err = err};
    int rc = export_trace_load(&x.trace, dir, false, 0, err);
    if (!rc && x.trace.job && (x.trace.missing || x.trace.nunits != x.trace.job_size))
        rc = ppw_err_set(err, PPW_ENOTFOUND,
                         "%s: %zu of %" PRIu32 " ranks have a run directory: an OTF2 trace "
                         "names ranks by their place in MPI_COMM_WORLD, and needs every rank",
                         dir, x.trace.nunits, x.trace.job_size);
    bool made = false;
    if (!rc)
        rc = check_output(out_dir, &made, err);
    if (!rc && (!(x.nevents = calloc(x.trace.nunits, sizeof *x.nevents)) ||
                !(x.mpi_thread = calloc(x.trace.nunits, sizeof *x.mpi_thread))))
        rc = oom(&x);
    if (!rc)
        rc = match_messages(&x);
    if (!rc) {
        OTF2_Error_RegisterCallback(keep_otf2_error, NULL);
        otf2_detail[0] = '\0';
        x.archive = OTF2_Archive_Open(out_dir, "traces", OTF2_FILEMODE_WRITE,
                                      OTF2_CHUNK_SIZE_EVENTS_DEFAULT, OTF2_UNDEFINED_UINT64,
                                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
        rc = x.archive ? write_archive(&x)
                       : otf2_failed(&x, OTF2_ERROR_FILE_INTERACTION, "OTF2_Archive_Open");
        if (x.archive)
            OTF2_Archive_Close(x.archive);
        if (rc)
            remove_partial(out_dir, made);
    }
    for (size_t u = 0; x.nevents && u < x.trace.nunits; u++)
        free(x.nevents[u]);
    free(x.nevents);
    free(x.mpi_thread);
    free(x.string_list);
    ppw_strmap_free(&x.strings);
    ppw_strmap_free(&x.region_index);
    free(x.regions);
    free(x.wins);
    free(x.sends);
    free(x.recvs);
    export_trace_free(&x.trace);
    return rc;
}

/* The analysis engine of ppw-blame analyze (analyze.h): inputs, waits at
 * synchronization and communication, frequency, Coven's rules, hotspots,
 * scalability, and the whole; imbalance is analyze_balance.c, the trace's
 * causes analyze_cause.c. */
#define _POSIX_C_SOURCE 200809L

#include "analyze.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"
#include "names.h"
#include "job.h"
#include "open_table.h"
#include "read_graph.h"
#include "read_run.h"
#include "export.h"
#include "intrusion.h"
#include "symbols.h"
#include "view.h"
#include "ppw/gasp_events.h"
#include "ppw/static_format.h"

void analyze_default_thresholds(struct analyze_thresholds *t)
{
    *t = (struct analyze_thresholds){
        .hotspot_pct = 10,
        .deviation = 1.3,
        .baseline_factor = 4,
        .min_loss_pct = 5,
        .many_calls = 10000,
        .small_factor = 20,
        .cpu_util_pct = 50,
        .busy_diff_pct = 35,
        .comm_pct = 5,
        .efficiency = 0.7,
    };
}

/* ---- patterns: names, titles and PPW's resolution hints (Table 5-3) ---- */

static const struct {
    const char *name, *title, *hint;
} patterns[PATTERN_COUNT] = {
    [PATTERN_BARRIER_WAIT] = {"barrier-wait", "wait at barrier (group synchronization)",
                              "balance the work done before the barrier across threads or "
                              "ranks, or remove the barrier if the data does not need it"},
    [PATTERN_LOCK_CONTENTION] = {"lock-contention", "lock contention",
                                 "shorten the critical section, split the lock (finer "
                                 "granularity), or give each thread private data merged at "
                                 "the end"},
    [PATTERN_CONDITION_WAIT] = {"condition-wait", "waiting on a condition or flag",
                                "produce the awaited value earlier, overlap the wait with "
                                "independent work, or rebalance producers and consumers"},
    [PATTERN_LATE_SENDER] = {"late-sender", "late sender: a receive waits for its message",
                             "post the send earlier on the sending rank (move work after it), "
                             "or use a non-blocking receive and compute while it arrives"},
    [PATTERN_LATE_RECEIVER] = {"late-receiver",
                               "late receiver: a send waits for its receive to be posted",
                               "post the receive earlier (MPI_Irecv before the work), or use a "
                               "non-blocking or buffered send instead of a synchronous one"},
    [PATTERN_COLLECTIVE_WAIT] = {"collective-wait",
                                 "wait in a collective for the last rank to join",
                                 "balance the work before the collective across ranks, or "
                                 "use its non-blocking form and overlap it with work"},
    [PATTERN_SMALL_TRANSFERS] = {"small-transfers", "many small transfers",
                                 "aggregate the small messages into fewer large ones (pack a "
                                 "buffer, or use a collective)"},
    [PATTERN_IMBALANCE] = {"load-imbalance", "load imbalance",
                           "redistribute the work on the variable named: smaller or dynamic "
                           "chunks (schedule(dynamic)), or a partition by measured cost"},
    [PATTERN_POOR_SCALING] = {"poor-scalability", "poor scalability across runs",
                              "parallelize the serial part named, or reduce the "
                              "synchronization that grows with the thread or rank count"},
    [PATTERN_LOW_UTILISATION] = {"low-cpu-utilisation", "CPU utilisation at or below 50%",
                                 "add parallelism: more threads or tasks in this phase "
                                 "(Coven)"},
    [PATTERN_BUSY_DIFFERENCE] = {"busy-difference",
                                 "busy fractions of the threads differ by more than 35%",
                                 "load balancing: give the idle threads work (Coven)"},
    [PATTERN_COMMUNICATION] = {"communication-bound", "more than 5% of the time communicating",
                               "use shared memory (threads) within a node, or a decomposition "
                               "that communicates less (Coven)"},
    [PATTERN_SMALL_ONE_SIDED] = {"small-one-sided", "many small puts or gets",
                                 "aggregate them: one put or get of the contiguous block, or a "
                                 "strided form (an MPI_Type_vector datatype, shmem_iput) for "
                                 "strided data"},
    [PATTERN_ONE_SIDED_SYNC] = {"one-sided-sync-wait",
                                "wait in one-sided synchronization (fence, flush, epoch)",
                                "balance the work between synchronizations across ranks, or "
                                "synchronize only the ranks that communicate (post/start/"
                                "complete/wait, or passive target with flushes)"},
    [PATTERN_WINDOW_LOCK] = {"window-lock-contention", "contention for a window or SHMEM lock",
                             "hold the lock for less time (compute outside the epoch or critical "
                             "section), take a shared lock where the accesses allow (MPI "
                             "accumulates are atomic under it; SHMEM atomics need no lock), or "
                             "spread the data over several ranks' windows"},
    [PATTERN_GET_LATENCY] = {"get-latency",
                             "a get completed at once: its latency on the critical path",
                             "issue the get earlier (the next step's data) and complete it "
                             "after independent work, or use MPI_Rget and wait on it later "
                             "(shmem_get_nbi: quiet after the work)"},
};

const char *analyze_pattern_name(enum analyze_pattern p)
{
    return patterns[p].name;
}
const char *analyze_pattern_title(enum analyze_pattern p)
{
    return patterns[p].title;
}
const char *analyze_pattern_hint(enum analyze_pattern p)
{
    return patterns[p].hint;
}

/* Used when no baseline file is found: conservative figures for a modern
 * x86-64 node, so that only clear waits are flagged. */
static const struct ppw_baseline builtin_baseline = {
    .barrier2_ns = 5000,
    .barrier_all_ns = 10000,
    .barrier_all_threads = 8,
    .lock_ns = 50,
    .lock_handoff_ns = 5000,
    .cond_roundtrip_ns = 20000,
    .has_mpi = true,
    .mpi_latency_ns = 2000,
    .mpi_ns_per_byte = 0.2,
    .host = "built-in",
};

/* ---- inputs ---- */

static void loaded_free(struct loaded *l)
{
    for (size_t i = 0; i < l->nunits; i++) {
        ppw_symbols_free(l->units[i].syms);
        ppw_run_free(l->units[i].run);
    }
    free(l->units);
    if (l->has_view)
        view_input_free(&l->view);
    *l = (struct loaded){0};
}

static int add_unit(struct loaded *l, const char *dir, uint32_t rank, bool merged,
                    struct ppw_err *err)
{
    if (l->nunits == l->units_cap) {
        size_t cap = l->units_cap ? 2 * l->units_cap : 16;
        struct unit *grown = realloc(l->units, cap * sizeof *grown);
        if (!grown)
            return ppw_err_set(err, PPW_ENOMEM, "out of memory");
        l->units = grown;
        l->units_cap = cap;
    }
    struct unit *u = &l->units[l->nunits];
    *u = (struct unit){.rank = rank, .merged = merged};
    int rc = merged ? ppw_run_load_merged(dir, &u->run, err) : ppw_run_load(dir, &u->run, err);
    if (!rc && (rc = ppw_symbols_new(u->run, getenv("PPW_DEBUG_DIR"), &u->syms, err)) != 0)
        ppw_run_free(u->run);
    if (!rc)
        l->nunits++;
    return rc;
}

static int load_input(const struct analyze_input *in, struct loaded *l, struct ppw_err *err)
{
    *l = (struct loaded){0};
    struct view_opts o = {
        .dir = in->dir, .binary = in->binary, .force = in->force, .split_threads = true};
    int rc = view_check_opts(&o, "analyze", 0, err);
    if (!rc)
        rc = view_load(&o, &l->view, err);
    if (rc)
        return rc;
    l->has_view = true;
    l->job = l->view.job;
    if (!l->job)
        return add_unit(l, l->view.source, 0, false, err);
    struct ppw_job *job = NULL;
    rc = ppw_job_scan(l->view.source, &job, err);
    for (size_t i = 0; !rc && i < job->count; i++) {
        struct ppw_err rank_err;
        /* A rank that cannot be read is reported by the view already. */
        if (add_unit(l, job->ranks[i].dir, job->ranks[i].rank, true, &rank_err) == PPW_ENOMEM)
            rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    ppw_job_free(job);
    if (!rc && !l->nunits)
        rc = ppw_err_set(err, PPW_EIO, "%s: no rank could be read", l->view.source);
    return rc;
}

/* ---- per-run facts ---- */

/* The run's wall time: FINISH minus the start, else its threads' span. */
double run_wall_ns(const struct ppw_run *run)
{
    uint64_t start = run->has_info ? run->info.start_mono_ns : 0, end = 0;
    if (run->finished && run->finish_end_ns > start)
        return (double)(run->finish_end_ns - start);
    for (size_t i = 0; i < run->thread_count; i++) {
        const struct ppw_run_thread *t = &run->threads[i];
        if (t->ended && t->end_ns > end)
            end = t->end_ns;
        if (t->has_begin && (!start || t->start_ns < start))
            start = t->start_ns;
    }
    return end > start ? (double)(end - start) : 0;
}

/* A thread's CPU time: its THREAD_END record's, else its samples' weights. */
double thread_cpu_ns(const struct ppw_run *run, const struct ppw_run_thread *t)
{
    if (t->ended && t->cpu_ns)
        return (double)t->cpu_ns;
    double w = 0;
    for (size_t i = 0; i < t->sample_count; i++)
        w += (double)t->samples[i].weight;
    return run->has_metric && run->metric.unit == PPW_UNIT_NS ? w : 0;
}

double thread_life_ns(const struct ppw_run *run, const struct ppw_run_thread *t)
{
    uint64_t start = t->has_begin ? t->start_ns : (run->has_info ? run->info.start_mono_ns : 0);
    uint64_t end = t->ended ? t->end_ns : (run->finished ? run->finish_end_ns : 0);
    return end > start ? (double)(end - start) : 0;
}

/* The inclusive wall time and calls of region id on thread t. */
void region_on_thread(const struct ppw_run_thread *t, uint32_t id, double *ns, uint64_t *calls)
{
    *ns = 0;
    *calls = 0;
    for (size_t i = 0; i < t->timer_count; i++)
        if (t->timers[i].path[0] == id) {
            *ns += (double)t->timers[i].incl_sum_ns;
            *calls += t->timers[i].count;
        }
    /* Calls after throttling are counted (at the mean before) or sampled
     * (scaled up). */
    for (size_t i = 0; i < t->throttle_count; i++)
        if (t->throttles[i].region == id) {
            *calls += (uint64_t)llround(ppw_run_throttle_calls(&t->throttles[i]));
            *ns += ppw_run_throttle_ns(&t->throttles[i]);
        }
}

double region_variance_on_thread(const struct ppw_run_thread *t, uint32_t id)
{
    double n = 0, sum = 0, sumsq = 0, calls;
    uint64_t all;
    for (size_t i = 0; i < t->timer_count; i++)
        if (t->timers[i].path[0] == id) {
            n += (double)t->timers[i].count;
            sum += (double)t->timers[i].excl_sum_ns;
            sumsq += t->timers[i].excl_sumsq_ns2;
        }
    region_on_thread(t, id, &calls, &all);
    double var = n > 0 ? sumsq - sum * sum / n : 0;
    return var > 0 ? var * (double)all / n : 0; /* throttled calls vary alike */
}

/* The bytes region id's timed calls on thread t moved (MPI; 0 unknown). */
static double region_bytes(const struct ppw_run_thread *t, uint32_t id)
{
    double bytes = 0;
    for (size_t i = 0; i < t->timer_count; i++)
        if (t->timers[i].path[0] == id)
            bytes += (double)t->timers[i].bytes;
    return bytes;
}

static bool is_one_sided_transfer(uint32_t op)
{
    return op == PPW_OP_PUT || op == PPW_OP_GET || op == PPW_OP_PUT_NB || op == PPW_OP_GET_NB ||
           op == PPW_OP_ATOMIC;
}

static bool is_comm_op(uint32_t op)
{
    return op == PPW_OP_SEND || op == PPW_OP_RECV || op == PPW_OP_SEND_NB || op == PPW_OP_RECV_NB ||
           op == PPW_OP_COMM_SYNC || op == PPW_OP_GROUP_COMM || (op == PPW_OP_GROUP_SYNC) ||
           is_one_sided_transfer(op) || op == PPW_OP_ONE_SIDED_SYNC;
}

bool is_process_comm_tag(uint32_t tag)
{
    return ppw_gasp_tag_is_mpi(tag) || ppw_gasp_tag_is_shmem(tag);
}

/* The wait pattern of an operation, or PATTERN_COUNT for none. */
static enum analyze_pattern wait_pattern(const struct ppw_run_region *g)
{
    switch (g->op) {
    case PPW_OP_GROUP_SYNC: return PATTERN_BARRIER_WAIT;
    case PPW_OP_LOCK_ACQUIRE:
    case PPW_OP_LOCK_RELEASE: /* an MPI lock is a window's; SHMEM's live in symmetric memory */
        return is_process_comm_tag(g->tag) ? PATTERN_WINDOW_LOCK : PATTERN_LOCK_CONTENTION;
    case PPW_OP_ONE_SIDED_SYNC: return PATTERN_ONE_SIDED_SYNC;
    case PPW_OP_WAIT_ON_VALUE: return PATTERN_CONDITION_WAIT;
    case PPW_OP_RECV:
    case PPW_OP_COMM_SYNC: return PATTERN_LATE_SENDER;
    case PPW_OP_SEND: return PATTERN_LATE_RECEIVER;
    case PPW_OP_GROUP_COMM: return is_process_comm_tag(g->tag) ? PATTERN_COLLECTIVE_WAIT : PATTERN_COUNT;
    default: return PATTERN_COUNT;
    }
}

/* What one call of the operation costs on this machine when nobody waits. */
static double baseline_ns(const struct ppw_baseline *b, const struct ppw_run_region *g,
                          unsigned parties)
{
    bool mpi = is_process_comm_tag(g->tag);
    switch (g->op) {
    case PPW_OP_GROUP_SYNC:
        if (mpi)
            return b->mpi_latency_ns * 2 * ceil(log2(parties > 1 ? parties : 2));
        return parties > 2 ? b->barrier_all_ns : b->barrier2_ns;
    case PPW_OP_LOCK_ACQUIRE:
    case PPW_OP_LOCK_RELEASE: /* a window's lock: a round trip to its rank */
        if (!mpi)
            return b->lock_ns;
        return b->mpi_rma_ns > 0 ? b->mpi_rma_ns : 2 * b->mpi_latency_ns;
    case PPW_OP_ONE_SIDED_SYNC:
        /* A fence synchronizes the window's group: measured on 2 ranks,
         * a tree's depth more for more; else a barrier's messages. */
        if (g->tag == GASP_MPI_WIN_FENCE)
            return (b->mpi_fence_ns > 0 ? b->mpi_fence_ns : 2 * b->mpi_latency_ns) *
                   ceil(log2(parties > 1 ? parties : 2));
        return b->mpi_rma_ns > 0 ? b->mpi_rma_ns : 2 * b->mpi_latency_ns;
    case PPW_OP_WAIT_ON_VALUE: return b->cond_roundtrip_ns / 2;
    case PPW_OP_GROUP_COMM: return b->mpi_latency_ns * 2 * ceil(log2(parties > 1 ? parties : 2));
    default: return b->mpi_latency_ns;
    }
}

/* ---- per-key numbers and sums ---- */

struct key_slot {
    uint64_t key;
    size_t number_plus_1; /* 0: unused */
};

static uint64_t mix(uint64_t x) /* splitmix64's finalizer: thread ids and ranks are dense */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t place_key(const void *entry, const void *ctx)
{
    (void)ctx;
    return mix(((const struct key_slot *)entry)->key);
}

static bool key_used(const void *entry, const void *ctx)
{
    (void)ctx;
    return ((const struct key_slot *)entry)->number_plus_1 != 0;
}

static const struct ppw_open_table_kind key_table = {sizeof(struct key_slot), 64, place_key,
                                                     key_used};

size_t key_index_find(const struct key_index *ix, uint64_t key)
{
    if (!ix->cap)
        return SIZE_MAX;
    size_t mask = ix->cap - 1;
    for (size_t k = (size_t)mix(key) & mask; ix->slots[k].number_plus_1; k = (k + 1) & mask)
        if (ix->slots[k].key == key)
            return ix->slots[k].number_plus_1 - 1;
    return SIZE_MAX;
}

size_t key_index_add(struct key_index *ix, uint64_t key, bool *added)
{
    size_t found = key_index_find(ix, key);
    if (added)
        *added = found == SIZE_MAX;
    if (found != SIZE_MAX)
        return found;
    if (!ppw_open_table_reserve((void **)&ix->slots, &ix->cap, ix->count, &key_table, NULL))
        return SIZE_MAX;
    size_t mask = ix->cap - 1, k = (size_t)mix(key) & mask;
    while (ix->slots[k].number_plus_1)
        k = (k + 1) & mask;
    ix->slots[k] = (struct key_slot){key, ++ix->count};
    return ix->count - 1;
}

void key_index_free(struct key_index *ix)
{
    free(ix->slots);
    *ix = (struct key_index){0};
}

bool key_sums_add(struct key_sums *ks, uint64_t key, double value)
{
    bool added;
    size_t i = key_index_add(&ks->keys, key, &added);
    if (i == SIZE_MAX)
        return false;
    if (i >= ks->cap) {
        size_t cap = ks->cap ? 2 * ks->cap : 64;
        double *sums = realloc(ks->sums, cap * sizeof *sums);
        if (!sums)
            return false; /* the key stays, its sum reads 0 below */
        ks->sums = sums;
        ks->cap = cap;
    }
    if (added)
        ks->sums[i] = 0;
    ks->sums[i] += value;
    return true;
}

double key_sums_get(const struct key_sums *ks, uint64_t key)
{
    size_t i = key_index_find(&ks->keys, key);
    return i < ks->cap ? ks->sums[i] : 0;
}

void key_sums_free(struct key_sums *ks)
{
    key_index_free(&ks->keys);
    free(ks->sums);
    *ks = (struct key_sums){0};
}

/* ---- findings under construction ---- */

void setf(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, size, fmt, ap);
    va_end(ap);
}

struct analyze_finding *new_finding(struct engine *e, enum analyze_pattern p, double lost_ns,
                                    struct ppw_err *err)
{
    struct analyze_result *r = e->out;
    if (r->nfindings == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 16;
        struct analyze_finding *f = realloc(r->findings, cap * sizeof *f);
        if (!f) {
            ppw_err_set(err, PPW_ENOMEM, "out of memory");
            return NULL;
        }
        r->findings = f;
        e->cap = cap;
    }
    struct analyze_finding *f = &r->findings[r->nfindings++];
    *f = (struct analyze_finding){.pattern = p, .lost_s = ns_to_s(lost_ns)};
    f->lost_pct = e->thread_ns > 0 ? 100 * lost_ns / e->thread_ns : 0;
    return f;
}

/* The library function of a GASP tag (its first, for tags several share). */
static const char *call_name(uint32_t tag)
{
    static const struct {
        uint32_t tag;
        const char *name;
    } calls[] = {
#define PPW_CALL_ROW(tag, name, op, operands, has_result) {tag, name},
        PPW_GASP_CALLS(PPW_CALL_ROW)
#undef PPW_CALL_ROW
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (calls[i].tag == tag)
            return calls[i].name;
    return NULL;
}

/* The static graph's call at g's file:line:col, or NULL. */
static const struct ppw_static_call *call_at(const struct ppw_static_graph *graph,
                                             const struct ppw_run_region *g,
                                             const struct ppw_static_func **fn_out)
{
    if (!graph || !g->file)
        return NULL;
    for (size_t i = 0; i < graph->func_count; i++) {
        const struct ppw_static_func *fn = &graph->funcs[i];
        if (!fn->file || strcmp(view_basename(fn->file), view_basename(g->file)) != 0)
            continue;
        for (size_t c = 0; c < fn->call_count; c++) {
            const struct ppw_static_call *call = &fn->calls[c];
            if (call->line == g->line && (!g->col || !call->col || call->col == g->col)) {
                *fn_out = fn;
                return call;
            }
        }
    }
    return NULL;
}

static void where_region(struct analyze_finding *f, const struct ppw_run_region *g,
                         const struct ppw_static_graph *graph, const struct ppw_names *names)
{
    /* Library operations are named by the call: MPI_Ssend, not its tag. */
    const struct ppw_static_func *fn;
    const struct ppw_static_call *call = call_at(graph, g, &fn);
    const char *name = call && call->callee[0] ? call->callee : call_name(g->tag);
    char shown[512];
    if (!name) /* a function region: outlined code by its source function */
        name = ppw_names_region(names, g->name, g->file, g->line, shown, sizeof shown);
    setf(f->region, sizeof f->region, "%s", name ? name : "?");
    setf(f->file, sizeof f->file, "%s", g->file ? g->file : "");
    f->line = g->line;
    f->col = g->col;
}

/* The variable a library call at g's location binds to its parameter
 * `formal` (-1: any) in binding `mode` (0: any), from the caller's static
 * graph; "" when unknown. */
static void bound_variable(const struct ppw_static_graph *graph, const struct ppw_run_region *g,
                           int32_t formal, uint32_t mode, char *out, size_t size)
{
    out[0] = 0;
    const struct ppw_static_func *fn;
    const struct ppw_static_call *call = call_at(graph, g, &fn);
    for (size_t k = 0; call && k < call->binding_count; k++) {
        const struct ppw_static_binding *bd = &call->bindings[k];
        if ((formal < 0 || bd->formal == formal) && (!mode || bd->mode == mode) && bd->var >= 0 &&
            (size_t)bd->var < fn->var_count) {
            setf(out, size, "%s", fn->vars[bd->var].name);
            return;
        }
    }
}

/* What a library call passes as its first argument (the lock, the
 * barrier, the buffer). */
static void call_variable(const struct ppw_static_graph *graph, const struct ppw_run_region *g,
                          char *out, size_t size)
{
    bound_variable(graph, g, 0, 0, out, size);
}

/* What a one-sided call writes (docs/libcalls.md): the window's memory for
 * a put, a fence or a lock, the origin buffer for a get. */
static void written_variable(const struct ppw_static_graph *graph, const struct ppw_run_region *g,
                             char *out, size_t size)
{
    bound_variable(graph, g, -1, PPW_BIND_WRITTEN, out, size);
}

/* ---- 0. a get's latency on the critical path (traces) ---- */

/* Whether START event ev completes the one-sided transfers on window win
 * (the handle, the last START operand of both): a flush, a fence, an
 * access epoch's end, an unlock. */
static bool completes_transfers(const struct ppw_run_trace *ev, uint64_t win)
{
    switch (ev->region->tag) {
    case GASP_MPI_WIN_FLUSH:
    case GASP_MPI_WIN_FLUSH_ALL:
    case GASP_MPI_WIN_FENCE:
    case GASP_MPI_WIN_COMPLETE:
    case GASP_MPI_WIN_UNLOCK:
    case GASP_MPI_WIN_UNLOCK_ALL: return ev->nargs >= 1 && ev->args[ev->nargs - 1] == win;
    default: return false;
    }
}

static int note_get_wait(struct engine *e, uint32_t unit, uint32_t thread, uint32_t region,
                         double ns)
{
    for (size_t i = 0; i < e->nget_waits; i++) {
        struct get_wait *w = &e->get_waits[i];
        if (w->unit == unit && w->thread == thread && w->region == region) {
            w->ns += ns;
            return 0;
        }
    }
    struct get_wait *grown = realloc(e->get_waits, (e->nget_waits + 1) * sizeof *grown);
    if (!grown)
        return PPW_ENOMEM;
    e->get_waits = grown;
    e->get_waits[e->nget_waits++] = (struct get_wait){unit, thread, region, ns};
    return 0;
}

/* The completion time find_get_latency gave to gets, of region on a thread. */
static double get_wait_of(const struct engine *e, uint32_t unit, uint32_t thread, uint32_t region)
{
    for (size_t i = 0; i < e->nget_waits; i++) {
        const struct get_wait *w = &e->get_waits[i];
        if (w->unit == unit && w->thread == thread && w->region == region)
            return w->ns;
    }
    return 0;
}

/* A get is completed at once when the next event of its thread starts a
 * completion (MPI_Win_flush, an unlock, a fence, shmem_quiet) sooner after
 * the get's END than the get and its completion then take: the work
 * between them was too short to hide the transfer, and the get's whole
 * time, issue and completion, is its latency, paid on the critical path (PPW's one-sided delay of a blocking
 * transfer).  Needs the trace; the completions' time goes to the get's
 * site and leaves the sync waits. */
/* One get site's completions waited at once, summed over the ranks. */
struct get_site {
    const struct ppw_run_region *get; /* of the first rank that has it */
    double lost_ns, top_ns;           /* all; the rank that lost most */
    uint64_t calls, at_once;
    uint32_t top_rank;
};

static int find_get_latency(struct engine *e, struct ppw_err *err)
{
    struct get_site *sites = NULL;
    size_t nsites = 0;
    int rc = 0;
    for (size_t u = 0; u < e->in->nunits && !rc; u++) {
        const struct ppw_run *run = e->in->units[u].run;
        for (size_t r = 0; r < run->region_count && !rc; r++) {
            const struct ppw_run_region *get = &run->regions[r];
            /* MPI_Get completes at a flush, unlock or fence on its window;
             * shmem_get_nbi at the PE's next quiet. */
            bool mpi_get = ppw_gasp_tag_is_mpi(get->tag) && get->op == PPW_OP_GET;
            if (!mpi_get && get->tag != GASP_SHMEM_GET_NBI)
                continue;
            double lost = 0;
            uint64_t calls = 0, at_once = 0;
            for (size_t t = 0; t < run->thread_count && !rc; t++) {
                const struct ppw_run_thread *th = &run->threads[t];
                /* The trace holds the calls before throttling; the profile
                 * counts them all: the traced share stands for the rest. */
                double all_ns;
                uint64_t all_calls, traced = 0;
                region_on_thread(th, get->id, &all_ns, &all_calls);
                for (size_t i = 0; i < th->trace_count; i++)
                    traced += th->traces[i].region == get && th->traces[i].evttype == GASP_END;
                double scale = traced ? (double)all_calls / (double)traced : 1;
                if (scale < 1)
                    scale = 1;
                /* Between a call's END and the next call's START lies ppw's
                 * own work too: the probe pair's part outside the calls
                 * (about 1 us in situ here, as long as a get). */
                struct ppw_probe_costs costs;
                ppw_intrusion_probe_costs(run, th, &costs);
                double probes = costs.pair_ns > costs.inner_ns ? costs.pair_ns - costs.inner_ns : 0;
                for (size_t i = 0; i + 2 < th->trace_count && !rc; i++) {
                    const struct ppw_run_trace *end = &th->traces[i], *next = &th->traces[i + 1];
                    if (end->region != get || end->evttype != GASP_END)
                        continue;
                    calls++;
                    /* MPI's END: count type rank disp win result */
                    if (next->evttype != GASP_START ||
                        !(mpi_get ? end->nargs >= 6 && completes_transfers(next, end->args[4])
                                  : next->region->tag == GASP_SHMEM_QUIET))
                        continue;
                    /* its END: the next event of that region on the thread */
                    for (size_t j = i + 2; j < th->trace_count; j++) {
                        const struct ppw_run_trace *done = &th->traces[j];
                        if (done->region != next->region || done->evttype != GASP_END)
                            continue;
                        double ns = (double)(done->time_ns - next->time_ns);
                        /* the get's own call too: issue and completion, one
                         * transfer (a library may move the data in either) */
                        const struct ppw_run_trace *start = i > 0 ? &th->traces[i - 1] : NULL;
                        double issue = start && start->region == get && start->evttype == GASP_START
                                           ? (double)(end->time_ns - start->time_ns)
                                           : 0;
                        if ((double)(next->time_ns - end->time_ns) - probes >= ns + issue)
                            break; /* enough work in between to hide it */
                        lost += (ns + issue) * scale;
                        at_once++;
                        rc = note_get_wait(e, (uint32_t)u, th->index, next->region->id, ns * scale);
                        break;
                    }
                }
            }
            if (rc || !at_once)
                continue;
            /* The same site on every rank: one finding (the program's line). */
            struct get_site *site = NULL;
            for (size_t k = 0; k < nsites && !site; k++)
                if (sites[k].get->line == get->line && sites[k].get->col == get->col &&
                    strcmp(sites[k].get->file ? sites[k].get->file : "",
                           get->file ? get->file : "") == 0)
                    site = &sites[k];
            if (!site) {
                struct get_site *grown = realloc(sites, (nsites + 1) * sizeof *grown);
                if (!grown) {
                    rc = PPW_ENOMEM;
                    break;
                }
                sites = grown;
                site = &sites[nsites++];
                *site = (struct get_site){.get = get};
            }
            site->lost_ns += lost;
            site->calls += calls;
            site->at_once += at_once;
            if (lost > site->top_ns) {
                site->top_ns = lost;
                site->top_rank = e->in->units[u].rank;
            }
        }
    }
    for (size_t k = 0; k < nsites && !rc; k++) {
        const struct get_site *site = &sites[k];
        struct analyze_finding *f = new_finding(e, PATTERN_GET_LATENCY, site->lost_ns, err);
        if (!f) {
            rc = PPW_ENOMEM;
            break;
        }
        e->explained_ns[PATTERN_GET_LATENCY] += site->lost_ns;
        if (f->lost_pct >= e->t->min_loss_pct)
            e->explained_comm_ns += site->lost_ns;
        where_region(f, site->get, e->in->view.graph, e->in->view.names);
        written_variable(e->in->view.graph, site->get, f->variable, sizeof f->variable);
        setf(f->evidence, sizeof f->evidence,
             "%" PRIu64 " of %" PRIu64 " traced gets completed at once (the next call waits "
             "for them longer than the work before it took); with the calls after throttling, "
             "%.3f s in those gets and their completions; most on %s %" PRIu32 " (%.3f s)",
             site->at_once, site->calls, ns_to_s(site->lost_ns), e->in->job ? "rank" : "process",
             site->top_rank, ns_to_s(site->top_ns));
    }
    free(sites);
    if (rc == PPW_ENOMEM)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    return rc;
}

/* ---- 1. waits at synchronization and communication (baseline filter) ---- */

static struct site *site_for(struct engine *e, enum analyze_pattern p,
                             const struct ppw_run_region *g, const char *variable)
{
    for (size_t i = 0; i < e->nsites; i++) {
        struct site *s = &e->sites[i];
        if (s->pattern != p)
            continue;
        if (variable[0]
                ? strcmp(s->variable, variable) == 0
                : !s->variable[0] && s->region->tag == g->tag && s->region->line == g->line &&
                      s->region->col == g->col &&
                      strcmp(s->region->file ? s->region->file : "", g->file ? g->file : "") == 0)
            return s;
    }
    struct site *grown = realloc(e->sites, (e->nsites + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    e->sites = grown;
    struct site *s = &e->sites[e->nsites++];
    *s = (struct site){.pattern = p, .region = g};
    setf(s->variable, sizeof s->variable, "%s", variable);
    return s;
}

/* How many threads of the unit take part in group synchronization: those
 * that called region g. */
static unsigned parties_of(const struct unit *u, const struct ppw_run_region *g, bool job,
                           size_t nunits)
{
    if (job)
        return (unsigned)nunits;
    unsigned n = 0;
    for (size_t i = 0; i < u->run->thread_count; i++) {
        double ns;
        uint64_t calls;
        region_on_thread(&u->run->threads[i], g->id, &ns, &calls);
        n += calls > 0;
    }
    return n;
}

static int add_site_wait(struct site *s, const struct site_wait *w)
{
    if (s->nwaits == s->waits_cap) { /* doubling: a site can have a wait per rank */
        size_t cap = s->waits_cap ? 2 * s->waits_cap : 8;
        struct site_wait *grown = realloc(s->waits, cap * sizeof *grown);
        if (!grown)
            return PPW_ENOMEM;
        s->waits = grown;
        s->waits_cap = cap;
    }
    s->waits[s->nwaits++] = *w;
    return 0;
}

static int collect_waits(struct engine *e, struct ppw_err *err)
{
    const struct ppw_static_graph *graph = e->in->view.graph;
    for (size_t u = 0; u < e->in->nunits; u++) {
        const struct unit *unit = &e->in->units[u];
        const struct ppw_run *run = unit->run;
        for (size_t r = 0; r < run->region_count; r++) {
            const struct ppw_run_region *g = &run->regions[r];
            enum analyze_pattern p = wait_pattern(g);
            if (p == PATTERN_COUNT)
                continue;
            char variable[128] = "";
            if (p == PATTERN_LOCK_CONTENTION || p == PATTERN_CONDITION_WAIT ||
                p == PATTERN_BARRIER_WAIT)
                call_variable(graph, g, variable, sizeof variable);
            else if (p == PATTERN_WINDOW_LOCK || p == PATTERN_ONE_SIDED_SYNC)
                written_variable(graph, g, variable, sizeof variable);
            double base = baseline_ns(e->b, g, parties_of(unit, g, e->in->job, e->in->nunits));
            double unit_wait = 0;
            struct site *s = NULL;
            for (size_t t = 0; t < run->thread_count; t++) {
                double ns;
                uint64_t calls;
                region_on_thread(&run->threads[t], g->id, &ns, &calls);
                if (!calls)
                    continue;
                if (!s && !(s = site_for(e, p, g, variable)))
                    return ppw_err_set(err, PPW_ENOMEM, "out of memory");
                /* A get's completion is that get's latency (find_get_latency). */
                if (p == PATTERN_ONE_SIDED_SYNC || p == PATTERN_WINDOW_LOCK)
                    ns -= get_wait_of(e, (uint32_t)u, run->threads[t].index, g->id);
                /* Data takes its transfer time at the baseline's bandwidth:
                 * only time beyond it is waiting. */
                double expected = (double)calls * base;
                if (is_process_comm_tag(g->tag))
                    expected += region_bytes(&run->threads[t], g->id) * e->b->mpi_ns_per_byte;
                double wait = ns - expected;
                wait = wait > 0 ? wait : 0;
                struct site_wait w = {
                    .region = g, .unit = (uint32_t)u, .thread = (uint32_t)t, .wait_ns = wait,
                    .group = e->in->job ? unit->rank : run->threads[t].index,
                    .variance_ns2 = region_variance_on_thread(&run->threads[t], g->id)};
                if (add_site_wait(s, &w))
                    return ppw_err_set(err, PPW_ENOMEM, "out of memory");
                s->expected_ns += expected;
                s->calls += calls;
                unit_wait += wait;
            }
            /* Where: the site that waits most, an acquire before a release. */
            bool acquire = g->op != PPW_OP_LOCK_RELEASE;
            bool had_acquire = s && s->region->op != PPW_OP_LOCK_RELEASE;
            if (s && (acquire > had_acquire ||
                      (acquire == had_acquire && unit_wait > s->best_wait_ns))) {
                s->best_wait_ns = unit_wait;
                s->region = g;
            }
        }
    }
    return 0;
}

/* Many calls, each costing little more than the message latency. */
static bool small_and_many(const struct engine *e, uint64_t calls, double mean_ns)
{
    return calls >= e->t->many_calls && mean_ns <= e->t->small_factor * e->b->mpi_latency_ns;
}

static int emit_waits(struct engine *e, struct ppw_err *err)
{
    const char *group = e->in->job ? "rank" : "thread";
    for (size_t i = 0; i < e->nsites; i++) {
        struct site *s = &e->sites[i];
        double mean = s->calls ? (s->wait_ns + s->expected_ns) / (double)s->calls : 0;
        double base = s->calls ? s->expected_ns / (double)s->calls : 0;
        if (s->calls == 0 || mean <= e->t->baseline_factor * base || s->wait_ns <= 0)
            continue; /* the baseline filter: this costs what it costs here */
        if (is_process_comm_tag(s->region->tag) && small_and_many(e, s->calls, mean))
            continue; /* frequency: the per-message cost, not a wait (small transfers) */
        unsigned hi = 0, lo = 0;
        for (unsigned k = 1; k < s->groups; k++) {
            hi = s->group_waits[k] > s->group_waits[hi] ? k : hi;
            lo = s->group_waits[k] < s->group_waits[lo] ? k : lo;
        }
        e->explained_ns[s->pattern] += s->wait_ns;
        e->waits_machine_ns += s->machine_ns;
        struct analyze_finding *f = new_finding(e, s->pattern, s->wait_ns, err);
        if (!f)
            return PPW_ENOMEM;
        /* A finding that stays (over --min-loss) holds its calls' whole
         * time, as communication-bound sees it. */
        if (is_process_comm_tag(s->region->tag) && f->lost_pct >= e->t->min_loss_pct)
            e->explained_comm_ns += s->wait_ns + s->machine_ns + s->noise_ns;
        where_region(f, s->region, e->in->view.graph, e->in->view.names);
        setf(f->variable, sizeof f->variable, "%s", s->variable);
        char who[160];
        if (s->groups > 1)
            setf(who, sizeof who,
                 "most waiting: %s %" PRIu32 " (%.3f s), least: %s %" PRIu32 " (%.3f s)", group,
                 s->group_ids[hi], ns_to_s(s->group_waits[hi]), group, s->group_ids[lo],
                 ns_to_s(s->group_waits[lo]));
        else
            setf(who, sizeof who, "all on %s %" PRIu32, group, s->group_ids[0]);
        char machine[128] = "", noise[96] = "";
        if (s->machine_ns >= 0.0005 * 1e9)
            setf(machine, sizeof machine,
                 ", less %.3f s the machine made (partners ready but waiting for a CPU)",
                 ns_to_s(s->machine_ns));
        if (s->noise_ns >= 0.0005 * 1e9)
            setf(noise, sizeof noise, ", less %.3f s of arrival-order noise",
                 ns_to_s(s->noise_ns));
        setf(f->evidence, sizeof f->evidence,
             "%" PRIu64 " calls, %.3f s in all%s%s; mean %.1f us per call against a baseline of "
             "%.2f us (%.0fx); %s",
             s->calls, ns_to_s(s->wait_ns + s->machine_ns + s->noise_ns + s->expected_ns),
             machine, noise, mean / 1e3, base / 1e3, base > 0 ? mean / base : 0, who);
    }
    return 0;
}

/* ---- 2. frequency: many small transfers ---- */

static int find_small_transfers(struct engine *e, struct ppw_err *err)
{
    for (size_t u = 0; u < e->in->nunits; u++) {
        const struct ppw_run *run = e->in->units[u].run;
        for (size_t r = 0; r < run->region_count; r++) {
            const struct ppw_run_region *g = &run->regions[r];
            bool one_sided = g->op != PPW_OP_ATOMIC && is_one_sided_transfer(g->op);
            if (!is_process_comm_tag(g->tag) ||
                (!one_sided && g->op != PPW_OP_SEND && g->op != PPW_OP_RECV &&
                 g->op != PPW_OP_SEND_NB && g->op != PPW_OP_RECV_NB))
                continue;
            double ns = 0;
            uint64_t calls = 0;
            for (size_t t = 0; t < run->thread_count; t++) {
                double tn;
                uint64_t tc;
                region_on_thread(&run->threads[t], g->id, &tn, &tc);
                ns += tn;
                calls += tc;
            }
            /* Not the waits for partners that waited for a CPU: under load
             * they made each small message cost 40 us instead of 1. */
            double raw_ns = ns;
            ns -= machine_wait_at(e, g);
            double latency = e->b->mpi_latency_ns;
            if (!calls || ns <= 0 || !small_and_many(e, calls, ns / (double)calls))
                continue;
            /* Aggregated into one message, the calls would cost about one
             * latency plus the bytes: nearly all of their time is lost. */
            double lost = ns - latency > 0 ? ns - latency : 0;
            enum analyze_pattern p = one_sided ? PATTERN_SMALL_ONE_SIDED : PATTERN_SMALL_TRANSFERS;
            struct analyze_finding *f = new_finding(e, p, lost, err);
            if (!f)
                return PPW_ENOMEM;
            if (f->lost_pct >= e->t->min_loss_pct)
                e->explained_comm_ns += raw_ns;
            e->explained_ns[p] += lost;
            where_region(f, g, e->in->view.graph, e->in->view.names);
            if (one_sided)
                written_variable(e->in->view.graph, g, f->variable, sizeof f->variable);
            setf(f->evidence, sizeof f->evidence,
                 "rank %" PRIu32 ": %" PRIu64 " calls, %.3f s in all, %.2f us each (the "
                 "latency baseline is %.2f us)",
                 e->in->units[u].rank, calls, ns_to_s(ns), ns / (double)calls / 1e3, latency / 1e3);
        }
    }
    return 0;
}

double explained_waits(const struct engine *e)
{
    double sum = 0;
    for (int p = 0; p < PATTERN_COUNT; p++)
        sum += e->explained_ns[p];
    return sum;
}

/* ---- 4. Coven: CPU utilisation and time in communication ---- */

double time_in_regions(const struct ppw_run *run, const struct ppw_run_thread *t,
                       bool (*match)(const struct ppw_run_region *g))
{
    double sum = 0;
    for (size_t r = 0; t && r < run->region_count; r++) {
        if (!match(&run->regions[r]))
            continue;
        double ns;
        uint64_t calls;
        region_on_thread(t, run->regions[r].id, &ns, &calls);
        sum += ns;
    }
    return sum;
}

static bool init_or_term(const struct ppw_run_region *g)
{
    return g->op == PPW_OP_INIT || g->op == PPW_OP_TERM;
}

/* The main thread's wall time in initialization and termination calls
 * (MPI_Init, MPI_Finalize). */
static double init_term_ns(const struct ppw_run *run)
{
    return time_in_regions(run, ppw_run_find_thread(run, 0), init_or_term);
}

static int find_coven(struct engine *e, struct ppw_err *err)
{
    double cpu = 0, wall = 0, comm = 0, bytes = 0, top_ns = 0, runqueue = 0, rank_ns = 0;
    const struct ppw_run_region *top = NULL; /* the call site communicating longest */
    unsigned ncpus = 0;
    for (size_t u = 0; u < e->in->nunits; u++) {
        const struct ppw_run *run = e->in->units[u].run;
        /* MPI_Init and MPI_Finalize wait for the launcher: not the program's
         * phase. */
        double w = run_wall_ns(run) - init_term_ns(run);
        wall = w > wall ? w : wall;
        rank_ns += w > 0 ? w : 0;
        if (run->has_info && run->info.ncpus > ncpus)
            ncpus = run->info.ncpus;
        for (size_t t = 0; t < run->thread_count; t++) {
            cpu += thread_cpu_ns(run, &run->threads[t]);
            if (run->threads[t].ended && run->threads[t].runqueue_ns != PPW_WAIT_UNKNOWN)
                runqueue += (double)run->threads[t].runqueue_ns;
            for (size_t r = 0; r < run->region_count; r++) {
                const struct ppw_run_region *g = &run->regions[r];
                if (!is_process_comm_tag(g->tag) || !is_comm_op(g->op))
                    continue;
                double ns;
                uint64_t calls;
                region_on_thread(&run->threads[t], g->id, &ns, &calls);
                comm += ns;
                bytes += region_bytes(&run->threads[t], g->id);
                if (ns > top_ns) {
                    top_ns = ns;
                    top = g;
                }
            }
        }
    }
    if (!ncpus)
        ncpus = 1;
    /* What the machine offered the program: its CPUs over the wall time,
     * each at the pace it gave a ready thread (CPU over CPU plus the wait
     * for a CPU: other processes took the rest, or the program's own
     * threads outnumbered the CPUs).  A loaded machine is not a program
     * that leaves CPUs idle: a program with one thread busy of two got
     * 67% of what it was offered on a quiet machine and, counted against
     * the whole wall time, 33% under a load of 8. */
    double pace = cpu + runqueue > 0 ? cpu / (cpu + runqueue) : 1;
    double capacity = wall * ncpus * pace;
    if (capacity < cpu)
        capacity = cpu;
    double util = capacity > 0 ? 100 * cpu / capacity : 100;
    /* Communication first: time in MPI calls is also CPU the ranks left
     * idle, which the utilisation rule must not count again.  Its share of
     * the ranks' wall time is what a loaded machine stretches alike (the
     * communication and the rest); what the wait and small-transfer
     * findings already hold, wholly (the machine's part and the noise of
     * their calls too), is not counted again; the rest is taken at the
     * machine's pace, as the waits are.  (Taking the machine's waits off
     * instead left 0.07 to 0.74 s of comm_bound.c's 16 MB exchanges, as
     * the calibrated bandwidth came out 0.19 or 0.54 ns a byte.) */
    double comm_pct = rank_ns > 0 ? 100 * comm / rank_ns : 0;
    if (comm_pct > e->t->comm_pct) {
        double pace = cpu + runqueue > 0 ? cpu / (cpu + runqueue) : 1;
        double own = (comm - e->explained_comm_ns) * pace;
        if (own > 0) {
            struct analyze_finding *f = new_finding(e, PATTERN_COMMUNICATION, own, err);
            if (!f)
                return PPW_ENOMEM;
            e->explained_ns[PATTERN_COMMUNICATION] += own;
            const struct ppw_static_graph *graph = e->in->view.graph;
            if (top) { /* where: the call site that communicated longest, on its buffer */
                where_region(f, top, graph, e->in->view.names);
                call_variable(graph, top, f->variable, sizeof f->variable);
            } else {
                setf(f->region, sizeof f->region, "MPI communication");
            }
            char volume[96] = "";
            if (bytes > 0)
                setf(volume, sizeof volume, "; %.1f MB moved, %.2f GB/s while communicating",
                     bytes / 1e6, bytes / comm);
            setf(f->evidence, sizeof f->evidence,
                 "%.3f s in communication calls of %.3f s rank-seconds: %.1f%% (threshold %.0f%%); "
                 "longest at one site: %.3f s%s",
                 ns_to_s(comm), ns_to_s(rank_ns), comm_pct, e->t->comm_pct, ns_to_s(top_ns),
                 volume);
        }
    }
    if (util <= e->t->cpu_util_pct) {
        double own = capacity - cpu - explained_waits(e);
        if (own > 0) {
            struct analyze_finding *f = new_finding(e, PATTERN_LOW_UTILISATION, own, err);
            if (!f)
                return PPW_ENOMEM;
            f->lost_pct = 100 * own / capacity; /* of the CPU time the machine offered */
            setf(f->region, sizeof f->region, "the whole run");
            setf(f->evidence, sizeof f->evidence,
                 "CPU time %.3f s over %.3f s of wall time on %u CPUs, at the %.0f%% of a "
                 "CPU that a ready thread got (it waited %.3f s for one): %.0f%% utilisation "
                 "(threshold %.0f%%)",
                 ns_to_s(cpu), ns_to_s(wall), ncpus, 100 * pace, ns_to_s(runqueue), util,
                 e->t->cpu_util_pct);
        }
    }
    return 0;
}

/* ---- hotspots ---- */

static int find_hotspots(struct engine *e, struct ppw_err *err)
{
    size_t nstacks;
    const struct ppw_blame_stack *stacks = view_stacks(&e->in->view, &nstacks);
    const struct ppw_static_graph *graph = e->in->view.graph;
    uint64_t total = view_total_samples(&e->in->view);
    if (!total || !graph->func_count)
        return 0;
    /* Each distinct function name looked up in the graph once. */
    struct export_frames frames;
    if (export_frames_build(&frames, stacks, nstacks, NULL, graph) != 0)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    uint64_t *self = calloc(graph->func_count, sizeof *self);
    if (!self) {
        export_frames_free(&frames);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    for (size_t s = 0; s < nstacks; s++)
        /* Self: the innermost frame of the program's own code. */
        for (size_t f = 0; f < stacks[s].nframes; f++) {
            const struct ppw_blame_frame *fr = &stacks[s].frames[f];
            const struct ppw_static_func *fn =
                fr->function ? frames.funcs[export_frame_index(&frames, fr->function)] : NULL;
            if (fn) {
                self[fn - graph->funcs] += stacks[s].samples;
                break;
            }
        }
    /* One hot spot per function as the user knows it: an OpenMP construct's
     * outlined pieces add up (ppw_names_function). */
    const struct ppw_names *names = e->in->view.names;
    for (size_t fi = 0; fi < graph->func_count; fi++)
        for (size_t fj = 0; fj < fi && self[fi]; fj++)
            if (self[fj] && ppw_names_function(names, fj) == ppw_names_function(names, fi)) {
                self[fj] += self[fi];
                self[fi] = 0;
            }
    int rc = 0;
    for (size_t fi = 0; fi < graph->func_count && !rc; fi++) {
        double pct = 100.0 * (double)self[fi] / (double)total;
        if (!self[fi] || pct < e->t->hotspot_pct)
            continue;
        struct analyze_hotspot *h = realloc(e->out->hotspots, (e->out->nhotspots + 1) * sizeof *h);
        if (!h) {
            rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
            break;
        }
        e->out->hotspots = h;
        h = &h[e->out->nhotspots++];
        *h = (struct analyze_hotspot){.pct = pct, .samples = self[fi]};
        setf(h->function, sizeof h->function, "%s", ppw_names_function(names, fi));
    }
    free(self);
    export_frames_free(&frames);
    return rc;
}

/* ---- 6. scalability across inputs ---- */

struct scale_point {
    unsigned p;
    double wall_ns;
};

static int find_scaling(struct engine *e, const struct analyze_input *inputs, size_t n,
                        struct ppw_err *err)
{
    struct scale_point *pts = calloc(n, sizeof *pts);
    if (!pts)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        struct loaded l;
        if (i == 0) {
            l = *e->in;
        } else if ((rc = load_input(&inputs[i], &l, err)) != 0) {
            break;
        }
        size_t ngroups;
        struct group_load *g = collect_groups(&l, &ngroups);
        if (!g) {
            rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
        } else {
            pts[i].p = (unsigned)ngroups;
            for (size_t u = 0; u < l.nunits; u++) {
                double w = run_wall_ns(l.units[u].run);
                pts[i].wall_ns = w > pts[i].wall_ns ? w : pts[i].wall_ns;
            }
        }
        free(g);
        if (i != 0)
            loaded_free(&l);
    }
    size_t lo = 0, hi = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (pts[i].p < pts[lo].p)
            lo = i;
        if (pts[i].p > pts[hi].p)
            hi = i;
    }
    if (!rc && pts[hi].p > pts[lo].p && pts[hi].wall_ns > 0) {
        double eff = (pts[lo].wall_ns * pts[lo].p) / (pts[hi].wall_ns * pts[hi].p);
        size_t len = 0;
        for (size_t i = 0; i < n; i++) {
            double ei = (pts[lo].wall_ns * pts[lo].p) / (pts[i].wall_ns * pts[i].p);
            len += (size_t)snprintf(e->out->scaling + len,
                                    len < sizeof e->out->scaling ? sizeof e->out->scaling - len : 0,
                                    "%sp=%u: %.3f s (E %.2f)", i ? ", " : "", pts[i].p,
                                    ns_to_s(pts[i].wall_ns), ei);
            if (len >= sizeof e->out->scaling)
                break;
        }
        if (eff < e->t->efficiency) {
            double lost = pts[hi].wall_ns * pts[hi].p - pts[lo].wall_ns * pts[lo].p;
            struct analyze_finding *f = new_finding(e, PATTERN_POOR_SCALING, lost, err);
            if (!f) {
                rc = PPW_ENOMEM;
            } else {
                /* Relative to the largest run's thread-seconds. */
                f->lost_pct = 100 * lost / (pts[hi].wall_ns * pts[hi].p);
                setf(f->region, sizeof f->region, "the whole run");
                setf(f->evidence, sizeof f->evidence,
                     "from %u to %u %s: %.3f s to %.3f s, parallel efficiency %.2f "
                     "(threshold %.2f)",
                     pts[lo].p, pts[hi].p, e->in->job ? "ranks" : "threads",
                     ns_to_s(pts[lo].wall_ns), ns_to_s(pts[hi].wall_ns), eff, e->t->efficiency);
            }
        }
    }
    free(pts);
    return rc;
}

/* ---- the whole ---- */

static int compare_finding(const void *x, const void *y)
{
    const struct analyze_finding *a = x, *b = y;
    if (a->lost_s != b->lost_s)
        return a->lost_s > b->lost_s ? -1 : 1;
    return (int)a->pattern - (int)b->pattern;
}

static int compare_hotspot(const void *x, const void *y)
{
    const struct analyze_hotspot *a = x, *b = y;
    return a->samples < b->samples ? 1 : a->samples > b->samples ? -1 : 0;
}

int analyze_run(const struct analyze_input *inputs, size_t n, const struct analyze_thresholds *t,
                const struct ppw_baseline *baseline, const char *baseline_source,
                struct analyze_result *out, struct ppw_err *err)
{
    *out = (struct analyze_result){0};
    out->baseline = baseline ? *baseline : builtin_baseline;
    if (!out->baseline.has_mpi) {
        out->baseline.mpi_latency_ns = builtin_baseline.mpi_latency_ns;
        out->baseline.mpi_ns_per_byte = builtin_baseline.mpi_ns_per_byte;
    }
    /* A per-byte cost of 0 is a failed measurement (an older calibrate took
     * it from a disturbed latency), not free data: with it every large
     * transfer counted as waiting. */
    if (!(out->baseline.mpi_ns_per_byte > 0))
        out->baseline.mpi_ns_per_byte = builtin_baseline.mpi_ns_per_byte;
    out->baseline_source = baseline ? baseline_source : "built-in defaults";
    struct loaded in;
    int rc = load_input(&inputs[0], &in, err);
    if (rc)
        return rc;
    struct engine e = {.t = t, .b = &out->baseline, .in = &in, .out = out};
    out->job = in.job;
    for (size_t u = 0; u < in.nunits; u++) {
        const struct ppw_run *run = in.units[u].run;
        double wall = run_wall_ns(run);
        out->run_s = ns_to_s(wall) > out->run_s ? ns_to_s(wall) : out->run_s;
        /* Threads alive at once share the run's wall time, which a loaded
         * machine stretches: counted at its pace, the share of a CPU a
         * ready thread got, as the waits are (analyze_noise.c).  A parent
         * waiting in pthread_join adds nothing to what its workers do (a
         * main thread joining for the whole run diluted every finding). */
        double pace = run_pace(run);
        for (size_t i = 0; i < run->thread_count; i++) {
            const struct ppw_run_thread *th = &run->threads[i];
            out->has_trace |= th->trace_count > 0;
            double life = thread_life_ns(run, th) - thread_join_ns(run, th, true);
            if (!in.job && life > 0)
                e.thread_ns += life * pace;
        }
        if (in.job) { /* MPI_Init and MPI_Finalize wait for the launcher */
            double rank_ns = wall - init_term_ns(run) > 0 ? wall - init_term_ns(run) : wall;
            e.thread_ns += rank_ns * pace;
        }
    }
    if (!rc)
        rc = find_get_latency(&e, err);
    if (rc == 0)
        rc = collect_waits(&e, err);
    if (!rc)
        rc = settle_site_waits(&e, err);
    out->thread_s = ns_to_s(e.thread_ns);
    if (!rc)
        rc = emit_waits(&e, err);
    if (!rc)
        rc = find_small_transfers(&e, err);
    if (!rc)
        rc = find_imbalance(&e, err);
    if (!rc)
        rc = find_coven(&e, err);
    if (!rc)
        rc = find_causes(&e, err);
    if (!rc)
        rc = find_hotspots(&e, err);
    if (!rc && n > 1)
        rc = find_scaling(&e, inputs, n, err);
    if (!rc) {
        /* Drop what loses too little to matter, then rank by time lost. */
        size_t kept = 0;
        for (size_t i = 0; i < out->nfindings; i++)
            if (out->findings[i].lost_pct >= t->min_loss_pct)
                out->findings[kept++] = out->findings[i];
            else
                out->dropped++;
        out->nfindings = kept;
        if (out->nfindings) /* qsort's array must not be NULL, even when empty */
            qsort(out->findings, out->nfindings, sizeof *out->findings, compare_finding);
        if (out->nhotspots)
            qsort(out->hotspots, out->nhotspots, sizeof *out->hotspots, compare_hotspot);
    }
    for (size_t i = 0; i < e.nsites; i++)
        free(e.sites[i].waits);
    free(e.sites);
    free(e.get_waits);
    free(e.waiting);
    key_sums_free(&e.thread_samples);
    key_sums_free(&e.thread_waited);
    key_sums_free(&e.rank_samples);
    key_sums_free(&e.rank_waited);
    key_sums_free(&e.machine_by_group);
    key_sums_free(&e.machine_by_region);
    loaded_free(&in);
    if (rc)
        analyze_result_free(out);
    return rc;
}

void analyze_result_free(struct analyze_result *r)
{
    free(r->findings);
    free(r->hotspots);
    *r = (struct analyze_result){0};
}

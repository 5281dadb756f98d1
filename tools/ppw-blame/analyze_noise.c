/* ppw-blame analyze: the waits the machine makes, not the program
 * (analyze_int.h).
 *
 * A thread waits at a barrier, a collective or a blocking message for the
 * last partner to arrive.  The partner can be late because it had more to
 * do (the program's imbalance) or because it was ready but waited for a
 * CPU: on a loaded machine the second dominates (a balanced control
 * waited 0.1 to 0.3 s at its barrier while each thread spent 0.8 s in the
 * run queue).  What a thread did outside its blocking calls, its progress,
 * is at least
 *
 *   - its CPU time outside them: its CPU time, less the share of its
 *     samples taken inside a blocking call (a spinning wait burns CPU);
 *   - its life, less its run-queue wait and its time in blocking calls
 *     (exact when its waits sleep; a spinning wait is in the run queue
 *     too, and counts twice);
 *
 * and the larger of the two bounds is taken.  Partners that start and end
 * together progress equally unless the program gives them different work,
 * so thread t can have waited, through the program's doing, at most
 *
 *     program_wait(t) = max over its partners p of progress(p) - progress(t)
 *
 * and the rest of its waits at such sites is the machine's.  On an idle
 * machine this is each thread's wait less the least waiting partner's, the
 * part that noise spreads evenly; a thread waiting for a partner with 3x
 * the work keeps all of its wait.  The machine's part is at most what it
 * withheld from the partners (their run-queue wait): on an idle machine a
 * wait is the program's, however long.
 *
 * Lock and condition waits are not arrival skew (every contender may wait
 * alike): they wait for another thread's work, a critical section or a
 * producer's, which a machine that gives a ready thread a share `pace` of
 * a CPU stretches by 1 / pace.  Their program part is the wait times the
 * other threads' pace (CPU time over CPU time plus run-queue wait). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"
#include "job.h"
#include "read_graph.h"
#include "ppw/gasp_events.h"

bool arrival_skew_pattern(enum analyze_pattern p)
{
    return p == PATTERN_BARRIER_WAIT || p == PATTERN_COLLECTIVE_WAIT ||
           p == PATTERN_LATE_SENDER || p == PATTERN_LATE_RECEIVER;
}

double thread_runqueue_ns(const struct ppw_run_thread *t)
{
    return t->ended && t->runqueue_ns != PPW_WAIT_UNKNOWN ? (double)t->runqueue_ns : 0;
}

/* Whether op waits for another thread or rank to act. */
static bool waiting_op(uint32_t op)
{
    switch (op) {
    case PPW_OP_GROUP_SYNC:
    case PPW_OP_GROUP_COMM:
    case PPW_OP_SEND:
    case PPW_OP_RECV:
    case PPW_OP_COMM_SYNC:
    case PPW_OP_LOCK_ACQUIRE:
    case PPW_OP_WAIT_ON_VALUE:
    case PPW_OP_ONE_SIDED_SYNC: return true;
    default: return false;
    }
}

/* Whether a call of operation op (tag) waits for others.  MPI_Init and
 * MPI_Finalize wait for the launcher and the other ranks: ranks started
 * apart would otherwise seem to progress apart.  A window's creation and
 * free (and shmem_malloc's and shmem_free's) are collective: a rank that
 * arrives first waits in them for the others, as at a barrier (the lock
 * mode of mpi_rma_heat.c: rank 0, whose lock is local, spun 1.7 s in
 * MPI_Win_free, and read as 2x busier than rank 1). */
static bool waiting_call(uint32_t op, uint32_t tag)
{
    if (op == PPW_OP_INIT || op == PPW_OP_TERM || op == PPW_OP_GLOBAL_ALLOC ||
        op == PPW_OP_GLOBAL_FREE)
        return is_process_comm_tag(tag);
    return waiting_op(op);
}

/* Whether the calls of region g block: they wait, or join. */
static bool blocking_region(const struct ppw_run_region *g)
{
    return g->op == PPW_OP_JOIN || waiting_call(g->op, g->tag);
}

static const char *without_underscores(const char *name)
{
    while (*name == '_')
        name++;
    return name;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether a sampled frame is a waiting call of the GASP table (by name:
 * glibc's symbols add underscores, MPI's and OpenSHMEM's profiling layers
 * a P).  Not joins: a taskwait runs other tasks.  The table has a row per
 * SHMEM variant (about a thousand), so its waiting calls are sorted once
 * and searched. */
static bool blocking_frame(const char *function)
{
    static const struct {
        const char *name;
        uint32_t op, tag;
    } calls[] = {
#define PPW_CALL_ROW(tag, name, op, operands, has_result) {name, op, tag},
        PPW_GASP_CALLS(PPW_CALL_ROW)
#undef PPW_CALL_ROW
    };
    static const char *waiting[sizeof calls / sizeof calls[0]];
    static size_t nwaiting;
    static bool sorted;
    if (!sorted) { /* ppw-blame reads its inputs on one thread */
        for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
            if (waiting_call(calls[i].op, calls[i].tag))
                waiting[nwaiting++] = without_underscores(calls[i].name);
        qsort(waiting, nwaiting, sizeof *waiting, compare_names);
        sorted = true;
    }
    if (!function)
        return false;
    function = without_underscores(function);
    if (strncmp(function, "PMPI_", 5) == 0 || strncmp(function, "pshmem_", 7) == 0)
        function++;
    return bsearch(&function, waiting, nwaiting, sizeof *waiting, compare_names) != NULL;
}

/* Whether a sample was taken waiting: inside a blocking call, not in the
 * program's own code that the call runs (a task inside a barrier). */
static bool waiting_stack(const struct ppw_blame_stack *st, const struct ppw_static_graph *graph)
{
    for (size_t f = 0; f < st->nframes; f++) {
        const char *fn = st->frames[f].function;
        if (blocking_frame(fn))
            return true;
        if (fn && graph && ppw_static_graph_find_func(graph, fn))
            return false;
    }
    return false;
}

/* The samples of the view's stacks, all and those taken inside waiting
 * calls (e->waiting), summed per stack thread id and, in a job, per rank:
 * in the stacks' order, as a pass over them for each id would. */
static int sum_waiting_samples(struct engine *e, struct ppw_err *err)
{
    size_t nstacks;
    const struct ppw_blame_stack *stacks = view_stacks(&e->in->view, &nstacks);
    for (size_t s = 0; s < nstacks; s++) {
        double all = (double)stacks[s].samples, waited = e->waiting[s] ? all : 0;
        uint32_t id = stacks[s].thread, rank = id / PPW_JOB_RANK_SHIFT;
        if (!key_sums_add(&e->thread_samples, id, all) ||
            !key_sums_add(&e->thread_waited, id, waited) ||
            (e->in->job && (!key_sums_add(&e->rank_samples, rank, all) ||
                            !key_sums_add(&e->rank_waited, rank, waited))))
            return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    return 0;
}

/* The share of the samples taken inside waiting calls, of the stacks
 * whose thread id is `id`, or with whole_rank those of rank `id` of a job. */
static double share_waiting(const struct engine *e, uint32_t id, bool whole_rank)
{
    double all = key_sums_get(whole_rank ? &e->rank_samples : &e->thread_samples, id);
    double waited = key_sums_get(whole_rank ? &e->rank_waited : &e->thread_waited, id);
    return all > 0 ? waited / all : 0;
}

/* Thread t's progress (above); id is its stacks' thread id. */
static double progress_ns(const struct engine *e, const struct ppw_run *run,
                          const struct ppw_run_thread *t, uint32_t id)
{
    double cpu_outside = thread_cpu_ns(run, t) * (1 - share_waiting(e, id, false));
    double not_waiting = thread_life_ns(run, t) - thread_runqueue_ns(t) -
                         time_in_regions(run, t, blocking_region);
    return cpu_outside > not_waiting ? cpu_outside : not_waiting;
}

/* A message's waits: their partners are any rank's sends and receives
 * (the waiter of a receive is matched by a sender elsewhere), a barrier's
 * or collective's those at the same site. */
static bool point_to_point(enum analyze_pattern p)
{
    return p == PATTERN_LATE_SENDER || p == PATTERN_LATE_RECEIVER;
}

/* The largest value of partners' waits, and the largest of any other
 * thread's: the largest over the partners but one thread is then a lookup
 * (a pass over the partners for each wait was quadratic in the ranks). */
struct top_two {
    double first, second;  /* the largest, and the largest of another thread than first's */
    size_t first_thread;   /* SIZE_MAX: none yet */
    bool has_second;
};

static void top_two_add(struct top_two *t, double v, size_t thread)
{
    if (t->first_thread == SIZE_MAX) {
        t->first = v;
        t->first_thread = thread;
    } else if (thread == t->first_thread) {
        t->first = v > t->first ? v : t->first;
    } else if (v > t->first) {
        t->second = t->first;
        t->has_second = true;
        t->first = v;
        t->first_thread = thread;
    } else {
        t->second = t->has_second && t->second >= v ? t->second : v;
        t->has_second = true;
    }
}

/* The largest value of a thread other than `thread`; false when none. */
static bool top_two_other(const struct top_two *t, size_t thread, double *v)
{
    if (t->first_thread != SIZE_MAX && t->first_thread != thread) {
        *v = t->first;
        return true;
    }
    *v = t->second;
    return t->has_second;
}

/* What program_shares needs of the partners of a site's waits: the most
 * progress and the most run-queue wait, per thread's number. */
struct partners {
    struct top_two progress, runqueue;
};

static void partners_add(struct partners *p, const struct site_wait *w, size_t thread)
{
    top_two_add(&p->progress, w->progress_ns, thread);
    top_two_add(&p->runqueue, w->runqueue_ns, thread);
}

static const struct partners no_partners = {{0, 0, SIZE_MAX, false}, {0, 0, SIZE_MAX, false}};

/* A wait's thread as one key: its unit and its index in the run. */
static uint64_t wait_thread_key(const struct site_wait *w)
{
    return (uint64_t)w->unit << 32 | w->thread;
}

/* The program's share (0..1) of each of site s's waits.  For each wait w:
 *   ahead    = how much further the furthest partner of another thread
 *              progressed (0 at least);
 *   withheld = the most run-queue wait of such a partner (0 at least);
 *   skew     = w's thread's waits at every arrival-skew site;
 * partners being the waits at s, or for a message the waits at every
 * point-to-point site.  threads numbers the waits' threads, skew_waits
 * holds their sums, p2p the point-to-point sites' partners. */
static void program_shares(const struct site *s, const struct key_index *threads,
                           const double *skew_waits, const struct partners *p2p, double *share)
{
    struct partners own = no_partners;
    const struct partners *partners = point_to_point(s->pattern) ? p2p : &own;
    if (!point_to_point(s->pattern))
        for (size_t k = 0; k < s->nwaits; k++)
            partners_add(&own, &s->waits[k], key_index_find(threads, wait_thread_key(&s->waits[k])));
    for (size_t i = 0; i < s->nwaits; i++) {
        const struct site_wait *w = &s->waits[i];
        size_t thread = key_index_find(threads, wait_thread_key(w));
        double most, ahead = 0, withheld = 0;
        if (top_two_other(&partners->progress, thread, &most)) {
            /* rounding is monotonic: the furthest partner's lead is the
             * largest of the partners' leads, as computed one by one */
            double further = most - w->progress_ns;
            ahead = further > 0 ? further : 0;
        }
        if (top_two_other(&partners->runqueue, thread, &most))
            withheld = most > 0 ? most : 0;
        /* The machine's part is what the program does not explain, up to
         * what the machine withheld from the partners: on an idle machine
         * a message's cost is the program's, however long. */
        double skew = skew_waits[thread];
        double machine = skew - ahead;
        machine = machine < withheld ? machine : withheld;
        share[i] = skew > 0 && machine > 0 ? 1 - machine / skew : 1;
    }
}

/* Numbers the threads of the arrival-skew sites' waits, sums each one's
 * waits there (in the sites' and waits' order, as program_shares summed
 * them wait by wait), and gathers the point-to-point sites' partners. */
static int arrival_skew_threads(const struct engine *e, struct key_index *threads,
                                double **skew_waits, struct partners *p2p, struct ppw_err *err)
{
    size_t cap = 0;
    *skew_waits = NULL;
    *p2p = no_partners;
    for (size_t j = 0; j < e->nsites; j++) {
        const struct site *other = &e->sites[j];
        if (!arrival_skew_pattern(other->pattern))
            continue;
        for (size_t k = 0; k < other->nwaits; k++) {
            const struct site_wait *o = &other->waits[k];
            bool added;
            size_t t = key_index_add(threads, wait_thread_key(o), &added);
            if (t != SIZE_MAX && t >= cap) {
                size_t grown_cap = cap ? 2 * cap : 64;
                double *grown = realloc(*skew_waits, grown_cap * sizeof *grown);
                if (!grown)
                    t = SIZE_MAX;
                else
                    *skew_waits = grown, cap = grown_cap;
            }
            if (t == SIZE_MAX)
                return ppw_err_set(err, PPW_ENOMEM, "out of memory");
            if (added)
                (*skew_waits)[t] = 0;
            (*skew_waits)[t] += o->wait_ns;
            if (point_to_point(other->pattern))
                partners_add(p2p, o, t);
        }
    }
    return 0;
}

static void add_group_wait(struct site *s, double wait, uint32_t group)
{
    for (unsigned i = 0; i < s->groups; i++)
        if (s->group_ids[i] == group) {
            s->group_waits[i] += wait;
            return;
        }
    if (s->groups < SITE_GROUPS) {
        s->group_ids[s->groups] = group;
        s->group_waits[s->groups++] = wait;
    }
}

static bool group_site(const struct site *s)
{
    return s->pattern == PATTERN_BARRIER_WAIT || s->pattern == PATTERN_COLLECTIVE_WAIT;
}

/* The part of w's wait at group site s that stands out from the noise of
 * balanced partners.  Partners with equal work arrive in a random order,
 * and each waits in turn: equal waits in the mean.  So w's thread waited
 * for the program's skew by what it waited beyond the least waiting
 * partner, less 4 standard deviations of that difference (from the calls'
 * own spread: a skew the program makes every call varies little, the
 * order of balanced arrivals a lot).  A balanced control on the idle
 * 2-core VM waited up to 4% of its run this way, one thread more than the
 * other; a 3x imbalance keeps all of its wait. */
static double standing_skew(const struct site *s, const struct site_wait *w,
                            const struct site_wait *least)
{
    if (w->wait_ns <= least->wait_ns) /* w is a least waiting one itself */
        return s->nwaits > 1 ? 0 : w->wait_ns; /* alone, nothing to compare with */
    double skew = w->wait_ns - least->wait_ns -
                  4 * sqrt(w->variance_ns2 + least->variance_ns2);
    return skew > 0 ? skew : 0;
}

/* The first of the site's waits that waited least. */
static const struct site_wait *least_wait(const struct site *s)
{
    const struct site_wait *least = &s->waits[0];
    for (size_t k = 1; k < s->nwaits; k++)
        if (s->waits[k].wait_ns < least->wait_ns)
            least = &s->waits[k];
    return least;
}

/* CPU time over CPU time plus run-queue wait of run's threads but the
 * one at index `skip` (SIZE_MAX: all of them); 1 when nothing ran. */
static double pace_without(const struct ppw_run *run, size_t skip)
{
    double cpu = 0, runqueue = 0;
    for (size_t t = 0; t < run->thread_count; t++)
        if (t != skip) {
            cpu += thread_cpu_ns(run, &run->threads[t]);
            runqueue += thread_runqueue_ns(&run->threads[t]);
        }
    return cpu + runqueue > 0 ? cpu / (cpu + runqueue) : 1;
}

/* The share of a CPU that w's thread's partners got while ready: a lock
 * or condition wait waits for another thread's work (a critical section, a
 * producer), which a loaded machine stretches by 1 / that pace. */
static double others_pace(const struct engine *e, const struct site_wait *w)
{
    return pace_without(e->in->units[w->unit].run, w->thread);
}

int settle_site_waits(struct engine *e, struct ppw_err *err)
{
    size_t nstacks;
    const struct ppw_blame_stack *stacks = view_stacks(&e->in->view, &nstacks);
    bool *waiting = calloc(nstacks ? nstacks : 1, sizeof *waiting);
    if (!waiting)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    for (size_t s = 0; s < nstacks; s++)
        waiting[s] = waiting_stack(&stacks[s], e->in->view.graph);
    e->waiting = waiting;
    int rc = sum_waiting_samples(e, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < e->nsites; i++)
        for (size_t k = 0; k < e->sites[i].nwaits; k++) {
            struct site_wait *w = &e->sites[i].waits[k];
            const struct unit *u = &e->in->units[w->unit];
            const struct ppw_run_thread *t = &u->run->threads[w->thread];
            uint32_t id = e->in->job ? u->rank * PPW_JOB_RANK_SHIFT + t->index : t->index;
            w->progress_ns = progress_ns(e, u->run, t, id);
            w->runqueue_ns = thread_runqueue_ns(t);
        }
    struct key_index threads = {0};
    double *skew_waits = NULL;
    struct partners p2p;
    rc = arrival_skew_threads(e, &threads, &skew_waits, &p2p, err);
    for (size_t i = 0; i < e->nsites && !rc; i++) {
        struct site *s = &e->sites[i];
        double *share = malloc((s->nwaits ? s->nwaits : 1) * sizeof *share);
        if (!share) {
            rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
            break;
        }
        for (size_t k = 0; k < s->nwaits; k++)
            share[k] = 1;
        if (arrival_skew_pattern(s->pattern))
            program_shares(s, &threads, skew_waits, &p2p, share);
        else
            for (size_t k = 0; k < s->nwaits; k++)
                share[k] = others_pace(e, &s->waits[k]);
        s->wait_ns = s->machine_ns = s->noise_ns = 0;
        s->groups = 0;
        const struct site_wait *least = s->nwaits ? least_wait(s) : NULL;
        for (size_t k = 0; k < s->nwaits; k++) {
            struct site_wait *w = &s->waits[k];
            double program = w->wait_ns * share[k];
            w->machine_ns = w->wait_ns - program;
            w->noise_ns = 0;
            if (group_site(s)) {
                double skew = standing_skew(s, w, least);
                w->noise_ns = program > skew ? program - skew : 0;
                program -= w->noise_ns;
            }
            s->wait_ns += program;
            s->machine_ns += w->machine_ns;
            s->noise_ns += w->noise_ns;
            add_group_wait(s, program, w->group);
        }
        free(share);
    }
    key_index_free(&threads);
    free(skew_waits);
    /* The machine's part per group and per region, summed in the sites'
     * and waits' order. */
    for (size_t i = 0; i < e->nsites && !rc; i++)
        for (size_t k = 0; k < e->sites[i].nwaits && !rc; k++) {
            const struct site_wait *w = &e->sites[i].waits[k];
            if (!key_sums_add(&e->machine_by_group, w->group, w->machine_ns) ||
                !key_sums_add(&e->machine_by_region, (uint64_t)(uintptr_t)w->region,
                              w->machine_ns))
                rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
        }
    return rc;
}

double machine_waits_of(const struct engine *e, uint32_t group)
{
    return key_sums_get(&e->machine_by_group, group);
}

double machine_wait_at(const struct engine *e, const struct ppw_run_region *g)
{
    return key_sums_get(&e->machine_by_region, (uint64_t)(uintptr_t)g);
}

double waiting_share(const struct engine *e, uint32_t group)
{
    return share_waiting(e, group, e->in->job);
}

static bool any_join(const struct ppw_run_region *g)
{
    return g->op == PPW_OP_JOIN;
}

static bool pthread_join_region(const struct ppw_run_region *g)
{
    return g->op == PPW_OP_JOIN && g->tag == GASP_PTHREAD_JOIN;
}

double thread_join_ns(const struct ppw_run *run, const struct ppw_run_thread *t, bool pthread_only)
{
    return time_in_regions(run, t, pthread_only ? pthread_join_region : any_join);
}

double run_pace(const struct ppw_run *run)
{
    return pace_without(run, SIZE_MAX);
}

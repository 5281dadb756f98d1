/* ppw-blame analyze: cause analysis in the trace (analyze_int.h): who
 * ended a finding's longest waits, and what that party was running. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"
#include "names.h"
#include "ppw/gasp.h"
#include "read_graph.h"
#include "symbols.h"
#include "ppw/gasp_events.h"

/* ---- 5. cause analysis in the trace ---- */

/* The program function the thread was running most during [from, to] (by
 * its samples there, in run: u's with every sample's time), with its
 * file:line; false when none. */
static bool busy_in(const struct engine *e, const struct unit *u, const struct ppw_run *run,
                    uint32_t thread, uint64_t from, uint64_t to, char *out, size_t size)
{
    const struct ppw_static_graph *graph = e->in->view.graph;
    enum { SLOTS = 16 };
    const struct ppw_static_func *funcs[SLOTS];
    uint64_t counts[SLOTS];
    size_t n = 0;
    for (size_t t = 0; t < run->thread_count; t++) {
        const struct ppw_run_thread *th = &run->threads[t];
        if (!e->in->job && th->index != thread)
            continue;
        for (size_t i = 0; i < th->sample_count; i++) {
            const struct ppw_run_sample *s = &th->samples[i];
            uint64_t at = ppw_run_master_ns(run, s->time_ns);
            if (at < from || at > to)
                continue;
            for (size_t f = 0; f < s->stack->nframes; f++) {
                struct ppw_symbol sym;
                ppw_symbols_frame(u->syms, s->stack->frames, f, s->stack->flags, &sym);
                const struct ppw_static_func *fn =
                    sym.function ? ppw_static_graph_find_func(graph, sym.function) : NULL;
                if (!fn)
                    continue;
                size_t k = 0;
                while (k < n && funcs[k] != fn)
                    k++;
                if (k == n && n < SLOTS) {
                    funcs[n] = fn;
                    counts[n++] = 0;
                }
                if (k < n)
                    counts[k] += s->count;
                break;
            }
        }
    }
    size_t best = SIZE_MAX;
    for (size_t k = 0; k < n; k++)
        if (best == SIZE_MAX || counts[k] > counts[best])
            best = k;
    if (best == SIZE_MAX)
        return false;
    /* as the user knows it: an OpenMP construct's name holds its file and line */
    size_t fi = (size_t)(funcs[best] - graph->funcs);
    const char *name = ppw_names_function(e->in->view.names, fi);
    if (strcmp(name, ppw_names_source(e->in->view.names, fi)) != 0)
        setf(out, size, "%s", name);
    else
        setf(out, size, "%s (%s:%" PRIu32 ")", name,
             funcs[best]->file ? view_basename(funcs[best]->file) : "?", funcs[best]->line);
    return true;
}

struct wait_event {
    const struct unit *unit;
    uint32_t thread;
    uint64_t start, end; /* master clock */
    const uint64_t *args;
    uint16_t nargs;
};

/* The longest START..END pairs of a region like g (same tag, file, line)
 * on any thread of any unit: up to CAUSE_WAITS of them into out, longest
 * first; how many pairs there were in all into *total. */
#define CAUSE_WAITS 64

static int by_length(const void *a, const void *b)
{
    const struct wait_event *x = a, *y = b;
    uint64_t lx = x->end - x->start, ly = y->end - y->start;
    return (lx < ly) - (lx > ly);
}

static size_t longest_waits(const struct engine *e, const struct ppw_run_region *g,
                            struct wait_event out[CAUSE_WAITS], size_t *total)
{
    size_t n = 0;
    *total = 0;
    for (size_t u = 0; u < e->in->nunits; u++) {
        const struct ppw_run *run = e->in->units[u].run;
        for (size_t t = 0; t < run->thread_count; t++) {
            const struct ppw_run_thread *th = &run->threads[t];
            const struct ppw_run_trace *start = NULL;
            for (size_t i = 0; i < th->trace_count; i++) {
                const struct ppw_run_trace *ev = &th->traces[i];
                const struct ppw_run_region *r = ev->region;
                if (r->tag != g->tag || r->line != g->line ||
                    strcmp(r->file ? r->file : "", g->file ? g->file : "") != 0)
                    continue;
                if (ev->evttype == GASP_START) {
                    start = ev;
                    continue;
                }
                if (ev->evttype != GASP_END || !start)
                    continue;
                struct wait_event w = {&e->in->units[u], th->index,
                                       ppw_run_master_ns(run, start->time_ns),
                                       ppw_run_master_ns(run, ev->time_ns), start->args,
                                       start->nargs};
                start = NULL;
                if (w.end < w.start)
                    continue;
                ++*total;
                /* keep the CAUSE_WAITS longest: replace the shortest kept */
                if (n < CAUSE_WAITS) {
                    out[n++] = w;
                } else {
                    size_t k = 0;
                    for (size_t m = 1; m < n; m++)
                        if (out[m].end - out[m].start < out[k].end - out[k].start)
                            k = m;
                    if (w.end - w.start > out[k].end - out[k].start)
                        out[k] = w;
                }
            }
        }
    }
    qsort(out, n, sizeof *out, by_length);
    return n;
}

/* The last arrival at the same operation during the wait: another thread's
 * (or rank's) START of a region like g inside (w.start, w.end]. */
static bool last_arrival(const struct engine *e, const struct ppw_run_region *g,
                         const struct wait_event *w, const struct unit **unit, uint32_t *thread,
                         uint64_t *at)
{
    bool found = false;
    for (size_t u = 0; u < e->in->nunits; u++) {
        const struct ppw_run *run = e->in->units[u].run;
        for (size_t t = 0; t < run->thread_count; t++) {
            const struct ppw_run_thread *th = &run->threads[t];
            if (&e->in->units[u] == w->unit && th->index == w->thread)
                continue;
            for (size_t i = 0; i < th->trace_count; i++) {
                const struct ppw_run_trace *ev = &th->traces[i];
                if (ev->evttype != GASP_START || ev->region->tag != g->tag)
                    continue;
                uint64_t s = ppw_run_master_ns(run, ev->time_ns);
                if (s > w->start && s <= w->end && (!found || s > *at)) {
                    *unit = &e->in->units[u];
                    *thread = th->index;
                    *at = s;
                    found = true;
                }
            }
        }
    }
    return found;
}

/* Who let a lock or condition wait end: on another thread, the last
 * START of an operation of kind op (the unlock, the signal) on the same
 * object (the first operand, an address) inside the wait. */
static bool releaser(const struct wait_event *w, uint32_t op, const struct unit **unit,
                     uint32_t *thread, uint64_t *at)
{
    if (w->nargs < 1)
        return false;
    bool found = false;
    const struct ppw_run *run = w->unit->run;
    for (size_t t = 0; t < run->thread_count; t++) {
        const struct ppw_run_thread *th = &run->threads[t];
        if (th->index == w->thread)
            continue;
        for (size_t i = 0; i < th->trace_count; i++) {
            const struct ppw_run_trace *ev = &th->traces[i];
            if (ev->evttype != GASP_START || ev->region->op != op || ev->nargs < 1 ||
                ev->args[0] != w->args[0])
                continue;
            uint64_t s = ppw_run_master_ns(run, ev->time_ns);
            if (s > w->start && s <= w->end && (!found || s > *at)) {
                *unit = w->unit;
                *thread = th->index;
                *at = s;
                found = true;
            }
        }
    }
    return found;
}

/* The other side of a point-to-point wait: on the rank named by the
 * waiting call's peer operand (args: count, type, peer, tag, comm), the
 * START of the matching operation (op: a send for a receive, a receive for
 * a send) with the same tag, inside the wait. */
static bool late_peer(const struct engine *e, const struct wait_event *w, uint32_t op,
                      const struct unit **unit, uint64_t *at)
{
    if (w->nargs < 4)
        return false;
    uint32_t peer = (uint32_t)w->args[2];
    uint64_t tag = w->args[3];
    for (size_t u = 0; u < e->in->nunits; u++) {
        if (e->in->units[u].rank != peer)
            continue;
        const struct ppw_run *run = e->in->units[u].run;
        for (size_t t = 0; t < run->thread_count; t++) {
            const struct ppw_run_thread *th = &run->threads[t];
            for (size_t i = 0; i < th->trace_count; i++) {
                const struct ppw_run_trace *ev = &th->traces[i];
                if (ev->evttype != GASP_START || ev->region->op != op || ev->nargs < 4 ||
                    ev->args[2] != w->unit->rank || ev->args[3] != tag)
                    continue;
                uint64_t s = ppw_run_master_ns(run, ev->time_ns);
                if (s >= w->start && s <= w->end) {
                    *unit = &e->in->units[u];
                    *at = s;
                    return true;
                }
            }
        }
    }
    return false;
}

/* What ended wait w of a site of pattern p: the party (unit, thread), when
 * it did so, and the verb for it. */
static bool ending_party(const struct engine *e, enum analyze_pattern p,
                         const struct ppw_run_region *g, const struct wait_event *w,
                         const struct unit **unit, uint32_t *thread, uint64_t *at,
                         const char **verb)
{
    *verb = "arrived";
    *thread = 0;
    switch (p) {
    case PATTERN_LATE_SENDER: return late_peer(e, w, PPW_OP_SEND, unit, at);
    case PATTERN_LATE_RECEIVER: return late_peer(e, w, PPW_OP_RECV, unit, at);
    case PATTERN_LOCK_CONTENTION: /* the holder: who unlocked it last before the wait ended */
        *verb = "released it";
        return releaser(w, PPW_OP_LOCK_RELEASE, unit, thread, at);
    case PATTERN_CONDITION_WAIT:
        *verb = "signalled it";
        return releaser(w, PPW_OP_SIGNAL_VALUE, unit, thread, at);
    case PATTERN_BARRIER_WAIT:
    case PATTERN_COLLECTIVE_WAIT: return last_arrival(e, g, w, unit, thread, at);
    default: return false;
    }
}

/* A party that ended waits, and the longest of them. */
struct party {
    const struct unit *unit;
    uint32_t thread;
    unsigned waits;
    double ns;
    struct wait_event longest;
    uint64_t at;
};

/* A finding's cause, found before it is written: the party that ended most
 * of the site's longest waits. */
struct cause {
    struct analyze_finding *finding;
    struct party party;
    size_t nwaits, total;
    double waited;
    const char *verb;
};

/* By the party's unit, so that each merged rank is read once. */
static int compare_cause_unit(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct cause *)a)->party.unit;
    uintptr_t y = (uintptr_t)((const struct cause *)b)->party.unit;
    return (x > y) - (x < y);
}

/* Fills c with site s's cause; false when no wait has a party. */
static bool cause_of(struct engine *e, const struct site *s, struct cause *c)
{
    /* The longest waits, each charged to the party that ended it: the one
     * that ended most of the waiting is the cause, not whoever ended a
     * single outlier. */
    struct wait_event waits[CAUSE_WAITS];
    struct party parties[CAUSE_WAITS];
    size_t nparties = 0;
    c->nwaits = longest_waits(e, s->region, waits, &c->total);
    c->waited = 0;
    c->verb = "arrived";
    for (size_t k = 0; k < c->nwaits; k++) {
        const struct wait_event *w = &waits[k];
        const struct unit *unit = NULL;
        uint32_t thread = 0;
        uint64_t at = 0;
        if (!ending_party(e, s->pattern, s->region, w, &unit, &thread, &at, &c->verb))
            continue;
        double ns = (double)(w->end - w->start);
        c->waited += ns;
        size_t m = 0;
        while (m < nparties && !(parties[m].unit == unit && parties[m].thread == thread))
            m++;
        if (m == nparties) /* waits are longest first: this is the party's longest */
            parties[nparties++] = (struct party){unit, thread, 0, 0, *w, at};
        parties[m].waits++;
        parties[m].ns += ns;
    }
    if (!nparties)
        return false;
    size_t top = 0;
    for (size_t m = 1; m < nparties; m++)
        top = parties[m].ns > parties[top].ns ? m : top;
    c->party = parties[top];
    return true;
}

int find_causes(struct engine *e, struct ppw_err *err)
{
    if (!e->out->has_trace || !e->nsites)
        return 0;
    struct cause *causes = malloc(e->nsites * sizeof *causes);
    if (!causes)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    size_t ncauses = 0;
    for (size_t i = 0; i < e->nsites; i++) {
        const struct site *s = &e->sites[i];
        struct analyze_finding *f = NULL;
        for (size_t k = 0; k < e->out->nfindings && !f; k++)
            if (e->out->findings[k].pattern == s->pattern &&
                e->out->findings[k].line == s->region->line &&
                strcmp(e->out->findings[k].file, s->region->file ? s->region->file : "") == 0)
                f = &e->out->findings[k];
        if (f && cause_of(e, s, &causes[ncauses]))
            causes[ncauses++].finding = f;
    }
    if (ncauses)
        qsort(causes, ncauses, sizeof *causes, compare_cause_unit);
    const char *group = e->in->job ? "rank" : "thread";
    /* A merged rank has no sample times: the party's rank is read again
     * whole, once for all the findings it causes (without it the cause is
     * given, not what the party was doing). */
    struct ppw_run *timed = NULL; /* stays NULL when the rank cannot be read */
    const struct unit *timed_unit = NULL;
    for (size_t i = 0; i < ncauses; i++) {
        const struct cause *cause = &causes[i];
        const struct party *c = &cause->party;
        const struct wait_event *w = &c->longest;
        char doing[200] = "";
        if (c->unit->merged && c->unit != timed_unit) {
            struct ppw_err read_err;
            ppw_run_free(timed);
            timed = NULL;
            timed_unit = c->unit;
            ppw_run_load(c->unit->run->dir, &timed, &read_err);
        }
        const struct ppw_run *samples_run = c->unit->merged ? timed : c->unit->run;
        bool busy = samples_run && busy_in(e, c->unit, samples_run, c->thread, w->start, c->at,
                                           doing, sizeof doing);
        uint32_t who = e->in->job ? c->unit->rank : c->thread;
        uint32_t waiter = e->in->job ? w->unit->rank : w->thread;
        setf(cause->finding->cause, sizeof cause->finding->cause,
             "trace: %s %" PRIu32 " ended %u of the %zu longest waits (%.0f%% of their time; "
             "%zu waits in all); in the longest of them (%s %" PRIu32 ", %.3f ms) %s %" PRIu32
             " %s %.3f ms after it began%s%s",
             group, who, c->waits, cause->nwaits,
             cause->waited > 0 ? 100 * c->ns / cause->waited : 0, cause->total, group, waiter,
             (double)(w->end - w->start) / 1e6, group, who, cause->verb,
             (double)(c->at - w->start) / 1e6, busy ? "; it was busy in " : "",
             busy ? doing : "");
    }
    ppw_run_free(timed);
    free(causes);
    return 0;
}

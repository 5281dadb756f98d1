/* ppw-blame analyze: cause analysis in the trace (analyze_int.h): what
 * ended the longest wait of a finding, and what that party was running. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyze_int.h"
#include "ppw/gasp.h"
#include "read_graph.h"
#include "symbols.h"
#include "ppw/gasp_events.h"

/* ---- 5. cause analysis in the trace ---- */

/* The program function the thread was running most during [from, to] (by
 * its samples there), with its file:line; false when none. */
static bool busy_in(const struct engine *e, const struct unit *u, uint32_t thread, uint64_t from,
                    uint64_t to, char *out, size_t size)
{
    const struct ppw_run *run = u->run;
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
    setf(out, size, "%s (%s:%" PRIu32 ")", funcs[best]->name,
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

/* The longest START..END pair of a region like g (same tag, file, line) on
 * any thread of any unit. */
static bool longest_wait(const struct engine *e, const struct ppw_run_region *g,
                         struct wait_event *out)
{
    bool found = false;
    for (size_t u = 0; u < e->in->nunits; u++) {
        const struct ppw_run *run = e->in->units[u].run;
        for (size_t t = 0; t < run->thread_count; t++) {
            const struct ppw_run_thread *th = &run->threads[t];
            uint64_t open = 0;
            const struct ppw_run_trace *start = NULL;
            for (size_t i = 0; i < th->trace_count; i++) {
                const struct ppw_run_trace *ev = &th->traces[i];
                const struct ppw_run_region *r = ev->region;
                if (r->tag != g->tag || r->line != g->line ||
                    strcmp(r->file ? r->file : "", g->file ? g->file : "") != 0)
                    continue;
                if (ev->evttype == GASP_START) {
                    open = ev->time_ns;
                    start = ev;
                } else if (ev->evttype == GASP_END && start) {
                    uint64_t s = ppw_run_master_ns(run, open), en = ppw_run_master_ns(run, ev->time_ns);
                    if (!found || en - s > out->end - out->start) {
                        *out = (struct wait_event){&e->in->units[u], th->index, s, en,
                                                   start->args, start->nargs};
                        found = true;
                    }
                    start = NULL;
                }
            }
        }
    }
    return found;
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

void find_causes(struct engine *e)
{
    if (!e->out->has_trace)
        return;
    for (size_t i = 0; i < e->nsites; i++) {
        const struct site *s = &e->sites[i];
        struct analyze_finding *f = NULL;
        for (size_t k = 0; k < e->out->nfindings && !f; k++)
            if (e->out->findings[k].pattern == s->pattern &&
                e->out->findings[k].line == s->region->line &&
                strcmp(e->out->findings[k].file, s->region->file ? s->region->file : "") == 0)
                f = &e->out->findings[k];
        struct wait_event w = {0};
        if (!f || !longest_wait(e, s->region, &w))
            continue;
        const struct unit *late = NULL;
        uint32_t thread = 0;
        uint64_t at = 0;
        bool ok = false;
        if (s->pattern == PATTERN_LATE_SENDER) {
            ok = late_peer(e, &w, PPW_OP_SEND, &late, &at);
        } else if (s->pattern == PATTERN_LATE_RECEIVER) {
            ok = late_peer(e, &w, PPW_OP_RECV, &late, &at);
        } else if (s->pattern == PATTERN_BARRIER_WAIT || s->pattern == PATTERN_COLLECTIVE_WAIT ||
                   s->pattern == PATTERN_LOCK_CONTENTION || s->pattern == PATTERN_CONDITION_WAIT) {
            /* A lock or condition: the other party's next operation on the
             * same object; a barrier or collective: the last to arrive. */
            ok = last_arrival(e, s->region, &w, &late, &thread, &at);
        }
        if (!ok)
            continue;
        char doing[200] = "";
        bool busy = busy_in(e, late, thread, w.start, at, doing, sizeof doing);
        const char *group = e->in->job ? "rank" : "thread";
        uint32_t who = e->in->job ? late->rank : thread;
        uint32_t waiter = e->in->job ? w.unit->rank : w.thread;
        setf(f->cause, sizeof f->cause,
             "trace: the longest wait (%s %" PRIu32 ", %.3f ms) ended when %s %" PRIu32
             " arrived %.3f ms after it began%s%s",
             group, waiter, (double)(w.end - w.start) / 1e6, group, who,
             (double)(at - w.start) / 1e6, busy ? "; it was busy in " : "", busy ? doing : "");
    }
}

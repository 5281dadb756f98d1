/* ppw-blame analyze: load imbalance at three levels (threads or ranks,
 * the most uneven function, the most uneven variable) and Coven's
 * busy-fraction rule (analyze_int.h). */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"
#include "names.h"
#include "attribute.h"
#include "job.h"
#include "read_graph.h"
#include "strmap.h"
#include "symbols.h"
#include "ppw/gasp_events.h"

/* ---- 3. imbalance at three levels: groups, region, variable ---- */

/* Where a thread that is idle much of its life runs: its start routine
 * (the program's function, with its file and line from the static graph);
 * the main thread's is main. */
static void idle_thread_where(const struct engine *e, uint32_t index, struct analyze_finding *f)
{
    const struct unit *u = &e->in->units[0];
    const struct ppw_run_thread *th = ppw_run_find_thread(u->run, index);
    const char *name = NULL;
    struct ppw_symbol sym = {0};
    if (th && th->start_routine && u->syms) {
        ppw_symbols_lookup(u->syms, th->start_routine, true, &sym); /* an entry, not a return */
        name = sym.function;
    } else if (th && th->parent == UINT32_MAX) {
        name = "main";
    }
    if (!name)
        return;
    setf(f->region, sizeof f->region, "%s (thread %" PRIu32 ")", name, index);
    const struct ppw_static_func *fn =
        e->in->has_view ? ppw_static_graph_find_func(e->in->view.graph, name) : NULL;
    if (fn) {
        setf(f->file, sizeof f->file, "%s", fn->file ? fn->file : "");
        f->line = fn->line;
    }
}


/* Whether thread t spent most of its life waiting in joins (pthread_join,
 * taskwait): a parent waiting for its workers, not a worker. */
static bool joins_most(const struct ppw_run *run, const struct ppw_run_thread *t, double life)
{
    return life > 0 && thread_join_ns(run, t, false) >= 0.5 * life;
}

/* The groups compared: ranks of a job, else the threads that did at least
 * 5% of the busiest one's work and did not spend most of their life in a
 * join (a main thread waiting for its workers, or a library's helper
 * thread, is not a worker). */
struct group_load *collect_groups(const struct loaded *in, size_t *count)
{
    size_t n = 0, most = in->job ? in->nunits : in->units[0].run->thread_count;
    struct group_load *g = malloc((most ? most : 1) * sizeof *g);
    *count = 0;
    if (!g)
        return NULL;
    if (in->job) {
        for (size_t u = 0; u < in->nunits; u++) {
            const struct ppw_run *run = in->units[u].run;
            double cpu = 0;
            for (size_t t = 0; t < run->thread_count; t++)
                cpu += thread_cpu_ns(run, &run->threads[t]);
            g[n++] = (struct group_load){in->units[u].rank, cpu, run_wall_ns(run), 0, 0};
        }
        *count = n;
        return g;
    }
    const struct ppw_run *run = in->units[0].run;
    double top = 0;
    for (size_t t = 0; t < run->thread_count; t++) {
        double cpu = thread_cpu_ns(run, &run->threads[t]);
        top = cpu > top ? cpu : top;
    }
    for (size_t t = 0; t < run->thread_count; t++) {
        const struct ppw_run_thread *th = &run->threads[t];
        double cpu = thread_cpu_ns(run, th), life = thread_life_ns(run, th);
        if (cpu < 0.05 * top || cpu <= 0 || joins_most(run, th, life))
            continue;
        double runqueue = thread_runqueue_ns(th);
        g[n++] = (struct group_load){th->index, cpu, life, runqueue < life ? runqueue : 0, 0};
    }
    *count = n;
    return g;
}

/* Each stack's group: the index of the first group whose id is the
 * stack's thread (its rank in a job), or SIZE_MAX; looked up once, not
 * by a pass over the groups per stack and function.  NULL when out of
 * memory. */
static size_t *stack_groups(const struct loaded *in, const struct group_load *g, size_t n,
                            const struct ppw_blame_stack *stacks, size_t nstacks)
{
    struct key_index ids = {0};
    size_t *first = malloc((n ? n : 1) * sizeof *first); /* by the ids' numbers */
    size_t *of = malloc((nstacks ? nstacks : 1) * sizeof *of);
    bool ok = first && of;
    for (size_t i = 0; ok && i < n; i++) {
        bool added;
        size_t k = key_index_add(&ids, g[i].id, &added);
        ok = k != SIZE_MAX;
        if (ok && added)
            first[k] = i;
    }
    for (size_t s = 0; ok && s < nstacks; s++) {
        uint32_t id = in->job ? stacks[s].thread / PPW_JOB_RANK_SHIFT : stacks[s].thread;
        size_t k = key_index_find(&ids, id);
        of[s] = k == SIZE_MAX ? SIZE_MAX : first[k];
    }
    key_index_free(&ids);
    free(first);
    if (!ok) {
        free(of);
        return NULL;
    }
    return of;
}

static int compare_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

/* A (function, stack) pair: the stack has a frame of the function. */
struct func_stack {
    size_t func, stack;
};

/* The (function, stack) pairs of the stacks that have a group, each once,
 * by function and then stack (the order the per-function passes over the
 * stacks took); main is left out.  False when out of memory. */
static bool function_stacks(const struct ppw_static_graph *graph,
                            const struct ppw_blame_stack *stacks, size_t nstacks,
                            const size_t *group_of, struct func_stack **out, size_t *npairs)
{
    size_t nfuncs = graph->func_count, n = 0, cap = 0;
    struct ppw_strmultimap by_name = {0};
    struct func_stack *pairs = NULL, *sorted = NULL;
    size_t *last = malloc((nfuncs ? nfuncs : 1) * sizeof *last); /* the last stack added */
    size_t *start = calloc(nfuncs + 1, sizeof *start);
    bool ok = last && start;
    /* A name matches a function by its source or linkage name
     * (ppw_static_func_matches); "" is no key, and matches by a scan. */
    for (size_t fi = 0; ok && fi < nfuncs; fi++) {
        last[fi] = SIZE_MAX;
        ok = ppw_strmultimap_add(&by_name, graph->funcs[fi].name, fi) &&
             ppw_strmultimap_add(&by_name, graph->funcs[fi].linkage_name, fi);
    }
    for (size_t s = 0; ok && s < nstacks; s++) {
        if (group_of[s] == SIZE_MAX)
            continue;
        for (size_t f = 0; ok && f < stacks[s].nframes; f++) {
            const char *name = stacks[s].frames[f].function;
            if (!name)
                continue;
            const struct ppw_strmultimap_list *list = ppw_strmultimap_find(&by_name, name);
            size_t count = name[0] ? (list ? list->count : 0) : nfuncs;
            for (size_t m = 0; ok && m < count; m++) {
                size_t fi = name[0] ? (size_t)list->items[m] : m;
                const struct ppw_static_func *fn = &graph->funcs[fi];
                if (last[fi] == s || strcmp(fn->name, "main") == 0 ||
                    (!name[0] && !ppw_static_func_matches(fn, name)))
                    continue; /* everything is under main */
                last[fi] = s;
                if (n == cap) {
                    cap = cap ? 2 * cap : 1024;
                    struct func_stack *grown = realloc(pairs, cap * sizeof *grown);
                    if (!(ok = grown != NULL))
                        break;
                    pairs = grown;
                }
                pairs[n++] = (struct func_stack){fi, s};
                start[fi + 1]++;
            }
        }
    }
    /* By function, stacks in order within each: a counting sort. */
    if (ok && n && (sorted = malloc(n * sizeof *sorted)) != NULL) {
        for (size_t fi = 0; fi < nfuncs; fi++)
            start[fi + 1] += start[fi];
        for (size_t i = 0; i < n; i++)
            sorted[start[pairs[i].func]++] = pairs[i];
    }
    ok = ok && (!n || sorted);
    ppw_strmultimap_free(&by_name);
    free(last);
    free(start);
    free(pairs);
    *npairs = ok ? n : 0;
    *out = ok ? sorted : NULL;
    return ok;
}

/* The program function whose inclusive weight is most unevenly spread over
 * the groups (largest excess max - mean among those above the deviation). */
static int uneven_function(const struct engine *e, size_t n, const size_t *group_of, char *out,
                           size_t size, double *ratio, struct ppw_err *err)
{
    size_t nstacks;
    const struct ppw_blame_stack *stacks = view_stacks(&e->in->view, &nstacks);
    const struct ppw_static_graph *graph = e->in->view.graph;
    out[0] = 0;
    *ratio = 0;
    double best = 0;
    size_t npairs;
    struct func_stack *pairs = NULL;
    double *per = calloc(n ? n : 1, sizeof *per);
    size_t *touched = malloc((n ? n : 1) * sizeof *touched); /* the groups per[] holds */
    size_t *mark = malloc((n ? n : 1) * sizeof *mark);       /* the function that touched it */
    if (!per || !touched || !mark ||
        !function_stacks(graph, stacks, nstacks, group_of, &pairs, &npairs)) {
        free(per);
        free(touched);
        free(mark);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    for (size_t gi = 0; gi < n; gi++)
        mark[gi] = SIZE_MAX;
    /* One function's pairs at a time: its weight per group, then the
     * groups it reached in the groups' order (the others hold 0). */
    for (size_t i = 0; i < npairs;) {
        size_t fi = pairs[i].func, ntouched = 0;
        for (; i < npairs && pairs[i].func == fi; i++) {
            size_t gi = group_of[pairs[i].stack];
            if (mark[gi] != fi) {
                mark[gi] = fi;
                touched[ntouched++] = gi;
            }
            per[gi] += stacks[pairs[i].stack].weight;
        }
        qsort(touched, ntouched, sizeof *touched, compare_size);
        double sum = 0, max = 0;
        for (size_t k = 0; k < ntouched; k++) {
            sum += per[touched[k]];
            max = per[touched[k]] > max ? per[touched[k]] : max;
            per[touched[k]] = 0;
        }
        double mean = sum / (double)n;
        if (mean > 0 && max / mean >= e->t->deviation && max - mean > best) {
            best = max - mean;
            *ratio = max / mean;
            setf(out, size, "%s", ppw_names_function(e->in->view.names, fi));
        }
    }
    free(pairs);
    free(per);
    free(touched);
    free(mark);
    return 0;
}

/* The variable whose inclusive blame is most unevenly spread over the
 * groups: each group's stacks attributed on their own. */
static int uneven_variable(const struct engine *e, size_t n, const size_t *group_of, char *out,
                           size_t size, double *ratio, struct ppw_err *err)
{
    size_t nstacks;
    const struct ppw_blame_stack *stacks = view_stacks(&e->in->view, &nstacks);
    out[0] = 0;
    *ratio = 0;
    struct ppw_blame_options bo = {0};
    struct ppw_blame_result *all = NULL;
    int rc = ppw_blame_attribute(e->in->view.graph, stacks, nstacks, &bo, &all, err);
    if (rc)
        return rc;
    size_t top = all->nvars < 8 ? all->nvars : 8;
    double *per = calloc((top ? top : 1) * (n ? n : 1), sizeof *per);
    struct ppw_blame_stack *mine = malloc((nstacks ? nstacks : 1) * sizeof *mine);
    /* The stacks by group, in their order within each: a counting sort
     * (a pass over all stacks per group was quadratic in the ranks). */
    size_t *start = calloc(n + 1, sizeof *start);
    if (!per || !mine || !start)
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    for (size_t s = 0; !rc && s < nstacks; s++)
        if (group_of[s] != SIZE_MAX)
            start[group_of[s] + 1]++;
    for (size_t gi = 0; !rc && gi < n; gi++)
        start[gi + 1] += start[gi];
    for (size_t s = 0; !rc && s < nstacks; s++)
        if (group_of[s] != SIZE_MAX)
            mine[start[group_of[s]]++] = stacks[s];
    /* start[gi] is now where group gi + 1 begins */
    for (size_t gi = 0; gi < n && !rc; gi++) {
        size_t from = gi ? start[gi - 1] : 0, m = start[gi] - from;
        struct ppw_blame_result *r = NULL;
        if (!m)
            continue;
        if ((rc = ppw_blame_attribute(e->in->view.graph, mine + from, m, &bo, &r, err)) != 0)
            break;
        for (size_t v = 0; v < top; v++)
            for (size_t k = 0; k < r->nvars; k++)
                if (strcmp(all->vars[v].name, r->vars[k].name) == 0 &&
                    strcmp(all->vars[v].kind, r->vars[k].kind) == 0 &&
                    strcmp(all->vars[v].function_key ? all->vars[v].function_key : "",
                           r->vars[k].function_key ? r->vars[k].function_key : "") == 0) {
                    per[v * n + gi] = r->vars[k].inclusive_weight;
                    break;
                }
        ppw_blame_result_free(r);
    }
    double best = 0;
    for (size_t v = 0; v < top && !rc; v++) {
        double sum = 0, max = 0;
        for (size_t gi = 0; gi < n; gi++) {
            sum += per[v * n + gi];
            max = per[v * n + gi] > max ? per[v * n + gi] : max;
        }
        double mean = sum / (double)n;
        /* Over the mean, not the top variable's share: the most uneven. */
        if (mean > 0 && max / mean >= e->t->deviation && max - mean > best * 1.05) {
            best = max - mean;
            *ratio = max / mean;
            setf(out, size, "%s%s%s", all->vars[v].name, all->vars[v].function ? "@" : "",
                 all->vars[v].function ? all->vars[v].function : "");
        }
    }
    free(per);
    free(mine);
    free(start);
    ppw_blame_result_free(all);
    return rc;
}

/* The part of a thread's life it could run: not waiting for a CPU, nor
 * for partners that were (settle_site_waits). */
static double could_run_ns(const struct group_load *g)
{
    return g->life_ns - g->runqueue_ns - g->machine_wait_ns;
}

/* CPU time over the time the thread could run. */
static double busy_fraction(const struct group_load *g)
{
    double could_run = could_run_ns(g);
    double frac = could_run > 0 ? g->cpu_ns / could_run : 0;
    return frac > 1 ? 1 : frac;
}

/* Whether a one-sided synchronization waits for other ranks to arrive (a
 * fence, a PSCW epoch's start or wait), so that uneven work makes it wait;
 * a flush or quiet waits for the rank's own transfers. */
static bool waits_for_ranks(const char *region)
{
    return !strcmp(region, "MPI_Win_fence") || !strcmp(region, "MPI_Win_start") ||
           !strcmp(region, "MPI_Win_wait");
}

int find_imbalance(struct engine *e, struct ppw_err *err)
{
    size_t n;
    struct group_load *g = collect_groups(e->in, &n);
    if (!g)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    e->out->groups = (unsigned)n;
    /* Work is CPU time outside waiting calls: a rank spinning in MPI_Recv
     * for a late sender burns CPU without working (under load one sender
     * spun 0.68 s against its receiver's 0.22 s, for the same work). */
    for (size_t i = 0; i < n; i++)
        g[i].cpu_ns *= 1 - waiting_share(e, g[i].id);
    int rc = 0;
    double sum = 0, max = 0, lost = 0;
    size_t imax = 0, imin = 0;
    for (size_t i = 0; i < n; i++) {
        sum += g[i].cpu_ns;
        if (g[i].cpu_ns > max) {
            max = g[i].cpu_ns;
            imax = i;
        }
        if (g[i].cpu_ns < g[imin].cpu_ns)
            imin = i;
    }
    for (size_t i = 0; i < n; i++)
        lost += max - g[i].cpu_ns;
    double mean = n ? sum / (double)n : 0;
    const char *group = e->in->job ? "rank" : "thread";
    /* The waits found so far already count this time: at barriers and
     * collectives, and a consumer idle on a condition or a lock (cond.c's
     * consumer, whose condition wait the imbalance outranked under load,
     * where the wait is taken at the machine's pace and CPU time is not).
     * So does the machine's part of those waits (the partner was ready,
     * but had no CPU): the waiter's CPU time lacks it, yet it is no work
     * the partner did (a fence wait that the imbalance made led, or
     * trailed, the imbalance by that part alone). */
    double sync = explained_waits(e) + e->waits_machine_ns;
    char function[128] = "", variable[128] = "";
    double fratio = 0, vratio = 0;
    if (n >= 2 && mean > 0 && max / mean >= e->t->deviation) {
        size_t nstacks;
        const struct ppw_blame_stack *stacks = view_stacks(&e->in->view, &nstacks);
        size_t *group_of = stack_groups(e->in, g, n, stacks, nstacks);
        rc = group_of ? 0 : ppw_err_set(err, PPW_ENOMEM, "out of memory");
        if (!rc)
            rc = uneven_function(e, n, group_of, function, sizeof function, &fratio, err);
        if (!rc)
            rc = uneven_variable(e, n, group_of, variable, sizeof variable, &vratio, err);
        free(group_of);
        double own = lost - sync;
        char cause[384];
        setf(cause, sizeof cause,
             "load imbalance: %s %" PRIu32 " is busy %.2fx the mean of %zu %ss%s%s%s%s",
             group, g[imax].id, max / mean, n, group, function[0] ? ", in " : "", function,
             variable[0] ? ", on " : "", variable);
        /* Attach the imbalance to the waits it causes. */
        for (size_t i = 0; i < e->out->nfindings; i++) {
            struct analyze_finding *f = &e->out->findings[i];
            if ((f->pattern == PATTERN_BARRIER_WAIT || f->pattern == PATTERN_COLLECTIVE_WAIT ||
                 (f->pattern == PATTERN_ONE_SIDED_SYNC && waits_for_ranks(f->region))) &&
                !f->cause[0])
                setf(f->cause, sizeof f->cause, "%s", cause);
        }
        if (!rc && own > 0) {
            struct analyze_finding *f = new_finding(e, PATTERN_IMBALANCE, own, err);
            if (!f) {
                free(g);
                return PPW_ENOMEM;
            }
            e->explained_ns[PATTERN_IMBALANCE] += own;
            setf(f->region, sizeof f->region, "%s", function);
            setf(f->variable, sizeof f->variable, "%s", variable);
            const struct ppw_static_func *fn =
                function[0] ? ppw_static_graph_find_func(e->in->view.graph, function) : NULL;
            if (fn) {
                setf(f->file, sizeof f->file, "%s", fn->file ? fn->file : "");
                f->line = fn->line;
            }
            setf(f->evidence, sizeof f->evidence,
                 "%ss: %s %" PRIu32 " busy %.3f s, %s %" PRIu32 " %.3f s, mean %.3f s "
                 "(max/avg %.2f, min/avg %.2f); region %s max/avg %.2f; variable %s max/avg "
                 "%.2f",
                 group, group, g[imax].id, ns_to_s(max), group, g[imin].id,
                 ns_to_s(g[imin].cpu_ns), ns_to_s(mean), max / mean, g[imin].cpu_ns / mean,
                 function[0] ? function : "-", fratio, variable[0] ? variable : "-", vratio);
        }
    }
    /* Coven: busy fractions of the threads, CPU over the part of their life
     * the machine let them run: a thread ready but waiting for a CPU is not
     * idle (on a loaded machine, solvers busy all their life came out 40%
     * busy, like the thread that sleeps half its life). */
    if (!rc && !e->in->job && n >= 2) {
        for (size_t i = 0; i < n; i++) {
            double machine = machine_waits_of(e, g[i].id);
            double room = g[i].life_ns - g[i].runqueue_ns;
            g[i].machine_wait_ns = machine < room ? machine : 0;
        }
        double fmax = 0, fmin = 1, idle = 0;
        size_t jmax = 0, jmin = 0;
        for (size_t i = 0; i < n; i++) {
            double frac = busy_fraction(&g[i]);
            if (frac > fmax) {
                fmax = frac;
                jmax = i;
            }
            if (frac < fmin) {
                fmin = frac;
                jmin = i;
            }
        }
        for (size_t i = 0; i < n; i++)
            idle += (fmax - busy_fraction(&g[i])) * could_run_ns(&g[i]);
        double own = idle - explained_waits(e);
        if (100 * (fmax - fmin) > e->t->busy_diff_pct && own > 0) {
            struct analyze_finding *f = new_finding(e, PATTERN_BUSY_DIFFERENCE, own, err);
            if (!f) {
                free(g);
                return PPW_ENOMEM;
            }
            e->explained_ns[PATTERN_BUSY_DIFFERENCE] += own;
            idle_thread_where(e, g[jmin].id, f);
            setf(f->evidence, sizeof f->evidence,
                 "thread %" PRIu32 " busy %.0f%% of the life it could run (not waiting for "
                 "a CPU), thread %" PRIu32 " %.0f%% (difference %.0f points, threshold %.0f)",
                 g[jmax].id, 100 * fmax, g[jmin].id, 100 * fmin, 100 * (fmax - fmin),
                 e->t->busy_diff_pct);
        }
    }
    free(g);
    return rc;
}

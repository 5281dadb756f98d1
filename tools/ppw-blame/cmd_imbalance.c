/* ppw-blame imbalance: how each top variable's inclusive blame, and each
 * top function's inclusive samples, spread over the groups of the run:
 * threads, or the ranks of a job (struct groups).  Output shapes are
 * documented in docs/ppw-blame.md. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "arena.h"
#include "json.h"
#include "names.h"
#include "read_graph.h"
#include "strmap.h"
#include "view.h"

static const char usage[] =
    "usage: ppw-blame imbalance [DIR...] [--top N] [--format text|json|csv] [--binary BIN]\n"
    "                           [--force]\n"
    "                           [--by rank|thread]\n"
    "       ppw-blame imbalance --folded FILE --binary BIN [options]\n\n"
    "For each of the variables with the most inclusive blame over all threads, the\n"
    "spread of that blame over the run's threads: min, mean and max, max/mean, the\n"
    "thread with the max, and a bar with one character per thread (_ for none, then\n"
    ". : - = + * # % @ up to the max; past 64 threads, one character per few). Threads\n"
    "that took no samples count as 0.  Then the same for the program's functions\n"
    "(regions), by the samples whose stacks hold them.\n\n"
    "A job directory (all ranks of an MPI run) is compared over its ranks, or with\n"
    "--by thread over every rank's threads (named rank:thread).  Several runs (or\n"
    "jobs) are summed first: thread T (rank R) is thread T (rank R) of every run.\n\n"
    "  --top N            the N first variables (default 10; 0: all)\n"
    "  --by GROUP         rank (default for a job directory) or thread\n"
    "  --format FORMAT    text (default), json or csv\n"
    "  --binary, --force, --folded: as for 'ppw-blame report'\n"
    "  -h, --help         show this help\n";

/* The groups samples are compared over, and which group a stack is in. */
struct groups {
    const char *kind; /* "thread" or "rank" */
    const uint32_t *ids;
    size_t count;
    bool by_rank;     /* a stack's group is its thread id's rank */
    bool job_threads; /* thread ids of a job: rank * PPW_JOB_RANK_SHIFT + thread */
};

static size_t group_of(const struct groups *g, const struct ppw_blame_stack *st)
{
    if (st->thread == UINT32_MAX)
        return SIZE_MAX;
    uint32_t id = g->by_rank ? st->thread / PPW_JOB_RANK_SHIFT : st->thread;
    size_t lo = 0, hi = g->count; /* ids are sorted */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->count && g->ids[lo] == id ? lo : SIZE_MAX;
}

/* A group's name: the id, or rank:thread for a job's threads. */
static void put_id(FILE *out, const struct groups *g, uint32_t id, bool quoted)
{
    if (g->job_threads)
        fprintf(out, quoted ? "\"%" PRIu32 ":%" PRIu32 "\"" : "%" PRIu32 ":%" PRIu32,
                id / PPW_JOB_RANK_SHIFT, id % PPW_JOB_RANK_SHIFT);
    else
        fprintf(out, "%" PRIu32, id);
}

/* One variable's blame per group. */
struct spread {
    const struct ppw_blame_var *var; /* in the all-groups result (variables) */
    const char *name;                /* the function (regions) */
    uint64_t *samples;               /* [groups] */
    double *weights;                 /* [groups] */
    uint64_t min, max;
    double mean, min_weight, mean_weight, max_weight, max_over_mean;
    double excess; /* max - mean samples: what the slowest group spends above the average */
    size_t max_group;
};

struct imbalance {
    const struct view_opts *o;
    const struct view_input *in;
    struct groups groups;
    const struct ppw_blame_result *all;
    struct spread *spreads;
    size_t shown;
    uint64_t *group_samples; /* [groups]: every sample of the group */
    double *group_weights;
    struct spread *regions; /* the top functions, by samples whose stacks hold them */
    char **region_names;
    size_t nregions;
    uint64_t *region_cells; /* [regions][groups] */
    double *region_weights;
};

static bool same_var(const struct ppw_blame_var *a, const struct ppw_blame_var *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->kind, b->kind) == 0 &&
           strcmp(a->function_key ? a->function_key : "", b->function_key ? b->function_key : "") ==
               0 &&
           a->decl_line == b->decl_line;
}

/* The stacks ordered by group (a counting sort, so the cost stays linear
 * in the data): group g's are order[first[g] .. first[g + 1]). */
struct by_group {
    struct ppw_blame_stack *order;
    size_t *first; /* [groups + 1] */
};

static int sort_by_group(const struct groups *gr, const struct ppw_blame_stack *stacks,
                         size_t nstacks, struct by_group *out, struct ppw_err *err)
{
    size_t ng = gr->count;
    size_t *gof = malloc((nstacks ? nstacks : 1) * sizeof *gof);
    out->order = malloc((nstacks ? nstacks : 1) * sizeof *out->order);
    out->first = calloc(ng + 2, sizeof *out->first);
    if (!gof || !out->order || !out->first) {
        free(gof);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nstacks; i++) {
        gof[i] = group_of(gr, &stacks[i]);
        if (gof[i] != SIZE_MAX)
            out->first[gof[i] + 2]++;
    }
    for (size_t g = 0; g < ng; g++)
        out->first[g + 2] += out->first[g + 1];
    for (size_t i = 0; i < nstacks; i++)
        if (gof[i] != SIZE_MAX)
            out->order[out->first[gof[i] + 1]++] = stacks[i];
    free(gof);
    return 0;
}

/* Attributes each group's stacks, and records the shown variables' blame. */
static int measure(struct imbalance *m, const struct by_group *bg,
                   const struct ppw_blame_options *bo, struct ppw_err *err)
{
    int rc = 0;
    for (size_t g = 0; g < m->groups.count && !rc; g++) {
        const struct ppw_blame_stack *mine = bg->order + bg->first[g];
        size_t n = bg->first[g + 1] - bg->first[g];
        for (size_t i = 0; i < n; i++) {
            m->group_samples[g] += mine[i].samples;
            m->group_weights[g] += mine[i].weight;
        }
        struct ppw_blame_result *r = NULL;
        if (!n)
            continue; /* a group without samples blames nothing */
        if ((rc = ppw_blame_attribute(m->in->graph, mine, n, bo, &r, err)) != 0)
            break;
        for (size_t v = 0; v < m->shown; v++)
            for (size_t k = 0; k < r->nvars; k++)
                if (same_var(m->spreads[v].var, &r->vars[k])) {
                    m->spreads[v].samples[g] = r->vars[k].inclusive;
                    m->spreads[v].weights[g] = r->vars[k].inclusive_weight;
                    break;
                }
        ppw_blame_result_free(r);
    }
    return rc;
}

/* min, mean, max and where the max is, over the ng groups. */
static void summarize(struct spread *s, size_t ng)
{
    double sum = 0, wsum = 0;
    s->min = ng ? UINT64_MAX : 0;
    s->min_weight = 0;
    for (size_t g = 0; g < ng; g++) {
        sum += (double)s->samples[g];
        wsum += s->weights[g];
        if (s->samples[g] < s->min) {
            s->min = s->samples[g];
            s->min_weight = s->weights[g];
        }
        if (g == 0 || s->samples[g] > s->max) {
            s->max = s->samples[g];
            s->max_weight = s->weights[g];
            s->max_group = g;
        }
    }
    s->mean = ng ? sum / (double)ng : 0;
    s->mean_weight = ng ? wsum / (double)ng : 0;
    s->max_over_mean = s->mean > 0 ? (double)s->max / s->mean : 0;
    s->excess = (double)s->max - s->mean;
}

/* ---- regions: functions, by the samples whose stack holds them ---- */

struct region_total {
    const char *name; /* the strmap's copy */
    uint64_t samples;
    double weight;
    size_t last_stack; /* the last stack counted: recursion counts once */
    bool user;         /* the program's own function (the static graph has it) */
};

static int compare_region(const void *x, const void *y)
{
    const struct region_total *a = x, *b = y;
    if (a->user != b->user)
        return a->user ? -1 : 1;
    if (a->samples != b->samples)
        return a->samples > b->samples ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Adds stack number serial's samples to each distinct function on it. */
static int add_stack_regions(const struct view_input *in, const struct ppw_blame_stack *st,
                             size_t serial, struct ppw_strmap *names, struct region_total **totals,
                             size_t *count, size_t *cap)
{
    for (size_t f = 0; f < st->nframes; f++) {
        const char *fn = view_frame_name(in, &st->frames[f]); /* as the user knows it */
        if (!fn)
            continue;
        bool added;
        struct ppw_strmap_entry *e = ppw_strmap_put(names, fn, *count, &added);
        if (!e || (added && !ppw_array_reserve(totals, cap, *count + 1, sizeof **totals)))
            return PPW_ENOMEM;
        if (added)
            (*totals)[(*count)++] =
                (struct region_total){e->key, 0, 0, SIZE_MAX, ppw_names_has_graph(in->names, fn)};
        struct region_total *t = &(*totals)[e->value];
        if (t->last_stack == serial)
            continue;
        t->last_stack = serial;
        t->samples += st->samples;
        t->weight += st->weight;
    }
    return 0;
}

/* The program's top functions over all groups (by the samples whose stacks
 * hold them) and their spread over the groups. */
static int measure_regions(struct imbalance *m, const struct by_group *bg, struct ppw_err *err)
{
    size_t nstacks, ng = m->groups.count;
    const struct ppw_blame_stack *stacks = view_stacks(m->in, &nstacks);
    struct ppw_strmap names = {0};
    struct region_total *totals = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < nstacks && !rc; i++)
        rc = add_stack_regions(m->in, &stacks[i], i, &names, &totals, &count, &cap);
    if (!rc) {
        if (count)
            qsort(totals, count, sizeof *totals, compare_region);
        while (count && !totals[count - 1].user)
            count--; /* the program's own functions only */
        m->nregions = m->o->top_n && m->o->top_n < count ? m->o->top_n : count;
        size_t cells = (m->nregions ? m->nregions : 1) * (ng ? ng : 1);
        m->regions = calloc(m->nregions ? m->nregions : 1, sizeof *m->regions);
        m->region_names = calloc(m->nregions ? m->nregions : 1, sizeof *m->region_names);
        m->region_cells = calloc(cells, sizeof *m->region_cells);
        m->region_weights = calloc(cells, sizeof *m->region_weights);
        if (!m->regions || !m->region_names || !m->region_cells || !m->region_weights)
            rc = PPW_ENOMEM;
    }
    /* Per group: the same count, restricted to the shown functions. */
    struct ppw_strmap shown = {0};
    for (size_t r = 0; r < m->nregions && !rc; r++) {
        bool added;
        if (!(m->region_names[r] = strdup(totals[r].name)) ||
            !ppw_strmap_put(&shown, totals[r].name, r, &added))
            rc = PPW_ENOMEM;
        m->regions[r] = (struct spread){.samples = m->region_cells + r * ng,
                                        .weights = m->region_weights + r * ng};
    }
    size_t *last = rc ? NULL : malloc((m->nregions ? m->nregions : 1) * sizeof *last);
    if (!rc && !last)
        rc = PPW_ENOMEM;
    for (size_t g = 0; g < ng && !rc; g++) {
        for (size_t r = 0; r < m->nregions; r++)
            last[r] = SIZE_MAX;
        for (size_t i = bg->first[g]; i < bg->first[g + 1]; i++) {
            const struct ppw_blame_stack *st = &bg->order[i];
            for (size_t f = 0; f < st->nframes; f++) {
                const char *fn = view_frame_name(m->in, &st->frames[f]);
                const struct ppw_strmap_entry *e = fn ? ppw_strmap_find(&shown, fn) : NULL;
                if (!e || last[e->value] == i)
                    continue;
                last[e->value] = i;
                m->regions[e->value].samples[g] += st->samples;
                m->regions[e->value].weights[g] += st->weight;
            }
        }
    }
    for (size_t r = 0; r < m->nregions && !rc; r++) {
        summarize(&m->regions[r], ng);
        m->regions[r].name = m->region_names[r];
    }

    free(last);
    ppw_strmap_free(&shown);
    ppw_strmap_free(&names);
    free(totals);
    return rc ? ppw_err_set(err, PPW_ENOMEM, "out of memory") : 0;
}

enum { BAR_WIDTH = 64 };

/* Groups per bar character: 1 up to BAR_WIDTH groups, else enough that the
 * bar stays BAR_WIDTH wide. */
static size_t bar_step(size_t ng)
{
    return ng <= BAR_WIDTH ? 1 : (ng + BAR_WIDTH - 1) / BAR_WIDTH;
}

/* One character per bar_step groups (their highest): _ for none, else 9
 * levels up to max. */
static void put_bar(FILE *out, const struct spread *s, size_t ng)
{
    static const char levels[] = ".:-=+*#%@";
    size_t step = bar_step(ng);
    for (size_t g = 0; g < ng; g += step) {
        uint64_t high = 0;
        for (size_t k = g; k < g + step && k < ng; k++)
            high = s->samples[k] > high ? s->samples[k] : high;
        if (!high || !s->max) {
            putc('_', out);
            continue;
        }
        size_t l = (size_t)((double)high * 9.0 / (double)s->max + 0.999999);
        putc(levels[(l < 1 ? 1 : l > 9 ? 9 : l) - 1], out);
    }
}

/* The name of group g in a text cell. */
static void group_name(const struct groups *gr, size_t g, char *id, size_t size)
{
    if (!gr->count)
        snprintf(id, size, "-");
    else if (gr->job_threads)
        snprintf(id, size, "%" PRIu32 ":%" PRIu32, gr->ids[g] / PPW_JOB_RANK_SHIFT,
                 gr->ids[g] % PPW_JOB_RANK_SHIFT);
    else
        snprintf(id, size, "%" PRIu32, gr->ids[g]);
}

static void print_spread_row(FILE *out, const struct imbalance *m, const struct spread *s,
                             const char *name)
{
    fprintf(out, "%8.2f %8.1f %9" PRIu64 " %9.1f %9" PRIu64 " ", s->max_over_mean, s->excess,
            s->min, s->mean, s->max);
    view_metric_cell(out, m->in, s->max_weight);
    char id[32];
    group_name(&m->groups, s->max_group, id, sizeof id);
    fprintf(out, " %7s  ", id);
    view_cell(out, name, 22, false);
    fputs(" [", out);
    put_bar(out, s, m->groups.count);
    fputs("]\n", out);
}

static void print_text(FILE *out, const struct imbalance *m)
{
    const struct groups *gr = &m->groups;
    view_text_title(out, m->in, "imbalance");
    fprintf(out, "over %zu %s%s:", gr->count, gr->kind, gr->count == 1 ? "" : "s");
    for (size_t g = 0; g < gr->count && g < 64; g++) {
        putc(' ', out);
        put_id(out, gr, gr->ids[g], false);
    }
    if (gr->count > 64)
        fputs(" ...", out);
    size_t step = bar_step(gr->count);
    if (step == 1)
        fprintf(out, "; inclusive blame per %s (samples); bar: one character per %s\n", gr->kind,
                gr->kind);
    else
        fprintf(out,
                "; inclusive blame per %s (samples); bar: one character per %zu %ss "
                "(their highest)\n",
                gr->kind, step, gr->kind);
    if (!m->shown) {
        fputs("\nno variable is blamed\n", out);
        return;
    }
    fprintf(out, "\n%8s %8s %9s %9s %9s %9s %7s  %-22s %s\n", "max/mean", "excess", "min", "mean",
            "max", view_metric_header(m->in), gr->kind, "variable", "bar");
    for (size_t v = 0; v < m->shown; v++) {
        const struct spread *s = &m->spreads[v];
        char name[512];
        snprintf(name, sizeof name, "%s%s%s", s->var->name, s->var->function ? "@" : "",
                 s->var->function ? s->var->function : "");
        print_spread_row(out, m, s, name);
    }
    if (m->shown < m->all->nvars)
        fprintf(out, "(%zu more variable%s: --top 0 shows all)\n", m->all->nvars - m->shown,
                m->all->nvars - m->shown == 1 ? "" : "s");
    if (!m->nregions)
        return;
    fprintf(out, "\n%8s %8s %9s %9s %9s %9s %7s  %-22s %s\n", "max/mean", "excess", "min", "mean",
            "max", view_metric_header(m->in), gr->kind, "region (inclusive)", "bar");
    for (size_t r = 0; r < m->nregions; r++)
        print_spread_row(out, m, &m->regions[r], m->regions[r].name);
}

static void json_list_u64(FILE *out, const uint64_t *v, size_t n)
{
    putc('[', out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%" PRIu64, i ? "," : "", v[i]);
    putc(']', out);
}

static void json_list_double(FILE *out, const double *v, size_t n)
{
    putc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i)
            putc(',', out);
        json_double(out, v[i]);
    }
    putc(']', out);
}

/* A spread's fields after its name: per-group lists, min, mean, max. */
static void json_spread(FILE *out, const struct groups *gr, const struct spread *s)
{
    const char *k = gr->kind;
    fprintf(out, ",\"per_%s\":", k);
    json_list_u64(out, s->samples, gr->count);
    fprintf(out, ",\"per_%s_metric\":", k);
    json_list_double(out, s->weights, gr->count);
    fprintf(out, ",\"min\":%" PRIu64 ",\"mean\":", s->min);
    json_double(out, s->mean);
    fprintf(out, ",\"max\":%" PRIu64 ",\"min_metric\":", s->max);
    json_double(out, s->min_weight);
    fputs(",\"mean_metric\":", out);
    json_double(out, s->mean_weight);
    fputs(",\"max_metric\":", out);
    json_double(out, s->max_weight);
    fputs(",\"max_over_mean\":", out);
    json_double(out, s->max_over_mean);
    fputs(",\"excess\":", out);
    json_double(out, s->excess);
    fprintf(out, ",\"max_%s\":", k);
    if (gr->count)
        put_id(out, gr, gr->ids[s->max_group], true);
    else
        fputs("null", out);
}

static void print_json(FILE *out, const struct imbalance *m)
{
    const struct groups *gr = &m->groups;
    view_json_head(out, m->in);
    const char *k = gr->kind;
    fprintf(out, ",\"group\":\"%s\",\"%ss\":[", k, k);
    for (size_t g = 0; g < gr->count; g++) {
        if (g)
            putc(',', out);
        put_id(out, gr, gr->ids[g], true);
    }
    fprintf(out, "],\"%s_samples\":", k);
    json_list_u64(out, m->group_samples, gr->count);
    fprintf(out, ",\"%s_metric\":", k);
    json_list_double(out, m->group_weights, gr->count);
    fputs(",\"variables\":[", out);
    for (size_t v = 0; v < m->shown; v++) {
        const struct spread *s = &m->spreads[v];
        fputs(v ? ",\n{\"name\":" : "\n{\"name\":", out);
        json_string(out, s->var->name);
        fputs(",\"function\":", out);
        json_string_or_null(out, s->var->function);
        fputs(",\"kind\":", out);
        json_string(out, s->var->kind);
        fprintf(out, ",\"samples\":%" PRIu64, s->var->inclusive);
        json_spread(out, gr, s);
        putc('}', out);
    }
    fputs("],\"regions\":[", out);
    for (size_t r = 0; r < m->nregions; r++) {
        const struct spread *s = &m->regions[r];
        fputs(r ? ",\n{\"function\":" : "\n{\"function\":", out);
        json_string(out, s->name);
        uint64_t total = 0;
        for (size_t g = 0; g < gr->count; g++)
            total += s->samples[g];
        fprintf(out, ",\"samples\":%" PRIu64, total);
        json_spread(out, gr, s);
        putc('}', out);
    }
    fputs("]}\n", out);
}

/* One CSV record per variable, then per region (`what` says which): its
 * spread, then its samples in each group (columns named by group). */
static void csv_rows(FILE *out, const struct imbalance *m, const char *what, const struct spread *s,
                     size_t n)
{
    const struct groups *gr = &m->groups;
    for (size_t i = 0; i < n; i++, s++) {
        fprintf(out, "%s,", what);
        cli_csv(out, s->var ? s->var->name : s->name);
        putc(',', out);
        cli_csv(out, s->var ? s->var->function : NULL);
        uint64_t total = 0;
        for (size_t g = 0; g < gr->count; g++)
            total += s->samples[g];
        fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%.17g,%" PRIu64 ",%.17g,", total, s->min, s->mean,
                s->max, s->max_over_mean);
        if (gr->count)
            put_id(out, gr, gr->ids[s->max_group], false);
        for (size_t g = 0; g < gr->count; g++)
            fprintf(out, ",%" PRIu64, s->samples[g]);
        putc('\n', out);
    }
}

static void print_csv(FILE *out, const struct imbalance *m)
{
    const struct groups *gr = &m->groups;
    fprintf(out, "row,name,function,samples,min,mean,max,max_over_mean,max_%s", gr->kind);
    for (size_t g = 0; g < gr->count; g++) {
        fprintf(out, ",%s_", gr->kind);
        put_id(out, gr, gr->ids[g], false);
    }
    putc('\n', out);
    csv_rows(out, m, "variable", m->spreads, m->shown);
    csv_rows(out, m, "region", m->regions, m->nregions);
}

static int run_imbalance(struct imbalance *m, struct ppw_err *err)
{
    size_t nstacks, ng = m->groups.count;
    const struct ppw_blame_stack *stacks = view_stacks(m->in, &nstacks);
    struct ppw_blame_options bo = {0};
    struct ppw_blame_result *all = NULL;
    int rc = ppw_blame_attribute(m->in->graph, stacks, nstacks, &bo, &all, err);
    if (rc)
        return rc;
    m->all = all;
    m->shown = m->o->top_n && m->o->top_n < all->nvars ? m->o->top_n : all->nvars;
    size_t cells = (m->shown ? m->shown : 1) * (ng ? ng : 1);
    uint64_t *samples = calloc(cells, sizeof *samples);
    double *weights = calloc(cells, sizeof *weights);
    m->spreads = calloc(m->shown ? m->shown : 1, sizeof *m->spreads);
    m->group_samples = calloc(ng ? ng : 1, sizeof *m->group_samples);
    m->group_weights = calloc(ng ? ng : 1, sizeof *m->group_weights);
    if (!samples || !weights || !m->spreads || !m->group_samples || !m->group_weights)
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    for (size_t v = 0; v < m->shown && !rc; v++)
        m->spreads[v] = (struct spread){
            .var = &all->vars[v], .samples = samples + v * ng, .weights = weights + v * ng};
    struct by_group bg = {0};
    if (!rc)
        rc = sort_by_group(&m->groups, stacks, nstacks, &bg, err);
    if (!rc)
        rc = measure(m, &bg, &bo, err);
    for (size_t v = 0; v < m->shown && !rc; v++) {
        summarize(&m->spreads[v], ng);
    }

    if (!rc)
        rc = measure_regions(m, &bg, err);
    free(bg.order);
    free(bg.first);
    if (!rc) {
        if (m->o->fmt == VIEW_JSON)
            print_json(stdout, m);
        else if (m->o->csv)
            print_csv(stdout, m);
        else
            print_text(stdout, m);
    }
    free(samples);
    free(weights);
    free(m->spreads);
    free(m->group_samples);
    free(m->group_weights);
    for (size_t r = 0; r < m->nregions; r++)
        free(m->region_names[r]);
    free(m->region_names);
    free(m->regions);
    free(m->region_cells);
    free(m->region_weights);
    ppw_blame_result_free(all);
    return rc;
}

int cmd_imbalance(int argc, char **argv)
{
    struct view_opts o = {0};
    struct imbalance m = {.o = &o};
    const char *by = NULL;
    const struct cli_option options[] = {VIEW_OPTIONS(&o), {"--by", &by}};
    const struct cli_flag flags[] = {{"--force", &o.force}};
    struct view_input in = {0};
    struct ppw_err err;
    ppw_err_clear(&err);
    if (VIEW_PARSE(argc, argv, &o, options, VIEW_OPTION_COUNT + 1, flags, 1, &err) ||
        view_check_opts(&o, "imbalance", 10, &err))
        return cli_fail(&err);
    if (o.help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    if (o.thread)
        return cli_usage_error("imbalance: --thread does not apply (it compares all threads)");
    if (o.rank)
        return cli_usage_error("imbalance: --rank does not apply (it compares all ranks)");
    if (by && strcmp(by, "rank") != 0 && strcmp(by, "thread") != 0)
        return cli_usage_error("imbalance: --by needs rank or thread, not '%s'", by);
    if (o.fmt == VIEW_TSV && !o.csv)
        return cli_usage_error("imbalance: unknown format 'tsv' (expected text, json or csv)");
    o.split_threads = true;
    int rc = view_load(&o, &in, &err);
    if (!rc) {
        m.in = &in;
        bool by_rank = in.job && !(by && strcmp(by, "thread") == 0);
        if (by && strcmp(by, "rank") == 0 && !in.job)
            rc = ppw_err_set(&err, PPW_EUSAGE,
                             "imbalance: --by rank needs a job directory (of an MPI run)");
        else if (by_rank)
            m.groups = (struct groups){"rank", in.ranks, in.nranks, true, false};
        else
            m.groups = (struct groups){"thread", in.threads, in.nthreads, false, in.job};
        if (!rc)
            rc = run_imbalance(&m, &err);
    }
    view_input_free(&in);
    return rc ? cli_fail(&err) : cli_finish_output();
}

/* ppw-blame profile: the GASP profile table of a run, per region and
 * callpath, merged over threads, with probe-overhead compensation
 * (docs/FORMATS.md, "Compensation") beside the raw times.  Output shapes
 * are documented in docs/ppw-blame.md. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "intrusion.h"
#include "json.h"
#include "read_run.h"
#include "names.h"

static const char usage[] =
    "usage: ppw-blame profile [DIR] [--thread N] [--sort incl|excl|calls]\n"
    "                         [--format text|json|csv]\n\n"
    "Prints the profile of the run directory DIR (default: the ppw-* directory of the\n"
    "current directory modified last): per region and callpath, calls and times,\n"
    "raw and compensated for the probes' own cost.\n\n"
    "  --thread N        only thread N (default: all threads, merged)\n"
    "  --sort KEY        incl (default): compensated inclusive total; excl: compensated\n"
    "                    exclusive total; calls: calls (raw totals without calibration)\n"
    "  --format FORMAT   text (default), json or csv (the rows)\n"
    "  -h, --help        show this help\n";

enum sort_key { SORT_INCL, SORT_EXCL, SORT_CALLS };

/* One region in one callpath, summed over the selected threads. */
struct row {
    struct ppw_run_timer t;      /* sums; incl_min/max over threads with calls */
    bool has_calls;              /* some thread completed a call: min and max are known */
    bool open;                   /* a call was still running on some thread */
    bool unwound;                /* some calls were closed by an outer END */
    uint64_t calls_throttled;    /* the region's untimed calls (estimated when sampled), when
                                    this is its only row */
    bool throttled;              /* the region was throttled: see the throttled list */
    double comp_incl, comp_excl; /* summed unclamped per thread, then clamped */
    bool incl_clamped, excl_clamped;
    double key; /* what --sort orders by, descending */
};

/* A throttled region, summed over the selected threads. */
struct throttled {
    uint32_t region;
    uint64_t calls_before, calls_after, recorded;
    double mean_sum; /* sum of mean_ns * calls_before, for the weighted mean (compensated
                        when calibrated, as every time below) */
    /* Allocation sites sampled after throttling (run format 1.6). */
    uint64_t sample_period; /* the mean window a sampled call stood for, all threads */
    uint64_t sampled_calls, sampled_ns; /* sampled_ns compensated when calibrated */
    double calls_untimed; /* after throttling, estimated (ppw_run_throttle_calls) */
    double untimed_ns;    /* their inclusive time, compensated when calibrated */
    double recorded_ns;   /* the timed calls' inclusive time, compensated when calibrated */
};

struct profile {
    const struct ppw_run *run;
    const struct ppw_run_thread *only; /* NULL: all threads */
    enum sort_key sort;
    struct row *rows;
    size_t row_count;
    struct throttled *throttled;
    size_t throttled_count;
    size_t clamped;         /* compensated values clamped at 0 */
    size_t threads_in_situ; /* selected threads whose probe costs their windows corrected */
    size_t threads_probed;  /* selected threads with timers */
    double pair_ns_min, pair_ns_max; /* over those threads */
};

/* ---- merging ---- */

static int compare_path(const struct ppw_run_timer *a, const struct ppw_run_timer *b)
{
    if (a->path[0] != b->path[0])
        return a->path[0] < b->path[0] ? -1 : 1;
    if (a->depth != b->depth)
        return a->depth < b->depth ? -1 : 1;
    for (uint32_t i = 1; i < a->depth; i++)
        if (a->path[i] != b->path[i])
            return a->path[i] < b->path[i] ? -1 : 1;
    return 0;
}

static int compare_row_path(const void *a, const void *b)
{
    return compare_path(&((const struct row *)a)->t, &((const struct row *)b)->t);
}

static void add_timer(struct row *row, const struct ppw_run_timer *t, double comp_incl,
                      double comp_excl)
{
    row->comp_incl += comp_incl;
    row->comp_excl += comp_excl;
    struct ppw_run_timer *sum = &row->t;
    if (t->count) {
        sum->incl_min_ns =
            row->has_calls && sum->incl_min_ns < t->incl_min_ns ? sum->incl_min_ns : t->incl_min_ns;
        sum->incl_max_ns =
            row->has_calls && sum->incl_max_ns > t->incl_max_ns ? sum->incl_max_ns : t->incl_max_ns;
        row->has_calls = true;
    }
    ppw_intrusion_add_timer(sum, t);
    row->open |= (t->flags & PPW_TIMER_OPEN) != 0;
    row->unwound |= (t->flags & PPW_TIMER_UNWOUND) != 0;
}

static bool selected(const struct profile *p, const struct ppw_run_thread *t)
{
    return !p->only || p->only == t;
}

static size_t timers_of(const struct ppw_run_thread *t)
{
    return t->timer_count;
}

static size_t throttles_of(const struct ppw_run_thread *t)
{
    return t->throttle_count;
}

/* The sum of count(t) over the selected threads. */
static size_t selected_total(const struct profile *p,
                             size_t (*count)(const struct ppw_run_thread *t))
{
    size_t n = 0;
    for (size_t i = 0; i < p->run->thread_count; i++)
        if (selected(p, &p->run->threads[i]))
            n += count(&p->run->threads[i]);
    return n;
}

/* Every timer slot of the selected threads, merged by callpath. */
static int collect_rows(struct profile *p)
{
    size_t n = selected_total(p, timers_of);
    struct row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return PPW_ENOMEM;
    /* Each thread's timers compensated with its own probe costs. */
    for (size_t i = 0, k = 0; i < p->run->thread_count; i++) {
        const struct ppw_run_thread *t = &p->run->threads[i];
        if (!selected(p, t) || !t->timer_count)
            continue;
        struct ppw_probe_costs costs;
        ppw_intrusion_probe_costs(p->run, t, &costs);
        if (!p->threads_probed || costs.pair_ns < p->pair_ns_min)
            p->pair_ns_min = costs.pair_ns;
        if (!p->threads_probed || costs.pair_ns > p->pair_ns_max)
            p->pair_ns_max = costs.pair_ns;
        p->threads_probed++;
        p->threads_in_situ += costs.source == PPW_COST_IN_SITU;
        for (size_t j = 0; j < t->timer_count; j++, k++) {
            const struct ppw_run_timer *timer = &t->timers[j];
            rows[k].t = *timer;
            rows[k].has_calls = timer->count != 0;
            rows[k].open = (timer->flags & PPW_TIMER_OPEN) != 0;
            rows[k].unwound = (timer->flags & PPW_TIMER_UNWOUND) != 0;
            ppw_intrusion_compensate(&costs, timer, &rows[k].comp_incl, &rows[k].comp_excl);
        }
    }
    if (n)
        qsort(rows, n, sizeof *rows, compare_row_path);
    size_t merged = 0;
    for (size_t i = 0; i < n; i++) {
        if (merged && compare_path(&rows[merged - 1].t, &rows[i].t) == 0)
            add_timer(&rows[merged - 1], &rows[i].t, rows[i].comp_incl, rows[i].comp_excl);
        else
            rows[merged++] = rows[i];
    }
    p->rows = rows;
    p->row_count = merged;
    return 0;
}

static int compare_throttled(const void *a, const void *b)
{
    uint32_t x = ((const struct throttled *)a)->region, y = ((const struct throttled *)b)->region;
    return (x > y) - (x < y);
}

/* The rows of region: [*first, *first + count), rows being sorted by region. */
static size_t region_rows(const struct profile *p, uint32_t region, size_t *first)
{
    size_t count = 0;
    for (size_t i = 0; i < p->row_count; i++) {
        if (p->rows[i].t.path[0] != region)
            continue;
        if (count++ == 0)
            *first = i;
    }
    return count;
}

/* Throttle slots merged by region; the untimed calls go to the region's row
 * when it has exactly one (else only to the throttled list). */
static int collect_throttled(struct profile *p)
{
    size_t n = selected_total(p, throttles_of);
    struct throttled *all = calloc(n ? n : 1, sizeof *all);
    if (!all)
        return PPW_ENOMEM;
    for (size_t i = 0, k = 0; i < p->run->thread_count; i++) {
        const struct ppw_run_thread *t = &p->run->threads[i];
        struct ppw_probe_costs costs = {0};
        if (p->run->has_calib && selected(p, t))
            ppw_intrusion_probe_costs(p->run, t, &costs);
        for (size_t j = 0; j < t->throttle_count && selected(p, t); j++, k++) {
            const struct ppw_run_throttle *th = &t->throttles[j];
            /* The untimed calls' time without the probe time their timed
             * samples carried inside (inner_ns a call). */
            double counted = (double)th->mean_ns - costs.inner_ns;
            double sampled = (double)th->sampled_ns - (double)th->sampled_calls * costs.inner_ns;
            double untimed = (double)th->calls_after * (counted > 0 ? counted : 0) +
                             (double)th->sample_period * (sampled > 0 ? sampled : 0);
            all[k] = (struct throttled){.region = th->region,
                                        .calls_before = th->calls_before,
                                        .calls_after = th->calls_after,
                                        .mean_sum = (counted > 0 ? counted : 0) *
                                                    (double)th->calls_before,
                                        .sample_period = th->sample_period,
                                        .sampled_calls = th->sampled_calls,
                                        .sampled_ns = sampled > 0 ? (uint64_t)sampled : 0,
                                        .calls_untimed = ppw_run_throttle_calls(th),
                                        .untimed_ns = untimed};
        }
    }
    if (n)
        qsort(all, n, sizeof *all, compare_throttled);
    size_t merged = 0;
    for (size_t i = 0; i < n; i++) {
        struct throttled *last = merged ? &all[merged - 1] : NULL;
        if (last && last->region == all[i].region) {
            last->calls_before += all[i].calls_before;
            last->calls_after += all[i].calls_after;
            last->mean_sum += all[i].mean_sum;
            last->sampled_calls += all[i].sampled_calls;
            last->sampled_ns += all[i].sampled_ns;
            last->calls_untimed += all[i].calls_untimed;
            last->untimed_ns += all[i].untimed_ns;
        } else {
            all[merged++] = all[i];
        }
    }
    for (size_t i = 0; i < merged; i++) {
        /* The mean window over the threads: the calls the sampled ones
         * stood for (ppw_run_throttle_calls), over their number. */
        if (all[i].sampled_calls)
            all[i].sample_period = (uint64_t)llround(
                (all[i].calls_untimed - (double)all[i].calls_after) / (double)all[i].sampled_calls);
        size_t first = 0, rows = region_rows(p, all[i].region, &first);
        for (size_t k = first; k < first + rows; k++) {
            all[i].recorded += p->rows[k].t.count;
            all[i].recorded_ns +=
                p->run->has_calib ? p->rows[k].comp_incl : (double)p->rows[k].t.incl_sum_ns;
            p->rows[k].throttled = true;
        }
        if (rows == 1)
            p->rows[first].calls_throttled = (uint64_t)llround(all[i].calls_untimed);
    }
    p->throttled = all;
    p->throttled_count = merged;
    return 0;
}

/* ---- compensation (docs/FORMATS.md) ---- */

static double clamp(struct profile *p, double value, bool *clamped)
{
    *clamped = value < 0;
    p->clamped += *clamped;
    return *clamped ? 0 : value;
}

/* The rows' compensated sums (collect_rows) clamped at 0. */
static void compensate(struct profile *p)
{
    if (!p->run->has_calib)
        return;
    for (size_t i = 0; i < p->row_count; i++) {
        struct row *r = &p->rows[i];
        r->comp_incl = clamp(p, r->comp_incl, &r->incl_clamped);
        r->comp_excl = clamp(p, r->comp_excl, &r->excl_clamped);
    }
}

static double excl_stddev(const struct ppw_run_timer *t)
{
    double mean = (double)t->excl_sum_ns / (double)t->count;
    double variance = t->excl_sumsq_ns2 / (double)t->count - mean * mean;
    return variance > 0 ? sqrt(variance) : 0;
}

static uint64_t calls(const struct row *r)
{
    return r->t.count + r->calls_throttled;
}

/* ---- sorting ---- */

static double sort_value(const struct profile *p, const struct row *r)
{
    bool calib = p->run->has_calib;
    switch (p->sort) {
    case SORT_EXCL: return calib ? r->comp_excl : (double)r->t.excl_sum_ns;
    case SORT_CALLS: return (double)calls(r);
    default: return calib ? r->comp_incl : (double)r->t.incl_sum_ns;
    }
}

static int compare_rows(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return compare_path(&x->t, &y->t);
}

static void sort_rows(struct profile *p)
{
    for (size_t i = 0; i < p->row_count; i++)
        p->rows[i].key = sort_value(p, &p->rows[i]);
    if (p->row_count)
        qsort(p->rows, p->row_count, sizeof *p->rows, compare_rows);
}

/* ---- output ---- */

static const struct ppw_run_region *region_of(const struct profile *p, uint32_t id)
{
    return ppw_run_find_region(p->run, id); /* the reader checked every id */
}

/* Region id as users name it: outlined code by its source function
 * (ppw_names_region; the run alone, without the binary).  The name lives
 * until the next call. */
static const char *name_of(const struct profile *p, uint32_t id)
{
    static char buf[512];
    const struct ppw_run_region *g = region_of(p, id);
    return ppw_names_region(NULL, g->name, g->file, g->line, buf, sizeof buf);
}

static void callpath_text(FILE *out, const struct profile *p, const struct ppw_run_timer *t)
{
    for (uint32_t i = 0; i < t->depth; i++) {
        fputs(i ? " <- " : "", out);
        cli_text(out, name_of(p, t->path[i]));
    }
}

static void text_us(FILE *out, double ns)
{
    fprintf(out, " %12.3f", ns / 1000.0);
}

static bool never_ended(const struct ppw_run_thread *t)
{
    return !t->ended;
}

static bool running_at_exit(const struct ppw_run_thread *t)
{
    return t->ended && (t->end_flags & PPW_THREAD_END_AT_EXIT);
}

/* The indices of the threads matching which, separated by sep; the count. */
static size_t thread_list(FILE *out, const struct ppw_run *run,
                          bool (*which)(const struct ppw_run_thread *), const char *sep)
{
    size_t n = 0;
    for (size_t i = 0; i < run->thread_count; i++)
        if (which(&run->threads[i]))
            fprintf(out, "%s%" PRIu32, n++ ? sep : "", run->threads[i].index);
    return n;
}

static void text_threads_line(FILE *out, const struct ppw_run *run, const char *intro,
                              bool (*which)(const struct ppw_run_thread *))
{
    for (size_t i = 0; i < run->thread_count; i++) {
        if (which(&run->threads[i])) {
            fputs(intro, out);
            thread_list(out, run, which, ", ");
            putc('\n', out);
            return;
        }
    }
}

static void text_header(FILE *out, const struct profile *p)
{
    const struct ppw_run *run = p->run;
    fputs("profile ", out);
    cli_text(out, run->dir);
    fprintf(out, " pid=%" PRIu32, run->pid);
    if (p->only)
        fprintf(out, " thread=%" PRIu32 "\n", p->only->index);
    else
        fputs(" threads=all (merged)\n", out);
    if (run->has_metric)
        fprintf(out, "metric: %s, period %" PRIu64 " %s\n",
                ppw_run_metric_source_name(run->metric.source), run->metric.period,
                ppw_run_unit_name(run->metric.unit));
    else
        fputs("metric: none recorded\n", out);
    if (run->has_calib) {
        fprintf(out,
                "calibration: pair %g ns, inner %g ns, throttled pair %g ns "
                "(%" PRIu64 " iterations)\n",
                run->calib.pair_ns, run->calib.inner_ns, run->calib.throttled_pair_ns,
                run->calib.iterations);
        if (p->threads_in_situ)
            fprintf(out,
                    "probe costs in situ: %zu of %zu threads corrected by their probe windows, "
                    "pair %.4g to %.4g ns\n",
                    p->threads_in_situ, p->threads_probed, p->pair_ns_min, p->pair_ns_max);
    } else
        fputs("calibration: none recorded; no compensated times\n", out);
    if (!run->finished)
        fputs("warning: the run did not end normally\n", out);
    text_threads_line(out, run, "warning: threads that never ended: ", never_ended);
    text_threads_line(out, run, "note: threads still running at exit: ", running_at_exit);
    if (p->clamped)
        fprintf(out, "note: %zu compensated times were negative and are shown as 0 (*)\n",
                p->clamped);
}

static void text_row(FILE *out, const struct profile *p, const struct row *r)
{
    const struct ppw_run_timer *t = &r->t;
    const struct ppw_run_region *g = region_of(p, t->path[0]);
    bool calib = p->run->has_calib;
    /* The timed calls, which the times are of: a throttled region's
     * others are in the throttled list. */
    fprintf(out, "%10" PRIu64 " %10" PRIu64, t->count, t->subcalls);
    if (t->count) {
        text_us(out, (double)t->incl_min_ns);
        text_us(out, (double)t->incl_sum_ns / (double)t->count);
        text_us(out, (double)t->incl_max_ns);
    } else {
        fprintf(out, " %12s %12s %12s", "-", "-", "-");
    }
    text_us(out, (double)t->incl_sum_ns);
    calib ? text_us(out, r->comp_incl) : (void)fprintf(out, " %12s", "-");
    putc(r->incl_clamped ? '*' : ' ', out);
    text_us(out, (double)t->excl_sum_ns);
    calib ? text_us(out, r->comp_excl) : (void)fprintf(out, " %12s", "-");
    putc(r->excl_clamped ? '*' : ' ', out);
    t->count ? text_us(out, excl_stddev(t)) : (void)fprintf(out, " %12s", "-");
    fputs("  ", out);
    callpath_text(out, p, t);
    fprintf(out, " [%s ", ppw_run_region_kind_name(g->kind));
    cli_text(out, g->file);
    fprintf(out, ":%" PRIu32 "]%s%s%s\n", g->line, r->open ? " (a call was running)" : "",
            r->unwound ? " (some calls unwound)" : "", r->throttled ? " (throttled)" : "");
}

/* One line per throttled region: every call it made and their time, the
 * untimed part estimated, then how each part was measured. */
static void text_throttled(FILE *out, const struct profile *p)
{
    if (p->throttled_count)
        fputs("\nthrottled regions (tiny and frequent: timed in full until throttled, then "
              "counted, or at call sites timed 1 call in about K; (throttled) rows above "
              "hold the timed calls only):\n",
              out);
    for (size_t i = 0; i < p->throttled_count; i++) {
        const struct throttled *th = &p->throttled[i];
        const struct ppw_run_region *g = region_of(p, th->region);
        double mean = th->calls_before ? th->mean_sum / (double)th->calls_before : 0;
        bool sampled = th->sampled_calls != 0;
        fputs("  ", out);
        cli_text(out, name_of(p, th->region));
        fprintf(out, " [%s ", ppw_run_region_kind_name(g->kind));
        cli_text(out, g->file);
        fprintf(out, ":%" PRIu32 "]: %s%.0f calls, %s%.3f us in all; %" PRIu64 " timed", g->line,
                sampled ? "about " : "", (double)th->recorded + th->calls_untimed,
                sampled ? "about " : "", (th->recorded_ns + th->untimed_ns) / 1000.0, th->recorded);
        fprintf(out, ", throttled after %" PRIu64 " (mean %.3f us)", th->calls_before,
                mean / 1000.0);
        if (th->calls_after)
            fprintf(out, ", then %" PRIu64 " counted at that mean", th->calls_after);
        if (sampled)
            fprintf(out, ", then %" PRIu64 " timed 1 in about %" PRIu64 " (mean %.3f us)",
                    th->sampled_calls, th->sample_period,
                    (double)th->sampled_ns / (double)th->sampled_calls / 1000.0);
        fputs("\n", out);
    }
}

static void print_text(FILE *out, const struct profile *p)
{
    text_header(out, p);
    fputs("times in microseconds; comp.* are compensated for probe overhead\n\n", out);
    fprintf(out, "%10s %10s %12s %12s %12s %12s %12s  %12s %12s  %12s  %s\n", "calls", "subcalls",
            "incl.min", "incl.mean", "incl.max", "incl.total", "comp.incl", "excl.total",
            "comp.excl", "excl.sd", "region");
    for (size_t i = 0; i < p->row_count; i++)
        text_row(out, p, &p->rows[i]);
    text_throttled(out, p);
}

static void json_number_or_null(FILE *out, const char *key, bool known, double value)
{
    fprintf(out, ",\"%s\":", key);
    if (known)
        json_double(out, value);
    else
        fputs("null", out);
}

static void json_row(FILE *out, const struct profile *p, const struct row *r)
{
    const struct ppw_run_timer *t = &r->t;
    const struct ppw_run_region *g = region_of(p, t->path[0]);
    bool calib = p->run->has_calib;
    fprintf(out, "{\"region\":%" PRIu32 ",\"name\":", g->id);
    json_string(out, name_of(p, g->id));
    fprintf(out, ",\"kind\":\"%s\",\"file\":", ppw_run_region_kind_name(g->kind));
    json_string(out, g->file);
    fprintf(out, ",\"line\":%" PRIu32 ",\"callpath\":[", g->line);
    for (uint32_t i = 0; i < t->depth; i++) {
        fputs(i ? "," : "", out);
        json_string(out, name_of(p, t->path[i]));
    }
    fprintf(out,
            "],\"calls\":%" PRIu64 ",\"calls_recorded\":%" PRIu64 ",\"calls_throttled\":%" PRIu64
            ",\"subcalls\":%" PRIu64,
            calls(r), t->count, r->calls_throttled, t->subcalls);
    json_number_or_null(out, "incl_min_ns", t->count, (double)t->incl_min_ns);
    json_number_or_null(out, "incl_mean_ns", t->count, (double)t->incl_sum_ns / (double)t->count);
    json_number_or_null(out, "incl_max_ns", t->count, (double)t->incl_max_ns);
    fprintf(out, ",\"incl_total_ns\":%" PRIu64 ",\"excl_total_ns\":%" PRIu64 ",\"bytes\":%" PRIu64,
            t->incl_sum_ns, t->excl_sum_ns, t->bytes);
    json_number_or_null(out, "excl_stddev_ns", t->count, t->count ? excl_stddev(t) : 0);
    json_number_or_null(out, "comp_incl_ns", calib, r->comp_incl);
    json_number_or_null(out, "comp_excl_ns", calib, r->comp_excl);
    fprintf(out, ",\"comp_incl_clamped\":%s,\"comp_excl_clamped\":%s,\"open\":%s,\"unwound\":%s}",
            r->incl_clamped ? "true" : "false", r->excl_clamped ? "true" : "false",
            r->open ? "true" : "false", r->unwound ? "true" : "false");
}

static void json_header(FILE *out, const struct profile *p)
{
    static const char *const sort_names[] = {"incl", "excl", "calls"};
    const struct ppw_run *run = p->run;
    fputs("{\"dir\":", out);
    json_string(out, run->dir);
    fprintf(out, ",\"pid\":%" PRIu32 ",\"thread\":", run->pid);
    if (p->only)
        fprintf(out, "%" PRIu32, p->only->index);
    else
        fputs("null", out);
    fprintf(out, ",\"finished\":%s,\"unended_threads\":[", run->finished ? "true" : "false");
    thread_list(out, run, never_ended, ",");
    fputs("],\"running_at_exit\":[", out);
    thread_list(out, run, running_at_exit, ",");
    fputs("],\"metric\":", out);
    if (run->has_metric)
        fprintf(out, "{\"source\":\"%s\",\"unit\":\"%s\",\"period\":%" PRIu64 "}",
                ppw_run_metric_source_name(run->metric.source), ppw_run_unit_name(run->metric.unit),
                run->metric.period);
    else
        fputs("null", out);
    fputs(",\"calibration\":", out);
    if (run->has_calib) {
        fputs("{\"pair_ns\":", out);
        json_double(out, run->calib.pair_ns);
        fputs(",\"inner_ns\":", out);
        json_double(out, run->calib.inner_ns);
        fputs(",\"throttled_pair_ns\":", out);
        json_double(out, run->calib.throttled_pair_ns);
        fprintf(out, ",\"iterations\":%" PRIu64 "}", run->calib.iterations);
    } else {
        fputs("null", out);
    }
    /* What compensation used: the calibration as it is, or in situ. */
    fprintf(out,
            ",\"probe_costs\":{\"threads\":%zu,\"in_situ\":%zu,\"pair_ns_min\":", p->threads_probed,
            p->threads_in_situ);
    json_double(out, p->pair_ns_min);
    fputs(",\"pair_ns_max\":", out);
    json_double(out, p->pair_ns_max);
    fputc('}', out);
    fprintf(out, ",\"sort\":\"%s\",\"clamped\":%zu", sort_names[p->sort], p->clamped);
}

/* The rows as CSV: one record per row, the JSON row's fields (callpath
 * joined by " <- "); unknown numbers empty. */
static void print_csv(FILE *out, const struct profile *p)
{
    bool calib = p->run->has_calib;
    fputs("region,name,kind,file,line,callpath,calls,calls_recorded,calls_throttled,subcalls,"
          "incl_min_ns,incl_mean_ns,incl_max_ns,incl_total_ns,excl_total_ns,bytes,"
          "excl_stddev_ns,comp_incl_ns,comp_excl_ns,open,unwound\n",
          out);
    for (size_t i = 0; i < p->row_count; i++) {
        const struct row *r = &p->rows[i];
        const struct ppw_run_timer *t = &r->t;
        const struct ppw_run_region *g = region_of(p, t->path[0]);
        fprintf(out, "%" PRIu32 ",", g->id);
        cli_csv(out, name_of(p, g->id));
        fprintf(out, ",%s,", ppw_run_region_kind_name(g->kind));
        cli_csv(out, g->file);
        fprintf(out, ",%" PRIu32 ",", g->line);
        char *path = NULL;
        size_t size = 0;
        FILE *mem = open_memstream(&path, &size);
        for (uint32_t k = 0; mem && k < t->depth; k++)
            fprintf(mem, "%s%s", k ? " <- " : "", name_of(p, t->path[k]));
        if (mem && fclose(mem) == 0)
            cli_csv(out, path);
        free(path);
        fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", calls(r), t->count,
                r->calls_throttled, t->subcalls);
        if (t->count)
            fprintf(out, "%" PRIu64 ",%.17g,%" PRIu64, t->incl_min_ns,
                    (double)t->incl_sum_ns / (double)t->count, t->incl_max_ns);
        else
            fputs(",,", out);
        fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", t->incl_sum_ns, t->excl_sum_ns,
                t->bytes);
        if (t->count)
            fprintf(out, "%.17g", excl_stddev(t));
        if (calib)
            fprintf(out, ",%.17g,%.17g", r->comp_incl, r->comp_excl);
        else
            fputs(",,", out);
        fprintf(out, ",%s,%s\n", r->open ? "true" : "false", r->unwound ? "true" : "false");
    }
}

static void print_json(FILE *out, const struct profile *p)
{
    json_header(out, p);
    fputs(",\"rows\":[", out);
    for (size_t i = 0; i < p->row_count; i++) {
        fputs(i ? ",\n" : "\n", out);
        json_row(out, p, &p->rows[i]);
    }
    fputs("],\n\"throttled\":[", out);
    for (size_t i = 0; i < p->throttled_count; i++) {
        const struct throttled *th = &p->throttled[i];
        fprintf(out, "%s{\"region\":%" PRIu32 ",\"name\":", i ? ",\n" : "\n", th->region);
        json_string(out, name_of(p, th->region));
        const struct ppw_run_region *g = region_of(p, th->region);
        fprintf(out, ",\"kind\":\"%s\",\"file\":", ppw_run_region_kind_name(g->kind));
        json_string(out, g->file);
        fprintf(out, ",\"line\":%" PRIu32 ",\"calls_before\":%" PRIu64 ",\"mean_ns\":", g->line,
                th->calls_before);
        json_double(out, th->calls_before ? th->mean_sum / (double)th->calls_before : 0);
        fprintf(out,
                ",\"calls_after\":%" PRIu64 ",\"sample_period\":%" PRIu64
                ",\"sampled_calls\":%" PRIu64 ",\"sampled_ns\":%" PRIu64 ",\"calls\":%" PRIu64,
                th->calls_after, th->sample_period, th->sampled_calls, th->sampled_ns,
                th->recorded + (uint64_t)llround(th->calls_untimed));
        fputs(",\"incl_ns\":", out);
        json_double(out, th->recorded_ns + th->untimed_ns);
        fprintf(out, ",\"estimated\":%s}", th->sampled_calls ? "true" : "false");
    }
    fputs("]}\n", out);
}

/* ---- command ---- */

struct profile_opts {
    const char *dir, *format, *thread, *sort;
    enum cli_format fmt;
    bool help;
    uint32_t thread_index;
};

static int parse_sort(const char *value, enum sort_key *sort, struct ppw_err *err)
{
    static const char *const names[] = {"incl", "excl", "calls"};
    *sort = SORT_INCL;
    for (size_t i = 0; value && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(value, names[i]) == 0)
            return (*sort = (enum sort_key)i), 0;
    if (!value)
        return 0;
    return ppw_err_set(err, PPW_EUSAGE,
                       "profile: unknown --sort '%s' (expected incl, excl or calls)", value);
}

static int parse_thread(struct profile_opts *opts, struct ppw_err *err)
{
    const char *value = opts->thread;
    char *end;
    if (!value)
        return 0;
    errno = 0;
    unsigned long index = strtoul(value, &end, 10);
    if (value[0] < '0' || value[0] > '9' || *end || errno || index >= UINT32_MAX)
        return ppw_err_set(err, PPW_EUSAGE, "profile: --thread needs a thread index, not '%s'",
                           value);
    opts->thread_index = (uint32_t)index;
    return 0;
}

static int run_profile(struct profile *p, const struct profile_opts *opts, struct ppw_err *err)
{
    if (opts->thread && !(p->only = ppw_run_find_thread(p->run, opts->thread_index)))
        return ppw_err_set(err, PPW_ENOTFOUND, "%s: no thread %" PRIu32 " in the run", p->run->dir,
                           opts->thread_index);
    if (collect_rows(p))
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    compensate(p);
    if (collect_throttled(p)) /* after compensate: it sums the rows' compensated times */
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    sort_rows(p);
    if (opts->fmt == CLI_JSON)
        print_json(stdout, p);
    else if (opts->fmt == CLI_CSV)
        print_csv(stdout, p);
    else
        print_text(stdout, p);
    return 0;
}

int cmd_profile(int argc, char **argv)
{
    struct profile_opts opts = {0};
    const struct cli_option options[] = {
        {"--format", &opts.format}, {"--thread", &opts.thread}, {"--sort", &opts.sort}};
    struct profile p = {0};
    struct ppw_run *run = NULL;
    char *path = NULL;
    struct ppw_err err;
    ppw_err_clear(&err);
    if (cli_parse(argc, argv, options, 3, &opts.dir, &opts.help, &err) ||
        cli_parse_format_csv(opts.format, &opts.fmt, &err) ||
        parse_sort(opts.sort, &p.sort, &err) || parse_thread(&opts, &err))
        return cli_fail(&err);
    if (opts.help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    int rc = cli_run_dir(opts.dir, &path, &err);
    if (!rc)
        rc = ppw_run_load(path, &run, &err);
    if (!rc) {
        p.run = run;
        rc = run_profile(&p, &opts, &err);
    }
    free(p.rows);
    free(p.throttled);
    ppw_run_free(run);
    free(path);
    return rc ? cli_fail(&err) : cli_finish_output();
}

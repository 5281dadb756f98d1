/* The cost of measuring a run (intrusion.h). */
#include "intrusion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The calibrated cost corrected by the thread's mean window over the
 * calibration's: what ppw did inside the entry point took that much more
 * (or less) in the program than in the calibration loop, while the rest of
 * a probe (the call, the gate test) is the same in both.  A window holds
 * one clock read of its own (half of each bounding read), which costs what
 * the clock gap measured with it says: taken out on both sides, so that a
 * calibration on a slower CPU moment does not shift the correction. */
void ppw_intrusion_probe_costs(const struct ppw_run *run, const struct ppw_run_thread *th,
                               struct ppw_probe_costs *out)
{
    const struct ppw_run_calib *c = &run->calib;
    memset(out, 0, sizeof *out);
    if (!run->has_calib)
        return;
    out->pair_ns = c->pair_ns;
    out->inner_ns = c->inner_ns;
    out->throttled_pair_ns = c->throttled_pair_ns;
    out->source = out->throttled_source = PPW_COST_CALIBRATED;
    if (!th->has_probe || !c->has_windows)
        return;
    const struct ppw_run_probe *w = &th->probe;
    out->windows = w->start_count + w->end_count + w->throttled_count;
    double gap = out->windows ? (double)w->clock_ns / (double)out->windows : 0;
    double gap_calib = c->window_clock_ns;
    if (w->start_count >= PPW_PROBE_WINDOWS_MIN && w->end_count >= PPW_PROBE_WINDOWS_MIN &&
        c->window_start_ns > 0 && c->window_end_ns > 0) {
        double start = (double)w->start_ns / (double)w->start_count;
        double end = (double)w->end_ns / (double)w->end_count;
        double inner = (double)w->start_tail_ns / (double)w->start_count +
                       (double)w->end_head_ns / (double)w->end_count;
        double pair = c->pair_ns + (start - gap - (c->window_start_ns - gap_calib)) +
                      (end - gap - (c->window_end_ns - gap_calib));
        out->pair_ns = pair > 0 ? pair : 0;
        /* a START's tail and an END's head each hold one read's worth of
         * the window's own reads */
        inner = c->inner_ns + (inner - 2 * gap - (c->window_inner_ns - 2 * gap_calib));
        out->inner_ns = inner < 0 ? 0 : inner > out->pair_ns ? out->pair_ns : inner;
        out->source = PPW_COST_IN_SITU;
    }
    if (w->throttled_count >= PPW_PROBE_WINDOWS_MIN && c->window_throttled_ns > 0) {
        double each = (double)w->throttled_ns / (double)w->throttled_count;
        double pair =
            c->throttled_pair_ns + 2 * (each - gap - (c->window_throttled_ns - gap_calib));
        out->throttled_pair_ns = pair > 0 ? pair : 0;
        out->throttled_source = PPW_COST_IN_SITU;
    }
}

void ppw_intrusion_compensate(const struct ppw_probe_costs *c, const struct ppw_run_timer *t,
                              double *incl_ns, double *excl_ns)
{
    /* Why these terms: docs/runtime.md, "Probe-cost calibration and compensation". */
    *incl_ns = (double)t->incl_sum_ns - (double)t->probes_inner * c->pair_ns -
               (double)t->probes_throttled * c->throttled_pair_ns - (double)t->count * c->inner_ns;
    *excl_ns = (double)t->excl_sum_ns - (double)t->probes_child * (c->pair_ns - c->inner_ns) -
               (double)t->throttled_child * c->throttled_pair_ns - (double)t->count * c->inner_ns;
}

void ppw_intrusion_add_timer(struct ppw_run_timer *sum, const struct ppw_run_timer *t)
{
    sum->count += t->count;
    sum->subcalls += t->subcalls;
    sum->incl_sum_ns += t->incl_sum_ns;
    sum->excl_sum_ns += t->excl_sum_ns;
    sum->excl_sumsq_ns2 += t->excl_sumsq_ns2;
    sum->probes_inner += t->probes_inner;
    sum->probes_throttled += t->probes_throttled;
    sum->probes_child += t->probes_child;
    sum->throttled_child += t->throttled_child;
    sum->bytes += t->bytes;
}

/* A region being summed: its timers field by field (all of them, and those
 * of its outermost calls), and its throttled calls; the compensated times
 * and probe costs, which each thread's costs weigh, summed as they come. */
struct region_sum {
    struct ppw_run_timer all, outer;
    uint64_t throttled_calls, sampled_calls;
    double skipped_calls; /* estimated: calls a sampling gate kept in the program's code */
    double comp_outer_incl, comp_all_incl, comp_all_excl, probe_ns;
    bool seen;
};

/* A call of the region made inside another call of it, as the callpath
 * shows: its inclusive time is already in that call's. */
static bool nested_in_itself(const struct ppw_run_timer *t)
{
    for (uint32_t i = 1; i < t->depth; i++)
        if (t->path[i] == t->path[0])
            return true;
    return false;
}

/* Sums every thread's timers and throttles by region; sums[i] is the region
 * run->regions[i] (the reader checked that every id is defined).  Fills
 * in->threads. */
static void sum_regions(const struct ppw_run *run, struct region_sum *sums,
                        struct ppw_intrusion *in)
{
    for (size_t i = 0; i < run->thread_count; i++) {
        const struct ppw_run_thread *th = &run->threads[i];
        struct ppw_intrusion_thread *it = &in->threads[i];
        it->thread = th;
        ppw_intrusion_probe_costs(run, th, &it->costs);
        const struct ppw_probe_costs *c = &it->costs;
        for (size_t j = 0; j < th->timer_count; j++) {
            const struct ppw_run_timer *t = &th->timers[j];
            struct region_sum *s = &sums[ppw_run_find_region(run, t->path[0]) - run->regions];
            double incl, excl;
            ppw_intrusion_compensate(c, t, &incl, &excl);
            ppw_intrusion_add_timer(&s->all, t);
            s->comp_all_incl += incl;
            s->comp_all_excl += excl;
            if (!nested_in_itself(t)) {
                ppw_intrusion_add_timer(&s->outer, t);
                s->comp_outer_incl += incl;
            }
            s->probe_ns += (double)t->count * c->pair_ns;
            it->probes += t->count;
            it->probe_ns += (double)t->count * c->pair_ns;
            s->seen = true;
        }
        for (size_t j = 0; j < th->throttle_count; j++) {
            const struct ppw_run_region *g = ppw_run_find_region(run, th->throttles[j].region);
            struct region_sum *s = &sums[g - run->regions];
            const struct ppw_run_throttle *tr = &th->throttles[j];
            uint64_t calls = tr->calls_after;
            s->throttled_calls += calls;
            s->probe_ns += (double)calls * c->throttled_pair_ns;
            it->probes += calls;
            it->probes_throttled += calls;
            it->probe_ns += (double)calls * c->throttled_pair_ns;
            /* A sampled call runs both probes in full; the calls between
             * two samples cost a few instructions each, not measured. */
            s->sampled_calls += tr->sampled_calls;
            s->skipped_calls += ppw_run_throttle_calls(tr) - (double)calls - (double)tr->sampled_calls;
            s->probe_ns += (double)tr->sampled_calls * c->pair_ns;
            it->probes += tr->sampled_calls;
            it->probes_sampled += tr->sampled_calls;
            it->probe_ns += (double)tr->sampled_calls * c->pair_ns;
            s->seen = true;
        }
        in->threads_in_situ += c->source == PPW_COST_IN_SITU;
    }
    in->nthreads = run->thread_count;
}

static double clamp(double value, bool *clamped)
{
    *clamped = value < 0;
    return *clamped ? 0 : value;
}

static void fill_region(const struct ppw_run *run, const struct region_sum *s, double ratio,
                        struct ppw_intrusion_region *r)
{
    r->calls_skipped = (uint64_t)llround(s->skipped_calls);
    r->probes = s->all.count + s->throttled_calls + s->sampled_calls;
    r->calls = r->probes + r->calls_skipped;
    r->probes_throttled = s->throttled_calls;
    r->probes_sampled = s->sampled_calls;
    r->raw_incl_ns = (double)s->outer.incl_sum_ns;
    r->raw_excl_ns = (double)s->all.excl_sum_ns;
    r->comp_incl_ns = r->raw_incl_ns;
    r->comp_excl_ns = r->raw_excl_ns;
    r->body_ns = s->all.count ? (double)s->all.incl_sum_ns / (double)s->all.count : 0;
    if (!run->has_calib)
        return;
    r->probe_ns = s->probe_ns;
    r->comp_incl_ns = clamp(s->comp_outer_incl, &r->comp_incl_clamped);
    r->comp_excl_ns = clamp(s->comp_all_excl, &r->comp_excl_clamped);
    bool each_clamped;
    r->body_ns = s->all.count ? clamp(s->comp_all_incl, &each_clamped) / (double)s->all.count : 0;
    /* Per call, probes against body; a region without timed calls has no
     * known body. */
    r->flagged = s->all.count && r->probe_ns / (double)r->probes >= ratio * r->body_ns;
}

static int compare_cost(const void *a, const void *b)
{
    const struct ppw_intrusion_region *x = a, *y = b;
    if (x->probe_ns != y->probe_ns)
        return x->probe_ns > y->probe_ns ? -1 : 1;
    return (x->region->id > y->region->id) - (x->region->id < y->region->id);
}

static int collect_regions(const struct ppw_run *run, struct ppw_intrusion *in, struct ppw_err *err)
{
    struct region_sum *sums = calloc(run->region_count ? run->region_count : 1, sizeof *sums);
    in->threads = calloc(run->thread_count ? run->thread_count : 1, sizeof *in->threads);
    if (!sums || !in->threads) {
        free(sums);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    sum_regions(run, sums, in);
    uint64_t timed = 0;
    double timed_ns = 0;
    for (size_t i = 0; i < in->nthreads; i++) {
        const struct ppw_intrusion_thread *it = &in->threads[i];
        timed += it->probes - it->probes_throttled - it->probes_sampled;
        timed_ns += (double)(it->probes - it->probes_throttled - it->probes_sampled) *
                    it->costs.pair_ns;
    }
    in->pair_ns = timed ? timed_ns / (double)timed : 0;
    size_t n = 0;
    for (size_t i = 0; i < run->region_count; i++)
        n += sums[i].seen;
    in->regions = calloc(n ? n : 1, sizeof *in->regions);
    if (!in->regions) {
        free(sums);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < run->region_count; i++) {
        if (!sums[i].seen)
            continue;
        struct ppw_intrusion_region *r = &in->regions[in->nregions++];
        r->region = &run->regions[i];
        fill_region(run, &sums[i], in->flag_ratio, r);
        in->nflagged += r->flagged;
        in->probes += r->probes;
        in->probes_throttled += r->probes_throttled;
        in->probes_sampled += r->probes_sampled;
        in->calls_skipped += r->calls_skipped;
        in->probe_ns += r->probe_ns;
    }
    free(sums);
    if (in->nregions)
        qsort(in->regions, in->nregions, sizeof *in->regions, compare_cost);
    return 0;
}

/* The sampler's cost: measured in the handler when the files say so. */
static void sampler_cost(const struct ppw_run *run, struct ppw_intrusion *in)
{
    uint64_t handler_ns = 0;
    for (size_t i = 0; i < run->thread_count; i++) {
        const struct ppw_run_thread *th = &run->threads[i];
        handler_ns += th->handler_ns;
        for (size_t j = 0; j < th->sample_count; j++)
            in->samples += th->samples[j].count; /* merged entries stand for several */
    }
    if (handler_ns) {
        in->sampler = PPW_SAMPLER_COST_HANDLER;
        in->sampler_ns = (double)handler_ns;
    } else if (in->samples && run->has_calib) {
        in->sampler = PPW_SAMPLER_COST_CALIB;
        in->sampler_ns = (double)in->samples * run->calib.handler_ns;
    }
}

/* The run's span, best source first (enum ppw_intrusion_span). */
static void run_span(const struct ppw_run *run, struct ppw_intrusion *in)
{
    uint64_t start = run->has_info ? run->info.start_mono_ns : 0, last_end = 0, max_cpu = 0;
    for (size_t i = 0; i < run->thread_count; i++) {
        const struct ppw_run_thread *th = &run->threads[i];
        if (!th->ended)
            continue;
        in->cpu_ns += (double)th->cpu_ns;
        last_end = th->end_ns > last_end ? th->end_ns : last_end;
        max_cpu = th->cpu_ns > max_cpu ? th->cpu_ns : max_cpu;
    }
    if (run->has_info && run->finished && run->finish_end_ns >= start) {
        in->span = PPW_SPAN_FINISH;
        in->run_ns = (double)(run->finish_end_ns - start);
    } else if (run->has_info && last_end > start) {
        in->span = PPW_SPAN_THREAD_END;
        in->run_ns = (double)(last_end - start);
    } else if (max_cpu) {
        in->span = PPW_SPAN_THREAD_CPU;
        in->run_ns = (double)max_cpu;
    } else {
        for (size_t i = 0; i < in->nregions; i++) {
            const struct ppw_intrusion_region *r = &in->regions[i];
            if (strcmp(r->region->name, "main") == 0 && r->raw_incl_ns > 0) {
                in->span = PPW_SPAN_MAIN_INCL;
                in->run_ns = r->raw_incl_ns;
            }
        }
    }
}

int ppw_intrusion_compute(const struct ppw_run *run, double flag_ratio, struct ppw_intrusion *out,
                          struct ppw_err *err)
{
    memset(out, 0, sizeof *out);
    if (!isfinite(flag_ratio) || flag_ratio < 0)
        return ppw_err_set(err, PPW_EUSAGE, "the flag ratio must be a finite number >= 0");
    out->run = run;
    out->flag_ratio = flag_ratio;
    out->calibrated = run->has_calib;
    int rc = collect_regions(run, out, err);
    if (rc) {
        ppw_intrusion_free(out);
        return rc;
    }
    sampler_cost(run, out);
    run_span(run, out);
    out->total_ns = out->probe_ns + out->sampler_ns;
    return 0;
}

void ppw_intrusion_free(struct ppw_intrusion *in)
{
    if (!in)
        return;
    free(in->regions);
    free(in->threads);
    in->regions = NULL;
    in->threads = NULL;
    in->nregions = 0;
    in->nthreads = 0;
}

const char *ppw_intrusion_span_name(enum ppw_intrusion_span span)
{
    static const char *const names[] = {"none", "finish", "thread_end", "thread_cpu", "main_incl"};
    return (unsigned)span < sizeof names / sizeof names[0] ? names[span] : "?";
}

const char *ppw_intrusion_sampler_name(enum ppw_intrusion_sampler sampler)
{
    static const char *const names[] = {"none", "handler", "calibration"};
    return (unsigned)sampler < sizeof names / sizeof names[0] ? names[sampler] : "?";
}

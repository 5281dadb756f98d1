/* Text and JSON of an intrusion report (intrusion_view.h). */
#include "intrusion_view.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cli.h"
#include "job.h"
#include "json.h"
#include "read_run.h"
#include "names.h"

static size_t shown(const struct ppw_intrusion *in, size_t top)
{
    return top && top < in->nregions ? top : in->nregions;
}

/* Per call, in ns: what the probes cost. */
static double probe_per_call(const struct ppw_intrusion_region *r)
{
    return r->probes ? r->probe_ns / (double)r->probes : 0;
}

/* ---- text ---- */

static void text_us(FILE *out, double ns)
{
    fprintf(out, " %12.3f", ns / 1000.0);
}

static void text_share(FILE *out, double part, double whole, const char *of)
{
    if (whole > 0)
        fprintf(out, ", %.2f%% of %s", 100.0 * part / whole, of);
}

static void text_calibration(FILE *out, const struct ppw_intrusion *in)
{
    const struct ppw_run_calib *c = &in->run->calib;
    if (in->calibrated) {
        fprintf(out, "calibration: pair %g ns, inner %g ns, throttled pair %g ns", c->pair_ns,
                c->inner_ns, c->throttled_pair_ns);
        if (c->handler_ns > 0) /* runs before December 2026: samples are measured in the run */
            fprintf(out, ", sample %g ns", c->handler_ns);
        putc('\n', out);
    } else
        fputs("calibration: none recorded: probe costs are unknown (shown as 0), "
              "times are not compensated\n",
              out);
    if (in->calibrated && in->threads_in_situ)
        fprintf(out,
                "probe costs in situ: pair %.4g ns on average; %zu of %zu threads corrected by "
                "their probe windows\n",
                in->pair_ns, in->threads_in_situ, in->nthreads);
}

static void text_totals(FILE *out, const struct ppw_intrusion *in)
{
    static const char *const spans[] = {
        "unknown", "wall, start to FINISH", "wall, start to the last thread's end (no FINISH)",
        "the busiest thread's CPU time (no end times)", "main's inclusive time (no end times)"};
    static const char *const sampler[] = {"", " (measured in the handler)",
                                          " (samples x the calibrated cost)"};
    fputs("run: ", out);
    in->span != PPW_SPAN_NONE ? (void)fprintf(out, "%.3f us", in->run_ns / 1000.0)
                              : (void)fputs("-", out);
    fprintf(out, " (%s); CPU %.3f us in %zu thread%s\n", spans[in->span], in->cpu_ns / 1000.0,
            in->run->thread_count, in->run->thread_count == 1 ? "" : "s");
    fprintf(out, "probes: %" PRIu64 " pairs (%" PRIu64 " throttled), %.3f us\n", in->probes,
            in->probes_throttled, in->probe_ns / 1000.0);
    if (in->probes_sampled)
        fprintf(out,
                "throttled call sites (allocation sites after %" PRIu64 " calls, others after %" PRIu64
                "): then 1 call in about %.0f timed (1 in %" PRIu64
                " or fewer: PPW_THROTTLE_SAMPLE, PPW_THROTTLE_SAMPLE_USEC): %" PRIu64
                " pairs timed so; about %" PRIu64
                " calls between them stayed in the program's code (a few instructions each, not "
                "measured)\n",
                in->run->config.throttle_alloc_calls, in->run->config.throttle_calls,
                ((double)in->calls_skipped + (double)in->probes_sampled) /
                    (double)in->probes_sampled,
                in->run->config.throttle_sample, in->probes_sampled, in->calls_skipped);
    fprintf(out, "sampler: %" PRIu64 " samples, %.3f us%s\n", in->samples, in->sampler_ns / 1000.0,
            sampler[in->sampler]);
    fprintf(out, "intrusion: %.3f us", in->total_ns / 1000.0);
    text_share(out, in->total_ns, in->cpu_ns, "CPU time");
    text_share(out, in->total_ns, in->run_ns, "the run");
    putc('\n', out);
    if (in->nflagged)
        fprintf(out,
                "flagged: %zu region%s whose probes cost at least %g x the compensated body "
                "per call (!)\n",
                in->nflagged, in->nflagged == 1 ? "" : "s", in->flag_ratio);
}

/* A region as users name it: outlined code by its source function
 * (ppw_names_region; the run alone, without the binary). */
static const char *region_name(const struct ppw_run_region *g, char *buf, size_t size)
{
    return ppw_names_region(NULL, g->name, g->file, g->line, buf, size);
}

static void text_region(FILE *out, const struct ppw_intrusion *in,
                        const struct ppw_intrusion_region *r)
{
    const struct ppw_run_region *g = r->region;
    fprintf(out, "%10" PRIu64 " %10" PRIu64, r->calls, r->probes);
    text_us(out, r->probe_ns);
    text_us(out, r->raw_incl_ns);
    in->calibrated ? text_us(out, r->comp_incl_ns) : (void)fprintf(out, " %12s", "-");
    putc(r->comp_incl_clamped ? '*' : ' ', out);
    text_us(out, r->raw_excl_ns);
    in->calibrated ? text_us(out, r->comp_excl_ns) : (void)fprintf(out, " %12s", "-");
    putc(r->comp_excl_clamped ? '*' : ' ', out);
    fprintf(out, " %10.1f %12.1f %c ", probe_per_call(r), r->body_ns, r->flagged ? '!' : ' ');
    char name[512];
    cli_text(out, region_name(g, name, sizeof name));
    fprintf(out, " [%s ", ppw_run_region_kind_name(g->kind));
    cli_text(out, g->file);
    fprintf(out, ":%" PRIu32 "]\n", g->line);
}

void intrusion_print_text(FILE *out, const struct ppw_intrusion *in, size_t top)
{
    const struct ppw_run *run = in->run;
    fputs("intrusion ", out);
    cli_text(out, run->dir);
    fprintf(out, " pid=%" PRIu32 "\n", run->pid);
    text_calibration(out, in);
    if (!run->finished)
        fputs("warning: the run did not end normally\n", out);
    text_totals(out, in);
    if (!in->nregions) {
        fputs("no timed regions (the run has no profile)\n", out);
        return;
    }
    fputs("times in microseconds, per call in ns; comp.* are compensated for probe overhead\n\n",
          out);
    fprintf(out, "%10s %10s %12s %12s %12s  %12s %12s  %10s %12s   %s\n", "calls", "probes",
            "probe.cost", "raw.incl", "comp.incl", "raw.excl", "comp.excl", "probe/call",
            "body/call", "region");
    size_t n = shown(in, top);
    for (size_t i = 0; i < n; i++)
        text_region(out, in, &in->regions[i]);
    if (n < in->nregions)
        fprintf(out, "(%zu more regions; --top 0 shows all)\n", in->nregions - n);
    if (in->calibrated)
        for (size_t i = 0; i < in->nregions; i++)
            if (in->regions[i].comp_incl_clamped || in->regions[i].comp_excl_clamped) {
                fputs("* a compensated time was negative and is shown as 0\n", out);
                break;
            }
}

/* ---- JSON ---- */

static void json_key_double(FILE *out, const char *key, double value)
{
    fprintf(out, ",\"%s\":", key);
    json_double(out, value);
}

static void json_share(FILE *out, const char *key, double part, double whole)
{
    fprintf(out, ",\"%s\":", key);
    if (whole > 0)
        json_double(out, part / whole);
    else
        fputs("null", out);
}

static void json_region(FILE *out, const struct ppw_intrusion *in,
                        const struct ppw_intrusion_region *r)
{
    const struct ppw_run_region *g = r->region;
    char name[512];
    fprintf(out, "{\"region\":%" PRIu32 ",\"name\":", g->id);
    json_string(out, region_name(g, name, sizeof name));
    fprintf(out, ",\"kind\":\"%s\",\"file\":", ppw_run_region_kind_name(g->kind));
    json_string(out, g->file);
    fprintf(out,
            ",\"line\":%" PRIu32 ",\"calls\":%" PRIu64 ",\"probes\":%" PRIu64
            ",\"probes_throttled\":%" PRIu64 ",\"probes_sampled\":%" PRIu64
            ",\"calls_skipped\":%" PRIu64,
            g->line, r->calls, r->probes, r->probes_throttled, r->probes_sampled,
            r->calls_skipped);
    json_key_double(out, "probe_ns", r->probe_ns);
    json_key_double(out, "raw_incl_ns", r->raw_incl_ns);
    json_key_double(out, "raw_excl_ns", r->raw_excl_ns);
    if (in->calibrated) {
        json_key_double(out, "comp_incl_ns", r->comp_incl_ns);
        json_key_double(out, "comp_excl_ns", r->comp_excl_ns);
    } else {
        fputs(",\"comp_incl_ns\":null,\"comp_excl_ns\":null", out);
    }
    json_key_double(out, "probe_per_call_ns", probe_per_call(r));
    json_key_double(out, "body_per_call_ns", r->body_ns);
    fprintf(out, ",\"comp_incl_clamped\":%s,\"comp_excl_clamped\":%s,\"flagged\":%s}",
            r->comp_incl_clamped ? "true" : "false", r->comp_excl_clamped ? "true" : "false",
            r->flagged ? "true" : "false");
}

static void json_calibration(FILE *out, const struct ppw_intrusion *in)
{
    const struct ppw_run_calib *c = &in->run->calib;
    fputs(",\"calibration\":", out);
    if (!in->calibrated) {
        fputs("null", out);
        return;
    }
    fputs("{\"pair_ns\":", out);
    json_double(out, c->pair_ns);
    json_key_double(out, "inner_ns", c->inner_ns);
    json_key_double(out, "throttled_pair_ns", c->throttled_pair_ns);
    json_key_double(out, "handler_ns", c->handler_ns);
    putc('}', out);
}

static const char *cost_source_name(enum ppw_probe_cost_source source)
{
    static const char *const names[] = {"none", "calibrated", "in_situ"};
    return (unsigned)source < sizeof names / sizeof names[0] ? names[source] : "?";
}

/* The probe costs compensation used, per thread. */
static void json_probe_costs(FILE *out, const struct ppw_intrusion *in)
{
    fputs(",\"probe_costs\":{\"pair_ns\":", out);
    json_double(out, in->pair_ns);
    fprintf(out, ",\"in_situ_threads\":%zu,\"threads\":[", in->threads_in_situ);
    for (size_t i = 0; i < in->nthreads; i++) {
        const struct ppw_intrusion_thread *t = &in->threads[i];
        fprintf(out, "%s{\"thread\":%" PRIu32 ",\"source\":\"%s\",\"throttled_source\":\"%s\"",
                i ? "," : "", t->thread->index, cost_source_name(t->costs.source),
                cost_source_name(t->costs.throttled_source));
        json_key_double(out, "pair_ns", t->costs.pair_ns);
        json_key_double(out, "inner_ns", t->costs.inner_ns);
        json_key_double(out, "throttled_pair_ns", t->costs.throttled_pair_ns);
        fprintf(out, ",\"windows\":%" PRIu64 ",\"probes\":%" PRIu64, t->costs.windows, t->probes);
        json_key_double(out, "probe_ns", t->probe_ns);
        putc('}', out);
    }
    fputs("]}", out);
}

void intrusion_print_json(FILE *out, const struct ppw_intrusion *in, size_t top)
{
    const struct ppw_run *run = in->run;
    fputs("{\"dir\":", out);
    json_string(out, run->dir);
    fprintf(out, ",\"pid\":%" PRIu32 ",\"finished\":%s,\"calibrated\":%s", run->pid,
            run->finished ? "true" : "false", in->calibrated ? "true" : "false");
    json_calibration(out, in);
    json_probe_costs(out, in);
    json_key_double(out, "flag_ratio", in->flag_ratio);
    json_key_double(out, "run_ns", in->run_ns);
    fprintf(out, ",\"run_span\":\"%s\"", ppw_intrusion_span_name(in->span));
    json_key_double(out, "cpu_ns", in->cpu_ns);
    fprintf(out,
            ",\"threads\":%zu,\"probes\":%" PRIu64 ",\"probes_throttled\":%" PRIu64
            ",\"probes_sampled\":%" PRIu64 ",\"calls_skipped\":%" PRIu64
            ",\"throttle_sample\":%" PRIu64,
            run->thread_count, in->probes, in->probes_throttled, in->probes_sampled,
            in->calls_skipped, run->config.throttle_sample);
    json_key_double(out, "probe_ns", in->probe_ns);
    fprintf(out, ",\"samples\":%" PRIu64, in->samples);
    json_key_double(out, "sampler_ns", in->sampler_ns);
    fprintf(out, ",\"sampler_cost\":\"%s\"", ppw_intrusion_sampler_name(in->sampler));
    json_key_double(out, "total_ns", in->total_ns);
    json_share(out, "share_of_cpu", in->total_ns, in->cpu_ns);
    json_share(out, "share_of_run", in->total_ns, in->run_ns);
    fprintf(out, ",\"flagged\":%zu,\"regions_total\":%zu,\"regions\":[", in->nflagged,
            in->nregions);
    size_t n = shown(in, top);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n" : "\n", out);
        json_region(out, in, &in->regions[i]);
    }
    fputs("]}", out);
}

/* ---- csv ---- */

void intrusion_print_csv(FILE *out, const struct ppw_intrusion *in, size_t top)
{
    size_t n = top && top < in->nregions ? top : in->nregions;
    fputs("region,name,kind,file,line,calls,probes,probes_throttled,probe_ns,raw_incl_ns,"
          "raw_excl_ns,comp_incl_ns,comp_excl_ns,probe_per_call_ns,body_per_call_ns,flagged\n",
          out);
    for (size_t i = 0; i < n; i++) {
        const struct ppw_intrusion_region *r = &in->regions[i];
        const struct ppw_run_region *g = r->region;
        fprintf(out, "%" PRIu32 ",", g->id);
        char name[512];
        cli_csv(out, region_name(g, name, sizeof name));
        fprintf(out, ",%s,", ppw_run_region_kind_name(g->kind));
        cli_csv(out, g->file);
        fprintf(out, ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.17g,%.17g,%.17g,", g->line,
                r->calls, r->probes, r->probes_throttled, r->probe_ns, r->raw_incl_ns,
                r->raw_excl_ns);
        if (in->calibrated) /* compensated times are unknown without a calibration */
            fprintf(out, "%.17g,%.17g", r->comp_incl_ns, r->comp_excl_ns);
        else
            putc(',', out);
        fprintf(out, ",%.17g,%.17g,%s\n", probe_per_call(r), r->body_ns,
                r->flagged ? "true" : "false");
    }
}

/* ---- loading ---- */

int intrusion_view_load(const char *dir, double flag_ratio, struct ppw_intrusion **out,
                        struct ppw_run ***runs, size_t *n, uint32_t **ranks, struct ppw_err *err)
{
    *out = NULL;
    *runs = NULL;
    *n = 0;
    *ranks = NULL;
    char *source = NULL;
    int rc = cli_run_dir(dir, &source, err);
    struct ppw_job *job = NULL;
    size_t count = 1;
    if (!rc && ppw_job_is_dir(source)) {
        rc = ppw_job_scan(source, &job, err);
        count = rc ? 0 : job->count;
    }
    if (!rc && (!(*out = calloc(count ? count : 1, sizeof **out)) ||
                !(*runs = calloc(count ? count : 1, sizeof **runs)) ||
                !(*ranks = calloc(count ? count : 1, sizeof **ranks))))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < count; i++) {
        struct ppw_run *run = NULL;
        struct ppw_err run_err;
        const char *path = job ? job->ranks[i].dir : source;
        if (ppw_run_load_merged(path, &run, &run_err) != 0)
            continue; /* the findings already say which ranks are unreadable */
        rc = ppw_intrusion_compute(run, flag_ratio, &(*out)[*n], err);
        if (rc) {
            ppw_run_free(run);
            break;
        }
        (*runs)[*n] = run;
        (*ranks)[(*n)++] = job ? job->ranks[i].rank : 0;
    }
    ppw_job_free(job);
    free(source);
    return rc;
}

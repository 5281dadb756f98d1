/* ppw-blame intrusion: what measuring a run cost, per region and in all:
 * probes executed, their calibrated cost, the sampler's cost, raw and
 * compensated times, and the regions whose probes cost as much as their
 * body.  On a job directory (MPI), one line per rank and their sum, or one
 * rank's whole report with --rank.  Output shapes: docs/ppw-blame.md. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "intrusion.h"
#include "intrusion_view.h"
#include "job.h"
#include "json.h"
#include "read_run.h"

static const char usage[] =
    "usage: ppw-blame intrusion [DIR] [--format text|json|csv] [--flag-ratio R] [--top N]\n"
    "                           [--rank R]\n"
    "\n"
    "Prints what measuring the run in DIR cost (default: the ppw-* directory of the\n"
    "current directory modified last): probe pairs executed and their calibrated cost,\n"
    "the sampler's cost, the total against the run's time, and per region the raw and\n"
    "compensated times, flagging regions whose probes cost as much as their body.\n\n"
    "  --format FORMAT   text (default), json or csv (the regions; a job: one record\n"
    "                    per rank)\n"
    "  --flag-ratio R    flag a region when its probes cost at least R x its compensated\n"
    "                    body per call (default 0.5)\n"
    "  --top N           the N regions that cost most (default 20; 0: all)\n"
    "  --rank R          on a job directory (MPI): rank R's report instead of one line\n"
    "                    per rank\n"
    "  -h, --help        show this help\n";

enum { TOP_DEFAULT = 20 };

struct intrusion_opts {
    const char *dir, *format, *ratio, *top, *rank;
    enum cli_format fmt;
    bool help;
    double flag_ratio;
    size_t top_n;
    uint32_t rank_id;
};

static int parse_count(const char *value, const char *option, uint64_t max, uint64_t *out,
                       struct ppw_err *err)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(value, &end, 10);
    if (value[0] < '0' || value[0] > '9' || *end || errno || n > max)
        return ppw_err_set(err, PPW_EUSAGE, "intrusion: %s needs a number, not '%s'", option,
                           value);
    *out = n;
    return 0;
}

static int check_opts(struct intrusion_opts *o, struct ppw_err *err)
{
    uint64_t n = TOP_DEFAULT;
    o->flag_ratio = PPW_INTRUSION_FLAG_RATIO;
    if (o->ratio) {
        char *end;
        errno = 0;
        o->flag_ratio = strtod(o->ratio, &end);
        if (end == o->ratio || *end || errno || !isfinite(o->flag_ratio) || o->flag_ratio < 0)
            return ppw_err_set(err, PPW_EUSAGE,
                               "intrusion: --flag-ratio needs a number >= 0, not '%s'", o->ratio);
    }
    if (o->top && parse_count(o->top, "--top", SIZE_MAX, &n, err))
        return PPW_EUSAGE;
    o->top_n = (size_t)n;
    if (o->rank && parse_count(o->rank, "--rank", UINT32_MAX - 1, &n, err))
        return PPW_EUSAGE;
    o->rank_id = (uint32_t)n;
    return 0;
}

/* ---- one run ---- */

static int report_run(const char *dir, const struct intrusion_opts *o, struct ppw_err *err)
{
    struct ppw_run *run = NULL;
    struct ppw_intrusion in;
    int rc = ppw_run_load_merged(dir, &run, err);
    if (!rc)
        rc = ppw_intrusion_compute(run, o->flag_ratio, &in, err);
    if (!rc) {
        if (o->fmt == CLI_JSON) {
            intrusion_print_json(stdout, &in, o->top_n);
            putchar('\n');
        } else if (o->fmt == CLI_CSV) {
            intrusion_print_csv(stdout, &in, o->top_n);
        } else {
            intrusion_print_text(stdout, &in, o->top_n);
        }
        ppw_intrusion_free(&in);
    }
    ppw_run_free(run);
    return rc;
}

/* ---- a job: every rank ---- */

struct rank_report {
    struct ppw_run *run; /* NULL: the rank could not be read (err) */
    struct ppw_intrusion in;
    struct ppw_err err;
};

struct job_totals {
    uint64_t probes, samples;
    double probe_ns, sampler_ns, total_ns, cpu_ns;
    size_t flagged, read;
    uint32_t size; /* the MPI job's size, else the highest rank + 1 */
};

static void add_rank(struct job_totals *t, const struct ppw_job_rank *jr,
                     const struct rank_report *r)
{
    uint32_t size = r->run && r->run->has_mpi ? r->run->mpi.size : jr->rank + 1;
    t->size = size > t->size ? size : t->size;
    if (!r->run)
        return;
    t->read++;
    t->probes += r->in.probes;
    t->samples += r->in.samples;
    t->probe_ns += r->in.probe_ns;
    t->sampler_ns += r->in.sampler_ns;
    t->total_ns += r->in.total_ns;
    t->cpu_ns += r->in.cpu_ns;
    t->flagged += r->in.nflagged;
}

static int load_ranks(const struct ppw_job *job, const struct intrusion_opts *o,
                      struct rank_report *reports, struct job_totals *totals)
{
    for (size_t i = 0; i < job->count; i++) {
        struct rank_report *r = &reports[i];
        ppw_err_clear(&r->err);
        int rc = ppw_run_load_merged(job->ranks[i].dir, &r->run, &r->err);
        if (!rc && (rc = ppw_intrusion_compute(r->run, o->flag_ratio, &r->in, &r->err)) != 0) {
            ppw_run_free(r->run);
            r->run = NULL;
        }
        if (rc == PPW_ENOMEM)
            return rc;
        add_rank(totals, &job->ranks[i], r);
    }
    return 0;
}

/* Ranks below the job's size without a directory (job->ranks is sorted). */
static void text_missing(FILE *out, const struct ppw_job *job, uint32_t size)
{
    size_t k = 0, n = 0;
    for (uint32_t r = 0; r < size; r++) {
        while (k < job->count && job->ranks[k].rank < r)
            k++;
        if (k < job->count && job->ranks[k].rank == r)
            continue;
        fprintf(out, "%s%" PRIu32, n++ ? ", " : "warning: ranks missing (no run directory): ", r);
    }
    if (n)
        putc('\n', out);
}

static void text_job(FILE *out, const struct ppw_job *job, const struct rank_report *reports,
                     const struct job_totals *t)
{
    fputs("intrusion ", out);
    cli_text(out, job->dir);
    fprintf(out, ": job of %" PRIu32 " ranks (%zu read)\n", t->size, t->read);
    fputs("times in microseconds; each rank with its own calibration\n\n", out);
    fprintf(out, "%6s %12s %12s %10s %12s %12s %7s %7s  %s\n", "rank", "probes", "probe.cost",
            "samples", "sampler", "intrusion", "%cpu", "flagged", "dir");
    for (size_t i = 0; i < job->count; i++) {
        const struct rank_report *r = &reports[i];
        fprintf(out, "%6" PRIu32, job->ranks[i].rank);
        if (!r->run) {
            fputs("  error: ", out);
            cli_text(out, r->err.message);
            putc('\n', out);
            continue;
        }
        fprintf(out, " %12" PRIu64 " %12.3f %10" PRIu64 " %12.3f %12.3f", r->in.probes,
                r->in.probe_ns / 1000.0, r->in.samples, r->in.sampler_ns / 1000.0,
                r->in.total_ns / 1000.0);
        r->in.cpu_ns > 0 ? (void)fprintf(out, " %7.2f", 100.0 * r->in.total_ns / r->in.cpu_ns)
                         : (void)fprintf(out, " %7s", "-");
        fprintf(out, " %7zu%s ", r->in.nflagged, r->in.calibrated ? " " : "?");
        cli_text(out, job->ranks[i].dir);
        putc('\n', out);
    }
    fprintf(out, "%6s %12" PRIu64 " %12.3f %10" PRIu64 " %12.3f %12.3f", "total", t->probes,
            t->probe_ns / 1000.0, t->samples, t->sampler_ns / 1000.0, t->total_ns / 1000.0);
    t->cpu_ns > 0 ? (void)fprintf(out, " %7.2f", 100.0 * t->total_ns / t->cpu_ns)
                  : (void)fprintf(out, " %7s", "-");
    fprintf(out, " %7zu\n\n", t->flagged);
    text_missing(out, job, t->size);
    for (size_t i = 0; i < job->count; i++)
        if (reports[i].run && !reports[i].in.calibrated) {
            fputs("?: no calibration record: probe costs unknown (0)\n", out);
            break;
        }
    fputs("'ppw-blame intrusion DIR --rank R' shows a rank's regions\n", out);
}

/* A job as CSV: one record per rank directory (an unreadable one with its
 * error), no total (a sum is one step away in any CSV tool). */
static void csv_job(FILE *out, const struct ppw_job *job, const struct rank_report *reports)
{
    fputs("rank,dir,probes,probe_ns,samples,sampler_ns,total_ns,cpu_ns,flagged,calibrated,"
          "error\n",
          out);
    for (size_t i = 0; i < job->count; i++) {
        const struct rank_report *r = &reports[i];
        fprintf(out, "%" PRIu32 ",", job->ranks[i].rank);
        cli_csv(out, job->ranks[i].dir);
        if (!r->run) {
            fputs(",,,,,,,,,", out);
            cli_csv(out, r->err.message);
            putc('\n', out);
            continue;
        }
        fprintf(out, ",%" PRIu64 ",%.17g,%" PRIu64 ",%.17g,%.17g,%.17g,%zu,%s,\n", r->in.probes,
                r->in.probe_ns, r->in.samples, r->in.sampler_ns, r->in.total_ns, r->in.cpu_ns,
                r->in.nflagged, r->in.calibrated ? "true" : "false");
    }
}

static void json_job(FILE *out, const struct ppw_job *job, const struct rank_report *reports,
                     const struct job_totals *t, size_t top)
{
    fputs("{\"job\":", out);
    json_string(out, job->dir);
    fprintf(out, ",\"size\":%" PRIu32 ",\"ranks_read\":%zu,\"ranks\":[", t->size, t->read);
    for (size_t i = 0; i < job->count; i++) {
        fprintf(out, "%s{\"rank\":%" PRIu32 ",\"dir\":", i ? ",\n" : "\n", job->ranks[i].rank);
        json_string(out, job->ranks[i].dir);
        if (reports[i].run) {
            fputs(",\"intrusion\":", out);
            intrusion_print_json(out, &reports[i].in, top);
        } else {
            fputs(",\"error\":", out);
            json_string(out, reports[i].err.message);
        }
        putc('}', out);
    }
    fprintf(out, "],\n\"total\":{\"probes\":%" PRIu64 ",\"probe_ns\":", t->probes);
    json_double(out, t->probe_ns);
    fprintf(out, ",\"samples\":%" PRIu64 ",\"sampler_ns\":", t->samples);
    json_double(out, t->sampler_ns);
    fputs(",\"total_ns\":", out);
    json_double(out, t->total_ns);
    fputs(",\"cpu_ns\":", out);
    json_double(out, t->cpu_ns);
    fputs(",\"share_of_cpu\":", out);
    t->cpu_ns > 0 ? json_double(out, t->total_ns / t->cpu_ns) : (void)fputs("null", out);
    fprintf(out, ",\"flagged\":%zu}}\n", t->flagged);
}

static int report_job(const char *dir, const struct intrusion_opts *o, struct ppw_err *err)
{
    struct ppw_job *job = NULL;
    int rc = ppw_job_scan(dir, &job, err);
    if (rc)
        return rc;
    if (o->rank) {
        for (size_t i = 0; i < job->count; i++)
            if (job->ranks[i].rank == o->rank_id) {
                rc = report_run(job->ranks[i].dir, o, err);
                ppw_job_free(job);
                return rc;
            }
        ppw_job_free(job);
        return ppw_err_set(err, PPW_ENOTFOUND, "%s: no run directory of rank %" PRIu32, dir,
                           o->rank_id);
    }
    struct rank_report *reports = calloc(job->count, sizeof *reports);
    struct job_totals totals = {0};
    if (!reports)
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    if (!rc && load_ranks(job, o, reports, &totals))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    if (!rc && !totals.read)
        rc = ppw_err_set(err, reports[0].err.code,
                         "%s: no rank could be read (rank %" PRIu32 ": %s)", dir,
                         job->ranks[0].rank, reports[0].err.message);
    if (!rc && o->fmt == CLI_JSON)
        json_job(stdout, job, reports, &totals, o->top_n);
    else if (!rc && o->fmt == CLI_CSV)
        csv_job(stdout, job, reports);
    else if (!rc)
        text_job(stdout, job, reports, &totals);
    for (size_t i = 0; reports && i < job->count; i++) {
        ppw_intrusion_free(&reports[i].in);
        ppw_run_free(reports[i].run);
    }
    free(reports);
    ppw_job_free(job);
    return rc;
}

int cmd_intrusion(int argc, char **argv)
{
    struct intrusion_opts o = {0};
    const struct cli_option options[] = {{"--format", &o.format},
                                         {"--flag-ratio", &o.ratio},
                                         {"--top", &o.top},
                                         {"--rank", &o.rank}};
    char *path = NULL;
    struct ppw_err err;
    ppw_err_clear(&err);
    if (cli_parse(argc, argv, options, 4, &o.dir, &o.help, &err) ||
        cli_parse_format_csv(o.format, &o.fmt, &err) || check_opts(&o, &err))
        return cli_fail(&err);
    if (o.help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    int rc = cli_run_dir(o.dir, &path, &err);
    if (!rc && ppw_job_is_dir(path))
        rc = report_job(path, &o, &err);
    else if (!rc && o.rank)
        rc =
            ppw_err_set(&err, PPW_EUSAGE, "%s: --rank needs a job directory (of an MPI run)", path);
    else if (!rc)
        rc = report_run(path, &o, &err);
    free(path);
    return rc ? cli_fail(&err) : cli_finish_output();
}

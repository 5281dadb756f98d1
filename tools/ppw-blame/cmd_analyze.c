/* ppw-blame analyze: findings ordered by time lost, the hotspots, and the
 * intrusion report (analyze.h does the work).  Output shapes and
 * thresholds are documented in docs/ppw-blame.md. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cli.h"
#include "intrusion.h"
#include "intrusion_view.h"
#include "job.h"
#include "json.h"
#include "read_run.h"
#include "view.h"

static const char usage[] =
    "usage: ppw-blame analyze [DIR...] [--format text|json|csv] [--binary BIN] [--force]\n"
    "                         [--baseline FILE] [threshold options]\n\n"
    "Finds what is wrong in the run (or MPI job) DIR: waits at barriers, locks,\n"
    "conditions and messages beyond what they cost on this machine (ppw-blame\n"
    "calibrate), many small transfers, load imbalance by thread or rank, region and\n"
    "variable, Coven's rules, and the cause of the longest waits when the run has a\n"
    "trace.  Each finding says where, how much time it loses, the evidence and a hint;\n"
    "findings are ordered by time lost.  Several DIRs (runs at different thread or\n"
    "rank counts) add their parallel efficiency.  Then the hotspots and the\n"
    "intrusion report (ppw-blame intrusion).\n\n"
    "  --baseline FILE      baseline costs (default: $PPW_BASELINE, else the file\n"
    "                       ppw-blame calibrate wrote for this host; else built-in)\n"
    "  --hotspot PCT        functions with PCT%% of the samples are hotspots (10)\n"
    "  --deviation X        max/avg across threads or ranks that is imbalance (1.3)\n"
    "  --baseline-factor X  mean cost above X times the baseline is waiting (4)\n"
    "  --min-loss PCT       drop findings that lose less than PCT%% of the run (5)\n"
    "  --many-calls N       transfers at one site that are many (10000)\n"
    "  --small-factor X     a transfer under X times the latency is small (20)\n"
    "  --cpu-util PCT       Coven: CPU utilisation at or below PCT%% (50)\n"
    "  --busy-diff PCT      Coven: busy fractions differing by more than PCT points (35)\n"
    "  --comm PCT           Coven: more than PCT%% of the time communicating (5)\n"
    "  --efficiency X       parallel efficiency below X scales poorly (0.7)\n"
    "  --flag-ratio R       intrusion: flag regions whose probes cost R of their body (0.25)\n"
    "  --format FORMAT      text (default), json or csv (the findings)\n"
    "  --binary, --force    as for 'ppw-blame report'\n"
    "  -h, --help           show this help\n";

struct number_option {
    const char *name;
    double *value;
    double min, max;
};

static int parse_number(const char *name, const char *text, double min, double max, double *out,
                        struct ppw_err *err)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v) || v < min || v > max)
        return ppw_err_set(err, PPW_EUSAGE, "analyze: %s needs a number from %g to %g, not '%s'",
                           name, min, max, text);
    *out = v;
    return 0;
}

struct options {
    const char **dirs;
    size_t ndirs;
    const char *format, *binary, *baseline;
    bool force, help;
    enum cli_format fmt;
    double flag_ratio;
    struct analyze_thresholds t;
};

static int parse(int argc, char **argv, struct options *o, struct ppw_err *err)
{
    double many_calls = (double)o->t.many_calls;
    const struct number_option numbers[] = {
        {"--hotspot", &o->t.hotspot_pct, 0, 100},
        {"--deviation", &o->t.deviation, 1, 1e6},
        {"--baseline-factor", &o->t.baseline_factor, 1, 1e9},
        {"--min-loss", &o->t.min_loss_pct, 0, 100},
        {"--many-calls", &many_calls, 1, 1e15},
        {"--small-factor", &o->t.small_factor, 1, 1e9},
        {"--cpu-util", &o->t.cpu_util_pct, 0, 100},
        {"--busy-diff", &o->t.busy_diff_pct, 0, 100},
        {"--comm", &o->t.comm_pct, 0, 100},
        {"--efficiency", &o->t.efficiency, 0, 1},
        {"--flag-ratio", &o->flag_ratio, 0, 1e6},
    };
    const struct cli_option strings[] = {
        {"--format", &o->format}, {"--binary", &o->binary}, {"--baseline", &o->baseline}};
    o->dirs = calloc((size_t)argc, sizeof *o->dirs);
    if (!o->dirs)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    bool options_end = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options_end || a[0] != '-' || strcmp(a, "-") == 0) {
            o->dirs[o->ndirs++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            options_end = true;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = true;
            continue;
        }
        if (strcmp(a, "--force") == 0) {
            o->force = true;
            continue;
        }
        int matched = 0;
        for (size_t k = 0; k < sizeof strings / sizeof strings[0] && !matched; k++) {
            matched = cli_option_value(argc, argv, &i, strings[k].name, strings[k].value, err);
            if (matched < 0)
                return matched;
        }
        for (size_t k = 0; k < sizeof numbers / sizeof numbers[0] && !matched; k++) {
            const char *text;
            matched = cli_option_value(argc, argv, &i, numbers[k].name, &text, err);
            if (matched < 0)
                return matched;
            if (matched && parse_number(numbers[k].name, text, numbers[k].min, numbers[k].max,
                                        numbers[k].value, err))
                return PPW_EUSAGE;
        }
        if (!matched)
            return ppw_err_set(err, PPW_EUSAGE, "analyze: unknown option '%s' (see --help)", a);
    }
    o->t.many_calls = (uint64_t)many_calls;
    return cli_parse_format_csv(o->format, &o->fmt, err);
}

/* ---- output ---- */

static void print_location(FILE *out, const struct analyze_finding *f)
{
    if (f->region[0])
        fprintf(out, "%s", f->region);
    if (f->file[0]) {
        fprintf(out, " at %s", view_basename(f->file));
        if (f->line)
            fprintf(out, ":%" PRIu32, f->line);
        if (f->col)
            fprintf(out, ":%" PRIu32, f->col);
    }
    if (f->variable[0])
        fprintf(out, "%son %s", f->region[0] || f->file[0] ? ", " : "", f->variable);
}

static void print_text(FILE *out, const struct analyze_result *r, const char *dir,
                       const struct ppw_intrusion *intr, size_t nintr, const uint32_t *ranks)
{
    fprintf(out, "analyze: %s: %.3f s of wall time, %.3f %s-seconds, %u %s%s compared\n", dir,
            r->run_s, r->thread_s, r->job ? "rank" : "thread", r->groups,
            r->job ? "rank" : "thread", r->groups == 1 ? "" : "s");
    fprintf(out,
            "baseline: %s (barrier %.1f us, lock %.2f us, condition %.1f us, message "
            "%.2f us)\n",
            r->baseline_source, r->baseline.barrier2_ns / 1e3, r->baseline.lock_ns / 1e3,
            r->baseline.cond_roundtrip_ns / 2e3, r->baseline.mpi_latency_ns / 1e3);
    if (!r->has_trace)
        fputs("note: no trace (PPW_MODE=profile,trace adds cause analysis)\n", out);
    if (r->scaling[0])
        fprintf(out, "scaling: %s\n", r->scaling);
    if (!r->nfindings)
        fputs("\nno finding above the thresholds\n", out);
    for (size_t i = 0; i < r->nfindings; i++) {
        const struct analyze_finding *f = &r->findings[i];
        fprintf(out, "\n%zu. %s [%s]: %.3f s lost (%.1f%%)\n   where: ", i + 1,
                analyze_pattern_title(f->pattern), analyze_pattern_name(f->pattern), f->lost_s,
                f->lost_pct);
        print_location(out, f);
        fprintf(out, "\n   evidence: %s\n", f->evidence);
        if (f->cause[0])
            fprintf(out, "   cause: %s\n", f->cause);
        fprintf(out, "   hint: %s\n", analyze_pattern_hint(f->pattern));
    }
    if (r->dropped)
        fprintf(out, "\n(%zu finding%s under --min-loss left out)\n", r->dropped,
                r->dropped == 1 ? "" : "s");
    if (r->nhotspots) {
        fputs("\nhotspots (self samples):\n", out);
        for (size_t i = 0; i < r->nhotspots; i++)
            fprintf(out, "  %5.1f%%  %s\n", r->hotspots[i].pct, r->hotspots[i].function);
    }
    for (size_t i = 0; i < nintr; i++) {
        if (nintr > 1)
            fprintf(out, "\nrank %" PRIu32 ":", ranks[i]);
        fputc('\n', out);
        intrusion_print_text(out, &intr[i], 5);
    }
}

static void json_finding(FILE *out, const struct analyze_finding *f)
{
    fputs("{\"pattern\":", out);
    json_string(out, analyze_pattern_name(f->pattern));
    fputs(",\"title\":", out);
    json_string(out, analyze_pattern_title(f->pattern));
    fputs(",\"lost_s\":", out);
    json_double(out, f->lost_s);
    fputs(",\"lost_pct\":", out);
    json_double(out, f->lost_pct);
    fputs(",\"region\":", out);
    json_string_or_null(out, f->region[0] ? f->region : NULL);
    fputs(",\"file\":", out);
    json_string_or_null(out, f->file[0] ? f->file : NULL);
    fprintf(out, ",\"line\":%" PRIu32 ",\"col\":%" PRIu32 ",\"variable\":", f->line, f->col);
    json_string_or_null(out, f->variable[0] ? f->variable : NULL);
    fputs(",\"evidence\":", out);
    json_string(out, f->evidence);
    fputs(",\"cause\":", out);
    json_string_or_null(out, f->cause[0] ? f->cause : NULL);
    fputs(",\"hint\":", out);
    json_string(out, analyze_pattern_hint(f->pattern));
    putc('}', out);
}

/* The findings as CSV, one record each, in order (the text report's other
 * parts, hotspots and intrusion, are in text and JSON). */
static void print_csv(FILE *out, const struct analyze_result *r)
{
    fputs("rank,pattern,title,lost_s,lost_pct,region,file,line,col,variable,evidence,cause,hint\n",
          out);
    for (size_t i = 0; i < r->nfindings; i++) {
        const struct analyze_finding *f = &r->findings[i];
        fprintf(out, "%zu,%s,", i + 1, analyze_pattern_name(f->pattern));
        cli_csv(out, analyze_pattern_title(f->pattern));
        fprintf(out, ",%.9g,%.6g,", f->lost_s, f->lost_pct);
        cli_csv(out, f->region);
        putc(',', out);
        cli_csv(out, f->file);
        fprintf(out, ",%" PRIu32 ",%" PRIu32 ",", f->line, f->col);
        cli_csv(out, f->variable);
        putc(',', out);
        cli_csv(out, f->evidence);
        putc(',', out);
        cli_csv(out, f->cause);
        putc(',', out);
        cli_csv(out, analyze_pattern_hint(f->pattern));
        putc('\n', out);
    }
}

static void print_json(FILE *out, const struct analyze_result *r, const struct options *o,
                       const struct ppw_intrusion *intr, size_t nintr, const uint32_t *ranks)
{
    fputs("{\"dir\":", out);
    json_string(out, o->dirs[0]);
    fputs(",\"run_s\":", out);
    json_double(out, r->run_s);
    fputs(",\"thread_s\":", out);
    json_double(out, r->thread_s);
    fprintf(out, ",\"group\":\"%s\",\"groups\":%u,\"has_trace\":%s,\"baseline\":{\"source\":",
            r->job ? "rank" : "thread", r->groups, r->has_trace ? "true" : "false");
    json_string(out, r->baseline_source);
    fputs(",\"barrier_ns\":", out);
    json_double(out, r->baseline.barrier2_ns);
    fputs(",\"lock_ns\":", out);
    json_double(out, r->baseline.lock_ns);
    fputs(",\"cond_roundtrip_ns\":", out);
    json_double(out, r->baseline.cond_roundtrip_ns);
    fputs(",\"mpi_latency_ns\":", out);
    json_double(out, r->baseline.mpi_latency_ns);
    fputs("},\"thresholds\":{", out);
    const struct analyze_thresholds *t = &o->t;
    fprintf(out,
            "\"hotspot_pct\":%g,\"deviation\":%g,\"baseline_factor\":%g,\"min_loss_pct\":%g,"
            "\"many_calls\":%" PRIu64 ",\"small_factor\":%g,\"cpu_util_pct\":%g,"
            "\"busy_diff_pct\":%g,\"comm_pct\":%g,\"efficiency\":%g,\"flag_ratio\":%g}",
            t->hotspot_pct, t->deviation, t->baseline_factor, t->min_loss_pct, t->many_calls,
            t->small_factor, t->cpu_util_pct, t->busy_diff_pct, t->comm_pct, t->efficiency,
            o->flag_ratio);
    fputs(",\"scaling\":", out);
    json_string_or_null(out, r->scaling[0] ? r->scaling : NULL);
    fputs(",\"findings\":[", out);
    for (size_t i = 0; i < r->nfindings; i++) {
        fputs(i ? ",\n" : "\n", out);
        json_finding(out, &r->findings[i]);
    }
    fprintf(out, "],\"dropped\":%zu,\"hotspots\":[", r->dropped);
    for (size_t i = 0; i < r->nhotspots; i++) {
        fputs(i ? ",{\"function\":" : "{\"function\":", out);
        json_string(out, r->hotspots[i].function);
        fputs(",\"pct\":", out);
        json_double(out, r->hotspots[i].pct);
        fprintf(out, ",\"samples\":%" PRIu64 "}", r->hotspots[i].samples);
    }
    fputs("],\"intrusion\":[", out);
    for (size_t i = 0; i < nintr; i++) {
        fprintf(out, "%s{\"rank\":", i ? "," : "");
        if (r->job)
            fprintf(out, "%" PRIu32, ranks[i]);
        else
            fputs("null", out);
        fputs(",\"report\":", out);
        intrusion_print_json(out, &intr[i], 0);
        putc('}', out);
    }
    fputs("]}\n", out);
}

int cmd_analyze(int argc, char **argv)
{
    struct options o = {.flag_ratio = 0.25};
    analyze_default_thresholds(&o.t);
    struct ppw_err err;
    ppw_err_clear(&err);
    if (parse(argc, argv, &o, &err)) {
        free(o.dirs);
        return cli_fail(&err);
    }
    if (o.help) {
        free(o.dirs);
        fputs(usage, stdout);
        return cli_finish_output();
    }
    const char *default_dir[] = {NULL};
    const char **dirs = o.ndirs ? o.dirs : default_dir;
    size_t ndirs = o.ndirs ? o.ndirs : 1;
    struct analyze_input *inputs = calloc(ndirs, sizeof *inputs);
    int rc = inputs ? 0 : ppw_err_set(&err, PPW_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < ndirs; i++)
        inputs[i] = (struct analyze_input){dirs[i], o.binary, o.force};
    /* The baseline: --baseline must be readable; the default file may be
     * absent (then the built-in figures serve, and the report says so). */
    struct ppw_baseline baseline;
    const struct ppw_baseline *use = NULL;
    char path[4096];
    const char *source = o.baseline ? o.baseline : ppw_baseline_default_path(path, sizeof path);
    if (!rc && source) {
        struct ppw_err berr;
        int brc = ppw_baseline_load(source, &baseline, &berr);
        if (!brc)
            use = &baseline;
        else if (o.baseline || brc != PPW_EIO)
            rc = ppw_err_set(&err, berr.code, "%s", berr.message);
    }
    struct analyze_result r = {0};
    if (!rc)
        rc = analyze_run(inputs, ndirs, &o.t, use, source, &r, &err);
    struct ppw_intrusion *intr = NULL;
    struct ppw_run **runs = NULL;
    uint32_t *ranks = NULL;
    size_t nintr = 0;
    if (!rc)
        rc = intrusion_view_load(dirs[0], o.flag_ratio, &intr, &runs, &nintr, &ranks, &err);
    if (!rc) {
        o.dirs[0] = o.ndirs ? o.dirs[0] : ".";
        if (o.fmt == CLI_JSON)
            print_json(stdout, &r, &o, intr, nintr, ranks);
        else if (o.fmt == CLI_CSV)
            print_csv(stdout, &r);
        else
            print_text(stdout, &r, o.ndirs ? o.dirs[0] : "(newest run)", intr, nintr, ranks);
    }
    for (size_t i = 0; i < nintr; i++) {
        ppw_intrusion_free(&intr[i]);
        ppw_run_free(runs[i]);
    }
    free(intr);
    free(runs);
    free(ranks);
    analyze_result_free(&r);
    free(inputs);
    free(o.dirs);
    return rc ? cli_fail(&err) : cli_finish_output();
}

/* ppw-blame export: a run's samples and trace in the formats other viewers
 * read: folded stacks (ppw's own, which report/code/lines read back, or
 * plain function names for flame-graph tools), speedscope JSON, Chrome
 * trace-event JSON (Perfetto, chrome://tracing) and OTF2 (Vampir, Score-P's
 * tools).  Formats are documented in
 * docs/ppw-blame.md ("ppw-blame export"). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export.h"
#include "folded.h"
#include "job.h"
#include "json.h"
#include "read_run.h"
#include "user_stacks.h"
#include "view.h"
#include "ppw/gasp.h"

static const char usage[] =
    "usage: ppw-blame export [DIR...] --to folded|speedscope|chrome|pprof|otf2 [-o FILE]\n"
    "                        [--no-locations] [--variables] [--binary BIN] [--force]\n"
    "                        [--thread T] [--rank R] [--folded FILE]\n\n"
    "Writes the run directory or MPI job DIR (default: the newest ppw-* directory;\n"
    "several are summed, but for chrome) in a format other tools read:\n"
    "  folded       one line per distinct stack, root first, and its samples; frames\n"
    "               keep their function, file, line and column, which 'ppw-blame\n"
    "               report --folded' reads back (--no-locations: bare function names,\n"
    "               for flame-graph tools such as flamegraph.pl)\n"
    "  speedscope   a speedscope file (https://www.speedscope.app): one sampled\n"
    "               profile per thread (per rank and thread for a job), weighted by\n"
    "               the run's metric\n"
    "  chrome       Chrome trace-event JSON (Perfetto, chrome://tracing) from a run\n"
    "               traced with PPW_MODE=profile,trace: threads and ranks as tracks,\n"
    "               GASP regions as slices, thread creation and MPI messages as flows\n"
    "  pprof        pprof's profile.proto, gzipped (go tool pprof, pprof): a sample per\n"
    "               stack, labelled with its thread and its blamed variable\n"
    "  otf2         an OTF2 trace (Vampir, Score-P's tools) of a traced run or whole\n"
    "               job in the directory -o DIR: locations per rank and thread,\n"
    "               regions entered and left, MPI messages, collectives and RMA\n\n"
    "  --to FORMAT        folded, speedscope, chrome, pprof or otf2 (required)\n"
    "  -o, --output FILE  write to FILE instead of standard output (otf2: the\n"
    "                     directory to write, required)\n"
    "  --variables        folded and speedscope: end each stack with the variable its\n"
    "                     samples are blamed to, as a frame '[variable] NAME'\n"
    "  --no-locations     folded: function names only\n"
    "  --thread, --rank, --binary, --force, --folded: as for 'ppw-blame report'\n"
    "  -h, --help         show this help\n";

enum export_to { TO_FOLDED, TO_SPEEDSCOPE, TO_CHROME, TO_PPROF, TO_OTF2 };

struct export_opts {
    struct view_opts view;
    const char *to, *output;
    bool no_locations, variables;
    enum export_to fmt;
};

/* ---- folded ---- */

/* --no-locations: a bare name for flame-graph tools, which split frames at
 * ';' and the count at the last blank and know no escapes. */
static void plain_frame(FILE *out, const char *name)
{
    for (const char *c = name ? name : "??"; *c; c++)
        putc(*c == ';' || *c == ' ' || *c == '\t' || *c == '\n' ? '_' : *c, out);
}

/* Frame k of st as the folded file names it: a frame of libppw that the
 * program did not call (a probe's helper, a callback: measurement) is
 * written as libppw's, "[libppw] NAME", since folded frames carry no
 * module and the views leave libppw out by it (user_stacks.h); a libppw
 * frame the program called keeps its name (a wrapper of MPI_Send). */
static struct ppw_blame_frame folded_frame(const struct ppw_blame_stack *st, size_t k, char *buf,
                                           size_t size)
{
    struct ppw_blame_frame f = st->frames[k];
    bool called_by_program = k + 1 < st->nframes && st->frames[k + 1].origin == PPW_FRAME_PROGRAM;
    if (f.origin == PPW_FRAME_PPW && f.function && !called_by_program &&
        strncmp(f.function, "[libppw", 7) != 0 && strncmp(f.function, "gasp_", 5) != 0 &&
        strncmp(f.function, "ppw_", 4) != 0) {
        int len = snprintf(buf, size, "[libppw] %s", f.function);
        if (len > 0 && (size_t)len < size)
            f.function = buf;
    }
    return f;
}

static int write_folded(FILE *out, const struct export_opts *o, const struct view_input *in,
                        struct export_blame *blame, struct ppw_err *err)
{
    size_t n;
    /* With locations, for report --folded: the raw frames, whose linkage
     * names and locations the reader needs to attribute the samples again
     * (FUNCTION@LOCATION names a function of the graphs, which the reader
     * checks; other code is FUNCTION@@LOCATION or bare, folded.h).
     * Without, for flame-graph tools: the frames as users see them. */
    const struct ppw_blame_stack *stacks =
        o->no_locations ? view_user_stacks(in, &n, err) : view_stacks(in, &n);
    if (o->no_locations && !stacks)
        return err->code;
    struct export_frames frames;
    if (export_frames_build(&frames, stacks, n, NULL, in->graph) != 0)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    fprintf(out, "# ppw-blame export --to folded: %s, %" PRIu64 " samples\n", in->source,
            view_total_samples(in));
    for (size_t s = 0; s < n; s++) {
        const struct ppw_blame_stack *st = &stacks[s];
        if (!st->samples || (!st->nframes && o->no_locations))
            continue;
        if (!st->nframes) /* kept, so that the counts add up to the run's samples */
            fputs(PPW_FOLDED_NO_FRAMES, out);
        size_t top = st->nframes ? view_top_frame(st) : 0;
        for (size_t k = st->nframes ? top + 1 : 0; k-- > 0;) {
            const struct ppw_blame_frame *f = &st->frames[k];
            char buf[512];
            struct ppw_blame_frame shown = folded_frame(st, k, buf, sizeof buf);
            if (o->no_locations)
                plain_frame(out, f->function);
            else
                ppw_folded_write_frame(
                    out, &shown, frames.funcs[export_frame_index(&frames, f->function)] != NULL);
            if (k)
                putc(';', out);
        }
        const char *var = export_stack_variable(blame, s);
        if (var && o->no_locations) {
            fputs(";[variable]_", out);
            plain_frame(out, var);
        } else if (var) {
            size_t len = strlen(var) + sizeof "[variable]_";
            char *name = malloc(len);
            if (!name) {
                export_frames_free(&frames);
                return ppw_err_set(err, PPW_ENOMEM, "out of memory");
            }
            snprintf(name, len, "[variable]_%s", var);
            putc(';', out);
            ppw_folded_write_frame(out, &(struct ppw_blame_frame){.function = name}, false);
            free(name);
        }
        fprintf(out, " %" PRIu64 "\n", st->samples);
    }
    export_frames_free(&frames);
    return 0;
}

/* ---- speedscope (https://github.com/jlfwong/speedscope, file format 0.0.1) ---- */

static int write_speedscope(FILE *out, const struct view_input *in, struct export_blame *blame,
                            struct ppw_err *err)
{
    size_t n;
    const struct ppw_blame_stack *stacks = view_user_stacks(in, &n, err);
    if (!stacks)
        return err->code;
    struct export_frames frames;
    if (export_frames_build(&frames, stacks, n, blame, NULL) != 0)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    bool seconds = in->unit && strcmp(in->unit, "s") == 0;
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", out);
    fputs("\"exporter\":\"ppw-blame export\",\"name\":", out);
    json_string(out, in->source);
    fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
    for (size_t i = 0; i < frames.count; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        json_string(out, frames.names[i]);
        if (frames.files[i]) {
            fputs(",\"file\":", out);
            json_string(out, frames.files[i]);
        }
        putc('}', out);
    }
    fputs("]},\"profiles\":[", out);
    /* one profile per thread (rank * PPW_JOB_RANK_SHIFT + thread in a job) */
    size_t nthreads = 0;
    uint32_t *threads = export_stack_threads(stacks, n, &nthreads);
    if (n && !threads) {
        export_frames_free(&frames);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    for (size_t t = 0; t < nthreads; t++) {
        double total = 0;
        for (size_t s = 0; s < n; s++)
            if (stacks[s].thread == threads[t] && stacks[s].nframes)
                total += seconds ? stacks[s].weight : (double)stacks[s].samples;
        fputs(t ? ",{" : "{", out);
        fputs("\"type\":\"sampled\",\"name\":", out);
        char name[64];
        if (in->job)
            snprintf(name, sizeof name, "rank %" PRIu32 " thread %" PRIu32,
                     threads[t] / PPW_JOB_RANK_SHIFT, threads[t] % PPW_JOB_RANK_SHIFT);
        else
            snprintf(name, sizeof name, "thread %" PRIu32, threads[t]);
        json_string(out, name);
        fprintf(out,
                ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":", seconds ? "seconds" : "none");
        json_double(out, total);
        fputs(",\"samples\":[", out);
        bool first = true;
        for (size_t s = 0; s < n; s++) {
            const struct ppw_blame_stack *st = &stacks[s];
            if (st->thread != threads[t] || !st->nframes)
                continue;
            fputs(first ? "[" : ",[", out);
            first = false;
            size_t top = view_top_frame(st);
            for (size_t k = top + 1; k-- > 0;)
                fprintf(out, "%s%zu", k == top ? "" : ",",
                        export_frame_index(&frames, st->frames[k].function));
            const char *var = blame ? export_stack_variable(blame, s) : NULL;
            if (var)
                fprintf(out, ",%zu", export_variable_index(&frames, var));
            putc(']', out);
        }
        fputs("],\"weights\":[", out);
        first = true;
        for (size_t s = 0; s < n; s++) {
            const struct ppw_blame_stack *st = &stacks[s];
            if (st->thread != threads[t] || !st->nframes)
                continue;
            if (!first)
                putc(',', out);
            first = false;
            json_double(out, seconds ? st->weight : (double)st->samples);
        }
        fputs("]}", out);
    }
    fputs("]}\n", out);
    free(threads);
    export_frames_free(&frames);
    return 0;
}

/* ---- options ---- */

static int parse_export(int argc, char **argv, struct export_opts *o, struct ppw_err *err)
{
    /* -o is the one short option of ppw-blame: spelled out for the parser */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-o") == 0)
            argv[i] = (char *)"--output";
    const struct cli_option options[] = {
        VIEW_OPTIONS(&o->view), {"--to", &o->to}, {"--output", &o->output}};
    const struct cli_flag flags[] = {{"--force", &o->view.force},
                                     {"--no-locations", &o->no_locations},
                                     {"--variables", &o->variables}};
    int rc = VIEW_PARSE(argc, argv, &o->view, options, VIEW_OPTION_COUNT + 2, flags, 3, err);
    if (rc || o->view.help)
        return rc;
    if (o->view.format)
        return ppw_err_set(err, PPW_EUSAGE, "export: --format is not an export option (use --to)");
    if (!o->to)
        return ppw_err_set(err, PPW_EUSAGE,
                           "export: --to FORMAT is required (folded, speedscope, chrome, pprof "
                           "or otf2)");
    if (strcmp(o->to, "folded") == 0)
        o->fmt = TO_FOLDED;
    else if (strcmp(o->to, "speedscope") == 0)
        o->fmt = TO_SPEEDSCOPE;
    else if (strcmp(o->to, "chrome") == 0)
        o->fmt = TO_CHROME;
    else if (strcmp(o->to, "pprof") == 0)
        o->fmt = TO_PPROF;
    else if (strcmp(o->to, "otf2") == 0)
        o->fmt = TO_OTF2;
    else
        return ppw_err_set(err, PPW_EUSAGE,
                           "export: unknown format '%s' (folded, speedscope, chrome, pprof or "
                           "otf2)",
                           o->to);
    if (o->no_locations && o->fmt != TO_FOLDED)
        return ppw_err_set(err, PPW_EUSAGE, "export: --no-locations is for --to folded");
    if (o->variables && (o->fmt == TO_CHROME || o->fmt == TO_PPROF || o->fmt == TO_OTF2))
        return ppw_err_set(err, PPW_EUSAGE,
                           "export: --variables is for folded and speedscope "
                           "(pprof always labels the variable)");
    if (o->fmt == TO_CHROME && (o->view.folded || o->view.top || o->view.thread))
        return ppw_err_set(
            err, PPW_EUSAGE,
            "export: --to chrome reads a traced run: no --folded, --top or --thread");
    if (o->fmt == TO_CHROME && o->view.ndirs > 1) /* a timeline per run: no common clock */
        return ppw_err_set(err, PPW_EUSAGE,
                           "export: --to chrome reads one run or job directory, not %zu",
                           o->view.ndirs);
    if (o->fmt == TO_OTF2 && (o->view.folded || o->view.top || o->view.thread || o->view.rank))
        return ppw_err_set(err, PPW_EUSAGE,
                           "export: --to otf2 reads a traced run or whole job: no --folded, "
                           "--top, --thread or --rank");
    if (o->fmt == TO_OTF2 && o->view.ndirs > 1)
        return ppw_err_set(err, PPW_EUSAGE,
                           "export: --to otf2 reads one run or job directory, not %zu",
                           o->view.ndirs);
    if (o->fmt == TO_OTF2 && (!o->output || strcmp(o->output, "-") == 0))
        return ppw_err_set(err, PPW_EUSAGE,
                           "export: --to otf2 writes a directory: give it with -o DIR");
    if (o->fmt == TO_SPEEDSCOPE || o->fmt == TO_PPROF) /* a profile or label per thread */
        o->view.split_threads = true;
    return view_check_opts(&o->view, "export", 0, err);
}

static int export_otf2_command(const struct export_opts *o, struct ppw_err *err)
{
#ifdef PPW_HAVE_OTF2
    char *dir = NULL;
    int rc = cli_run_dir(o->view.dir, &dir, err);
    if (!rc)
        rc = export_otf2(o->output, dir, err);
    free(dir);
    return rc ? cli_fail(err) : PPW_EXIT_OK;
#else
    (void)o;
    ppw_err_set(err, PPW_EUSAGE,
                "export: this ppw-blame was built without OTF2: install "
                "libopen-trace-format2-dev (Debian's OTF2) and rebuild ppw");
    return cli_fail(err);
#endif
}

int cmd_export(int argc, char **argv)
{
    struct export_opts o = {0};
    struct ppw_err err;
    ppw_err_clear(&err);
    if (parse_export(argc, argv, &o, &err))
        return cli_fail(&err);
    if (o.view.help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    int rc = 0;
    if (o.fmt == TO_CHROME) {
        char *dir = NULL;
        if ((rc = cli_run_dir(o.view.dir, &dir, &err)) != 0)
            return cli_fail(&err);
        FILE *out = export_open(o.output, &err);
        rc = out ? export_chrome(out, dir, o.view.has_rank, o.view.rank_id, &err) : PPW_EIO;
        if (out)
            rc = export_finish(out, o.output, rc, &err);
        free(dir);
        return rc ? cli_fail(&err) : PPW_EXIT_OK;
    }
    if (o.fmt == TO_OTF2)
        return export_otf2_command(&o, &err);
    struct view_input in = {0};
    struct export_blame *blame = NULL;
    FILE *out = NULL;
    rc = view_load(&o.view, &in, &err);
    if (!rc && (o.variables || o.fmt == TO_PPROF))
        rc = export_blame_new(&in, &blame, &err);
    if (!rc && !(out = export_open(o.output, &err)))
        rc = PPW_EIO;
    if (!rc)
        rc = o.fmt == TO_FOLDED       ? write_folded(out, &o, &in, blame, &err)
             : o.fmt == TO_SPEEDSCOPE ? write_speedscope(out, &in, blame, &err)
                                      : export_pprof(out, &in, blame, &err);
    if (out)
        rc = export_finish(out, o.output, rc, &err);
    export_blame_free(blame);
    view_input_free(&in);
    return rc ? cli_fail(&err) : PPW_EXIT_OK;
}

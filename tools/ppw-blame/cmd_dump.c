/* ppw-blame dump: prints what a run directory holds, as text or JSON, with
 * every stack symbolized and every sample glued to its spawn chain.  Output
 * shapes are documented in docs/ppw-blame.md. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dump.h"
#include "json.h"
#include "lines.h"
#include "read_run.h"
#include "symbols.h"

static const char usage[] =
    "usage: ppw-blame dump [DIR] [--what run|samples|spawns|trace|all] [--format text|json]\n\n"
    "Prints what the run directory DIR holds (default: the ppw-* directory of the\n"
    "current directory modified last), with stacks symbolized and each sample\n"
    "glued to the stacks of the spawns that created its context.\n\n"
    "  --what WHAT       run (process records and threads), samples, spawns, trace,\n"
    "                    or all (default)\n  --format FORMAT   text (default) or json\n"
    "  -h, --help        show this help\n";

/* Functions an unwinder reaches at the bottom of a whole stack (with the
 * names a stripped glibc exports them under). */
static const char *const thread_roots[] = {
    "_start", "__libc_start_main", "__libc_start_call_main", "start_thread", "clone", "__clone",
    "clone3", "__clone3",
};

/* Source frames for the JSON frames: one per command, beside d->syms
 * (struct dump, in dump.h, is shared with dump_run.c, which needs none). */
static struct ppw_lines *dump_lines;

/* ---- frames ---- */

static void text_frame(struct dump *d, size_t n, uint64_t pc, const struct ppw_symbol *sym)
{
    fprintf(d->out, "  #%zu 0x%016" PRIx64 " ", n, pc);
    cli_text(d->out, sym->function ? sym->function : "?");
    if (sym->module) {
        fputs(" (", d->out);
        cli_text(d->out, sym->module->path);
        fprintf(d->out, "+0x%" PRIx64 ")", sym->offset);
    }
    putc('\n', d->out);
}

static void json_source_frames(struct dump *d, const struct ppw_source_frame *source, size_t n)
{
    putc('[', d->out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",{\"function\":" : "{\"function\":", d->out);
        json_string_or_null(d->out, source[i].function);
        fputs(",\"file\":", d->out);
        json_string_or_null(d->out, source[i].file);
        fprintf(d->out, ",\"line\":%" PRIu32 ",\"col\":%" PRIu32 ",\"inlined\":%s}", source[i].line,
                source[i].col, source[i].inlined ? "true" : "false");
    }
    putc(']', d->out);
}

/* ,"source":[...]: the frame's source frames, innermost (inlined) first;
 * ,"near_source":[...] too when the views attribute it elsewhere (line 0). */
static void json_source(struct dump *d, uint64_t pc, bool exact)
{
    struct ppw_source_frame source[64], near[64];
    size_t n = dump_lines ? ppw_lines_lookup(dump_lines, pc, exact, source, 64) : 0;
    fputs(",\"source\":", d->out);
    json_source_frames(d, source, n);
    if (!n || source[0].line != 0)
        return;
    size_t near_n = ppw_lines_lookup_near(dump_lines, pc, exact, near, 64);
    if (near_n && near[0].line != 0) { /* a neighbour lent a line */
        fputs(",\"near_source\":", d->out);
        json_source_frames(d, near, near_n);
    }
}

static void json_frame(struct dump *d, uint64_t pc, const struct ppw_symbol *sym)
{
    fprintf(d->out, "{\"pc\":\"0x%" PRIx64 "\",\"module\":", pc);
    json_string_or_null(d->out, sym->module ? sym->module->path : NULL);
    if (sym->module)
        fprintf(d->out, ",\"offset\":\"0x%" PRIx64 "\"", sym->offset);
    else
        fputs(",\"offset\":null", d->out);
    fputs(",\"function\":", d->out);
    json_string_or_null(d->out, sym->function);
}

/* Prints frames[0..n) numbered from *numbered, as JSON array items when
 * spawn_key (then each gets "spawn":tag, or null when tag is 0). */
static void print_frames(struct dump *d, const uint64_t *frames, size_t n, uint16_t flags,
                         size_t *numbered, bool spawn_key, uint32_t tag)
{
    for (size_t i = 0; i < n; i++) {
        struct ppw_symbol sym;
        ppw_symbols_frame(d->syms, frames, i, flags, &sym);
        if (!d->json) {
            text_frame(d, (*numbered)++, frames[i], &sym);
            continue;
        }
        if ((*numbered)++)
            putc(',', d->out);
        json_frame(d, frames[i], &sym);
        json_source(d, frames[i], i == 0 && (flags & PPW_STACK_LEAF_PC));
        if (spawn_key && tag)
            fprintf(d->out, ",\"spawn\":%" PRIu32, tag);
        else if (spawn_key)
            fputs(",\"spawn\":null", d->out);
        putc('}', d->out);
    }
}

void dump_tag(struct dump *d, uint32_t tag)
{
    const char *name = ppw_run_tag_name(tag);
    if (name)
        fprintf(d->out, "%s(%" PRIu32 ")", name, tag);
    else
        fprintf(d->out, "%" PRIu32, tag);
}

void dump_stack_flags(struct dump *d, uint16_t flags)
{
    const char *sep = "";
    if (d->json)
        putc('[', d->out);
    if (flags & PPW_STACK_TRUNCATED)
        fprintf(d->out, d->json ? "%s\"truncated\"" : "%struncated", sep), sep = ",";
    if (flags & PPW_STACK_LEAF_PC)
        fprintf(d->out, d->json ? "%s\"leaf_pc\"" : "%sleaf_pc", sep), sep = ",";
    if (flags & PPW_STACK_UNWALKED)
        fprintf(d->out, d->json ? "%s\"unwalked\"" : "%sunwalked", sep), sep = ",";
    if (d->json)
        putc(']', d->out);
    else if (!sep[0])
        putc('-', d->out);
}

/* ---- glue ---- */

struct glue {
    size_t kept;        /* the sample's frames that start the glued stack */
    size_t chain_count; /* spawns in d->chain */
    const char *error;  /* why the chain stops early, or NULL */
    bool reaches_main;  /* some glued frame is in main */
    bool complete;      /* the raw stack reaches its thread's root */
};

static bool is_thread_root(const char *function)
{
    for (size_t i = 0; i < sizeof thread_roots / sizeof thread_roots[0]; i++)
        if (function && strcmp(function, thread_roots[i]) == 0)
            return true;
    return false;
}

static bool is_main(const char *function)
{
    return function && strcmp(function, "main") == 0;
}

/* The function a thread starts in: main for thread 0, else its start
 * routine, found by name or (unnamed, in a stripped library) by the start
 * address the unwind table gives the frame's function. */
struct thread_start {
    bool main;
    struct ppw_symbol routine; /* module NULL: unknown */
};

static void thread_start(struct dump *d, const struct ppw_run_thread *t, struct thread_start *st)
{
    *st = (struct thread_start){.main = t->index == 0};
    if (!st->main && t->has_begin && t->start_routine)
        ppw_symbols_lookup(d->syms, t->start_routine, true, &st->routine);
}

static bool in_start(const struct thread_start *st, const struct ppw_symbol *sym)
{
    const struct ppw_symbol *r = &st->routine;
    if (st->main)
        return is_main(sym->function);
    if (!r->module || sym->module != r->module)
        return false;
    if (r->function && sym->function)
        return strcmp(r->function, sym->function) == 0;
    return r->function_start && sym->function_start == r->function_start;
}

static bool in_parallel_runtime(const struct ppw_symbol *sym)
{
    return sym->module && (sym->module->flags & PPW_MODULE_PARALLEL);
}

/* How many of a sample's frames the glued stack keeps.  In a spawned
 * context the frames beneath the task's own code belong to the parallel
 * runtime's scheduler (run_format.h, struct ppw_rec_spawn): they stop at the
 * first runtime frame after the task's code.  Runtime frames at the top
 * (the sample landed inside the runtime, in a barrier say) are kept. */
static size_t kept_frames(struct dump *d, const struct ppw_run_sample *s)
{
    const struct ppw_run_stack *stack = s->stack;
    struct ppw_symbol sym;
    size_t i = 0;
    if (s->spawn_tag == 0)
        return stack->nframes;
    for (; i < stack->nframes; i++) {
        ppw_symbols_frame(d->syms, stack->frames, i, stack->flags, &sym);
        if (!in_parallel_runtime(&sym))
            break;
    }
    for (; i < stack->nframes; i++) {
        ppw_symbols_frame(d->syms, stack->frames, i, stack->flags, &sym);
        if (in_parallel_runtime(&sym))
            break;
    }
    return i;
}

static void glue_sample(struct dump *d, const struct ppw_run_thread *t,
                        const struct ppw_run_sample *s, struct glue *g, struct ppw_err *err)
{
    const struct ppw_run_stack *stack = s->stack;
    struct thread_start start;
    struct ppw_symbol sym;
    thread_start(d, t, &start);
    *g = (struct glue){.kept = kept_frames(d, s)};
    if (ppw_run_spawn_chain(d->run, t->index, s->spawn_tag, d->chain, d->run->spawn_count,
                            &g->chain_count, err) != 0)
        g->error = err->message;
    bool reaches_start = false;
    for (size_t i = 0; i < stack->nframes; i++) {
        ppw_symbols_frame(d->syms, stack->frames, i, stack->flags, &sym);
        g->reaches_main |= i < g->kept && is_main(sym.function);
        reaches_start |= in_start(&start, &sym);
        if (i + 1 == stack->nframes)
            reaches_start |= is_thread_root(sym.function);
    }
    g->complete = !(stack->flags & PPW_STACK_TRUNCATED) && reaches_start;
    for (size_t k = 0; k < g->chain_count && !g->reaches_main; k++) {
        const struct ppw_run_spawn *spawn = d->chain[k];
        for (size_t i = 0; i < spawn->nframes && !g->reaches_main; i++) {
            ppw_symbols_frame(d->syms, spawn->frames, i, spawn->flags, &sym);
            g->reaches_main = is_main(sym.function);
        }
    }
}

/* ---- samples ---- */

static void text_sample(struct dump *d, const struct ppw_run_thread *t,
                        const struct ppw_run_sample *s, const struct glue *g)
{
    FILE *out = d->out;
    size_t n = 0;
    fprintf(out,
            "sample thread=%" PRIu32 " time_ns=%" PRIu64 " weight=%" PRIu64 " spawn_tag=%" PRIu32
            " stack=%" PRIu32 " flags=",
            t->index, s->time_ns, s->weight, s->spawn_tag, s->stack->id);
    dump_stack_flags(d, s->stack->flags);
    fprintf(out, " reaches_main=%s complete=%s\n", g->reaches_main ? "yes" : "no",
            g->complete ? "yes" : "no");
    print_frames(d, s->stack->frames, g->kept, s->stack->flags, &n, false, 0);
    if (g->kept < s->stack->nframes)
        fprintf(out, "  -- %zu frames beneath, in the parallel runtime, are not glued\n",
                s->stack->nframes - g->kept);
    for (size_t k = 0; k < g->chain_count; k++) {
        const struct ppw_run_spawn *spawn = d->chain[k];
        fprintf(out, "  -- spawn %" PRIu32 " (%s, by thread %" PRIu32 ")\n", spawn->tag,
                ppw_run_spawn_kind_name(spawn->kind), spawn->creator);
        print_frames(d, spawn->frames, spawn->nframes, spawn->flags, &n, false, 0);
    }
    if (g->error) {
        fputs("  -- glue error: ", out);
        cli_text(out, g->error);
        putc('\n', out);
    }
}

static void json_sample(struct dump *d, const struct ppw_run_thread *t,
                        const struct ppw_run_sample *s, const struct glue *g)
{
    FILE *out = d->out;
    const struct ppw_run_stack *stack = s->stack;
    size_t n = 0;
    fprintf(out,
            "{\"thread\":%" PRIu32 ",\"time_ns\":%" PRIu64 ",\"weight\":%" PRIu64
            ",\"spawn_tag\":%" PRIu32 ",\"stack_id\":%" PRIu32 ",\"flags\":",
            t->index, s->time_ns, s->weight, s->spawn_tag, stack->id);
    dump_stack_flags(d, stack->flags);
    fputs(",\"stack\":[", out);
    print_frames(d, stack->frames, stack->nframes, stack->flags, &n, false, 0);
    fputs("],\"glued\":[", out);
    n = 0;
    print_frames(d, stack->frames, g->kept, stack->flags, &n, true, 0);
    for (size_t k = 0; k < g->chain_count; k++) {
        const struct ppw_run_spawn *spawn = d->chain[k];
        print_frames(d, spawn->frames, spawn->nframes, spawn->flags, &n, true, spawn->tag);
    }
    fprintf(out, "],\"reaches_main\":%s,\"complete\":%s,\"glue_error\":",
            g->reaches_main ? "true" : "false", g->complete ? "true" : "false");
    json_string_or_null(out, g->error);
    putc('}', out);
}

static void dump_samples(struct dump *d)
{
    struct ppw_err err;
    bool first = true;
    if (d->json)
        fputs(",\n\"samples\":[", d->out);
    for (size_t i = 0; i < d->run->thread_count; i++) {
        const struct ppw_run_thread *t = &d->run->threads[i];
        for (size_t k = 0; k < t->sample_count; k++) {
            struct glue g;
            glue_sample(d, t, &t->samples[k], &g, &err);
            if (d->json) {
                fputs(first ? "\n" : ",\n", d->out);
                json_sample(d, t, &t->samples[k], &g);
            } else {
                text_sample(d, t, &t->samples[k], &g);
            }
            first = false;
        }
    }
    if (d->json)
        fputs("]", d->out);
}

/* ---- spawns ---- */

static void dump_spawn(struct dump *d, const struct ppw_run_spawn *s)
{
    FILE *out = d->out;
    struct ppw_err err;
    size_t count = 0, n = 0;
    int rc = ppw_run_spawn_chain(d->run, s->creator, s->tag, d->chain, d->run->spawn_count, &count,
                                 &err);
    if (d->json) {
        fprintf(out,
                "{\"tag\":%" PRIu32 ",\"parent_tag\":%" PRIu32 ",\"kind\":\"%s\","
                "\"creator\":%" PRIu32 ",\"flags\":",
                s->tag, s->parent_tag, ppw_run_spawn_kind_name(s->kind), s->creator);
        dump_stack_flags(d, s->flags);
        fputs(",\"frames\":[", out);
        print_frames(d, s->frames, s->nframes, s->flags, &n, false, 0);
        fputs("],\"chain\":[", out);
        for (size_t k = 0; k < count; k++)
            fprintf(out, "%s%" PRIu32, k ? "," : "", d->chain[k]->tag);
        fputs("],\"chain_error\":", out);
        json_string_or_null(out, rc ? err.message : NULL);
        putc('}', out);
        return;
    }
    fprintf(out,
            "spawn %" PRIu32 " parent_tag=%" PRIu32 " kind=%s creator=%" PRIu32 " flags=", s->tag,
            s->parent_tag, ppw_run_spawn_kind_name(s->kind), s->creator);
    dump_stack_flags(d, s->flags);
    fputs(" chain=", out);
    for (size_t k = 0; k < count; k++)
        fprintf(out, "%s%" PRIu32, k ? "," : "", d->chain[k]->tag);
    putc('\n', out);
    print_frames(d, s->frames, s->nframes, s->flags, &n, false, 0);
    if (rc) {
        fputs("  -- chain error: ", out);
        cli_text(out, err.message);
        putc('\n', out);
    }
}

static void dump_spawns(struct dump *d)
{
    if (d->json)
        fputs(",\n\"spawns\":[", d->out);
    for (size_t i = 0; i < d->run->spawn_count; i++) {
        if (d->json)
            fputs(i ? ",\n" : "\n", d->out);
        dump_spawn(d, &d->run->spawns[i]);
    }
    if (d->json)
        fputs("]", d->out);
}

/* ---- trace ---- */

static void dump_event(struct dump *d, const struct ppw_run_thread *t,
                       const struct ppw_run_trace *e)
{
    FILE *out = d->out;
    const struct ppw_run_region *g = e->region;
    if (d->json) {
        fprintf(out,
                "{\"thread\":%" PRIu32 ",\"time_ns\":%" PRIu64 ",\"event\":\"%s\","
                "\"evttype\":%u,\"region\":%" PRIu32 ",\"name\":",
                t->index, e->time_ns, ppw_run_evttype_name(e->evttype), e->evttype, g->id);
        json_string(out, g->name);
        if (d->run->has_mpi)
            fprintf(out, ",\"master_ns\":%" PRIu64, ppw_run_master_ns(d->run, e->time_ns));
        fprintf(out, ",\"tag\":%" PRIu32 ",\"tag_name\":", g->tag);
        json_string_or_null(out, ppw_run_tag_name(g->tag));
        fprintf(out, ",\"op\":\"%s\",\"args\":[", ppw_run_op_name(g->op));
        for (size_t i = 0; i < e->nargs; i++)
            fprintf(out, "%s%" PRIu64, i ? "," : "", e->args[i]);
        fputs("],\"description\":", out);
        json_string_or_null(out, e->description);
        putc('}', out);
        return;
    }
    fprintf(out, "trace thread=%" PRIu32 " time_ns=%" PRIu64 " event=%s region=%" PRIu32 " name=",
            t->index, e->time_ns, ppw_run_evttype_name(e->evttype), g->id);
    cli_text(out, g->name);
    fputs(" tag=", out);
    dump_tag(d, g->tag);
    fprintf(out, " op=%s args=", ppw_run_op_name(g->op));
    for (size_t i = 0; i < e->nargs; i++)
        fprintf(out, "%s%" PRIu64, i ? "," : "", e->args[i]);
    if (d->run->has_mpi)
        fprintf(out, " master_ns=%" PRIu64, ppw_run_master_ns(d->run, e->time_ns));
    if (e->description) {
        fputs(" description=", out);
        cli_text(out, e->description);
    }
    putc('\n', out);
}

static const char *omp_event_name(uint32_t event)
{
    static const char *const names[] = {"", "spawn_parallel", "spawn_task", "begin", "end"};
    return event < sizeof names / sizeof names[0] ? names[event] : "?";
}

/* The PPW_EVT_OMP records, all threads', after the trace. */
static void dump_omp(struct dump *d)
{
    FILE *out = d->out;
    bool first = true;
    if (d->json)
        fputs(",\n\"omp\":[", out);
    for (size_t i = 0; i < d->run->thread_count; i++) {
        const struct ppw_run_thread *t = &d->run->threads[i];
        for (size_t k = 0; k < t->omp_event_count; k++) {
            const struct ppw_run_omp_event *e = &t->omp_events[k];
            if (d->json)
                fprintf(out,
                        "%s{\"thread\":%" PRIu32 ",\"time_ns\":%" PRIu64
                        ",\"event\":\"%s\",\"instance\":%" PRIu32 ",\"tag\":%" PRIu32 "}",
                        first ? "\n" : ",\n", t->index, e->time_ns, omp_event_name(e->event),
                        e->instance, e->tag);
            else
                fprintf(out,
                        "omp thread=%" PRIu32 " time_ns=%" PRIu64 " event=%s instance=%" PRIu32
                        " tag=%" PRIu32 "\n",
                        t->index, e->time_ns, omp_event_name(e->event), e->instance, e->tag);
            first = false;
        }
    }
    if (d->json)
        fputs("]", out);
}

static void dump_trace(struct dump *d)
{
    bool first = true;
    if (d->json)
        fputs(",\n\"trace\":[", d->out);
    for (size_t i = 0; i < d->run->thread_count; i++) {
        const struct ppw_run_thread *t = &d->run->threads[i];
        for (size_t k = 0; k < t->trace_count; k++) {
            if (d->json)
                fputs(first ? "\n" : ",\n", d->out);
            dump_event(d, t, &t->traces[k]);
            first = false;
        }
    }
    if (d->json)
        fputs("]", d->out);
    dump_omp(d);
}

/* ---- command ---- */

enum what { WHAT_RUN = 1, WHAT_SAMPLES = 2, WHAT_SPAWNS = 4, WHAT_TRACE = 8, WHAT_ALL = 15 };

static int parse_what(const char *value, unsigned *what, struct ppw_err *err)
{
    static const struct {
        const char *name;
        unsigned what;
    } names[] = {{"run", WHAT_RUN},
                 {"samples", WHAT_SAMPLES},
                 {"spawns", WHAT_SPAWNS},
                 {"trace", WHAT_TRACE},
                 {"all", WHAT_ALL}};
    *what = WHAT_ALL;
    if (!value)
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(value, names[i].name) == 0)
            return (*what = names[i].what), 0;
    return ppw_err_set(err, PPW_EUSAGE,
                       "dump: unknown --what '%s' (expected run, samples, spawns, trace or all)",
                       value);
}

static void print_dump(struct dump *d, unsigned what)
{
    const struct ppw_run *run = d->run;
    if (d->json) {
        fputs("{\"dir\":", d->out);
        json_string(d->out, run->dir);
        fprintf(d->out, ",\"format\":\"%u.%u\",\"build_id\":", run->file.major, run->file.minor);
        json_string(d->out, run->build_id);
        fprintf(d->out, ",\"pid\":%" PRIu32 ",\"finished\":%s", run->pid,
                run->finished ? "true" : "false");
    }
    if (what & WHAT_RUN)
        dump_run(d);
    if (what & WHAT_SPAWNS)
        dump_spawns(d);
    if (what & WHAT_SAMPLES)
        dump_samples(d);
    if (what & WHAT_TRACE)
        dump_trace(d);
    if (d->json)
        fputs("}\n", d->out);
}

int cmd_dump(int argc, char **argv)
{
    const char *dir = NULL, *format = NULL, *what_arg = NULL;
    const struct cli_option options[] = {{"--format", &format}, {"--what", &what_arg}};
    struct dump d = {.out = stdout};
    struct ppw_run *run = NULL;
    char *path = NULL;
    bool help = false;
    unsigned what = WHAT_ALL;
    struct ppw_err err;
    ppw_err_clear(&err);
    if (cli_parse(argc, argv, options, 2, &dir, &help, &err) ||
        cli_parse_format(format, &d.json, &err) || parse_what(what_arg, &what, &err))
        return cli_fail(&err);
    if (help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    int rc = cli_run_dir(dir, &path, &err);
    if (!rc)
        rc = ppw_run_load(path, &run, &err);
    if (!rc)
        rc = ppw_symbols_new(run, getenv("PPW_DEBUG_DIR"), &d.syms, &err);
    if (!rc && d.json)
        rc = ppw_lines_new(d.syms, &dump_lines, &err);
    if (!rc && run->spawn_count && !(d.chain = calloc(run->spawn_count, sizeof *d.chain)))
        rc = ppw_err_set(&err, PPW_ENOMEM, "out of memory");
    if (!rc) {
        d.run = run;
        print_dump(&d, what);
    }
    free(d.chain);
    ppw_lines_free(dump_lines);
    dump_lines = NULL;
    ppw_symbols_free(d.syms);
    ppw_run_free(run);
    free(path);
    return rc ? cli_fail(&err) : cli_finish_output();
}

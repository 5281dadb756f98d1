/* ppw-blame dump: the process-level records of run.ppw and the threads. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dump.h"
#include "json.h"
#include "read_run.h"
#include "symbols.h"

/* ---- JSON ---- */

static void json_strings(FILE *out, const char *key, const char *const *items, size_t count)
{
    fprintf(out, ",\"%s\":[", key);
    for (size_t i = 0; i < count; i++) {
        if (i)
            putc(',', out);
        json_string(out, items[i]);
    }
    putc(']', out);
}

static void json_info(FILE *out, const struct ppw_run *run)
{
    const struct ppw_run_info *i = &run->info;
    fputs("\"info\":", out); /* the first member of "run" */
    if (!run->has_info) {
        fputs("null", out);
        return;
    }
    fprintf(out,
            "{\"pid\":%" PRIu32 ",\"ppid\":%" PRIu32 ",\"start_mono_ns\":%" PRIu64
            ",\"start_real_ns\":%" PRIu64 ",\"ncpus\":%" PRIu32 ",\"parent_fork\":%s"
            ",\"clock_res_ns\":%" PRIu64 ",\"host\":",
            i->pid, i->ppid, i->start_mono_ns, i->start_real_ns, i->ncpus,
            i->parent_fork ? "true" : "false", i->clock_res_ns);
    json_string(out, i->host);
    fputs(",\"exe\":", out);
    json_string(out, i->exe);
    fputs(",\"cwd\":", out);
    json_string(out, i->cwd);
    putc('}', out);
}

static void json_metric(FILE *out, const struct ppw_run *run)
{
    const struct ppw_run_metric *m = &run->metric;
    fputs(",\"metric\":", out);
    if (!run->has_metric) {
        fputs("null", out);
        return;
    }
    fprintf(out,
            "{\"source\":\"%s\",\"unit\":\"%s\",\"period\":%" PRIu64 ",\"jitter_pct\":%" PRIu32
            ",\"signal\":%" PRIu32 ",\"max_frames\":%" PRIu32 ",\"name\":",
            ppw_run_metric_source_name(m->source), ppw_run_unit_name(m->unit), m->period,
            m->jitter_pct, m->signal, m->max_frames);
    json_string(out, m->name);
    fputs(",\"reason\":", out);
    json_string(out, m->reason);
    putc('}', out);
}

static const struct {
    uint32_t bit;
    const char *name;
} mode_names[] = {
    {PPW_MODE_PROFILE, "profile"}, {PPW_MODE_TRACE, "trace"}, {PPW_MODE_SAMPLE, "sample"}};

static void json_config(FILE *out, const struct ppw_run *run)
{
    const struct ppw_run_config *c = &run->config;
    const char *sep = "";
    fputs(",\"config\":", out);
    if (!run->has_config) {
        fputs("null", out);
        return;
    }
    fputs("{\"modes\":[", out);
    for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
        if (c->modes & mode_names[i].bit)
            fprintf(out, "%s\"%s\"", sep, mode_names[i].name), sep = ",";
    fprintf(out,
            "],\"callpath_depth\":%" PRIu32 ",\"throttle_calls\":%" PRIu64
            ",\"throttle_ns\":%" PRIu64 ",\"throttle_alloc_calls\":%" PRIu64
            ",\"throttle_sample\":%" PRIu64 "}",
            c->callpath_depth, c->throttle_calls, c->throttle_ns, c->throttle_alloc_calls,
            c->throttle_sample);
}

struct json_number {
    const char *key;
    double value;
};

/* ,"key":value for each item */
static void json_numbers(FILE *out, const struct json_number *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(out, ",\"%s\":", items[i].key);
        json_double(out, items[i].value);
    }
}

static void json_calib(FILE *out, const struct ppw_run *run)
{
    const struct ppw_run_calib *c = &run->calib;
    const struct json_number costs[] = {{"pair_ns", c->pair_ns},
                                        {"inner_ns", c->inner_ns},
                                        {"throttled_pair_ns", c->throttled_pair_ns},
                                        {"clock_ns", c->clock_ns},
                                        {"handler_ns", c->handler_ns}};
    const struct json_number windows[] = {{"start_ns", c->window_start_ns},
                                          {"end_ns", c->window_end_ns},
                                          {"inner_ns", c->window_inner_ns},
                                          {"throttled_ns", c->window_throttled_ns},
                                          {"clock_ns", c->window_clock_ns}};
    fputs(",\"calibration\":", out);
    if (!run->has_calib) {
        fputs("null", out);
        return;
    }
    fprintf(out, "{\"iterations\":%" PRIu64, c->iterations);
    json_numbers(out, costs, sizeof costs / sizeof costs[0]);
    fputs(",\"windows\":", out);
    if (c->has_windows) {
        fprintf(out, "{\"period\":%" PRIu64, c->window_period);
        json_numbers(out, windows, sizeof windows / sizeof windows[0]);
        putc('}', out);
    } else {
        fputs("null", out);
    }
    putc('}', out);
}

/* A thread's PROBE slot as it is: counts and sums. */
static void json_probe(FILE *out, const struct ppw_run_thread *t)
{
    const struct ppw_run_probe *w = &t->probe;
    fputs(",\"probe_windows\":", out);
    if (!t->has_probe) {
        fputs("null", out);
        return;
    }
    fprintf(out,
            "{\"period\":%" PRIu32 ",\"start_count\":%" PRIu64 ",\"start_ns\":%" PRIu64
            ",\"start_tail_ns\":%" PRIu64 ",\"end_count\":%" PRIu64 ",\"end_ns\":%" PRIu64
            ",\"end_head_ns\":%" PRIu64 ",\"throttled_count\":%" PRIu64 ",\"throttled_ns\":%" PRIu64
            ",\"interrupted\":%" PRIu64 ",\"clock_ns\":%" PRIu64 "}",
            w->window_period, w->start_count, w->start_ns, w->start_tail_ns, w->end_count,
            w->end_ns, w->end_head_ns, w->throttled_count, w->throttled_ns, w->interrupted,
            w->clock_ns);
}

static void module_flags(FILE *out, uint32_t flags, bool json)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {
        {PPW_MODULE_EXE, "exe"}, {PPW_MODULE_PPW, "ppw"}, {PPW_MODULE_PARALLEL, "parallel"}};
    const char *sep = "";
    if (json)
        putc('[', out);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (flags & names[i].bit)
            fprintf(out, json ? "%s\"%s\"" : "%s%s", sep, names[i].name), sep = ",";
    if (json)
        putc(']', out);
    else if (!sep[0])
        putc('-', out);
}

static void json_modules(struct dump *d)
{
    FILE *out = d->out;
    fputs(",\"modules\":[", out);
    for (size_t i = 0; i < d->run->module_count; i++) {
        const struct ppw_run_module *m = &d->run->modules[i];
        fputs(i ? ",\n{\"path\":" : "\n{\"path\":", out);
        json_string(out, m->path);
        fprintf(out,
                ",\"load_bias\":\"0x%" PRIx64 "\",\"lo\":\"0x%" PRIx64 "\",\"hi\":\"0x%" PRIx64
                "\",\"build_id\":",
                m->load_bias, m->lo, m->hi);
        json_string(out, m->build_id);
        fputs(",\"flags\":", out);
        module_flags(out, m->flags, true);
        fprintf(out, ",\"unloaded\":%s,\"symbols\":", m->unloaded ? "true" : "false");
        json_string_or_null(out, ppw_symbols_module_table(d->syms, m));
        fputs(",\"symbols_file\":", out);
        json_string_or_null(out, ppw_symbols_module_file(d->syms, m));
        fputs(",\"symbols_error\":", out);
        json_string_or_null(out, ppw_symbols_module_error(d->syms, m));
        putc('}', out);
    }
    putc(']', out);
}

static void json_regions(FILE *out, const struct ppw_run *run)
{
    fputs(",\"regions\":[", out);
    for (size_t i = 0; i < run->region_count; i++) {
        const struct ppw_run_region *g = &run->regions[i];
        fprintf(out, "%s{\"id\":%" PRIu32 ",\"kind\":\"%s\",\"tag\":%" PRIu32 ",\"tag_name\":",
                i ? ",\n" : "\n", g->id, ppw_run_region_kind_name(g->kind), g->tag);
        json_string_or_null(out, ppw_run_tag_name(g->tag));
        fprintf(out, ",\"op\":\"%s\",\"name\":", ppw_run_op_name(g->op));
        json_string(out, g->name);
        fputs(",\"file\":", out);
        json_string(out, g->file);
        fprintf(out, ",\"line\":%" PRIu32 ",\"col\":%" PRIu32 "}", g->line, g->col);
    }
    putc(']', out);
}

static void json_file(FILE *out, const char *key, const struct ppw_run_file *f)
{
    fprintf(out, "%s\"%s\":", strcmp(key, "samples") ? "," : "", key);
    if (!f->present) {
        fputs("null", out);
        return;
    }
    if (f->unwritten) {
        fputs("{\"unwritten\":true}", out);
        return;
    }
    fprintf(out,
            "{\"format\":\"%u.%u\",\"closed\":%s,\"size\":%" PRIu64 ",\"committed\":%" PRIu64
            ",\"checksums\":%" PRIu64 ",\"unchecked\":%" PRIu64 "}",
            f->major, f->minor, f->flags & PPW_FILE_CLOSED ? "true" : "false", f->size,
            f->committed, f->checksums, f->unchecked);
}

/* "key":value, or "key":null when !known. */
static void json_u64_if(FILE *out, const char *key, bool known, uint64_t value)
{
    if (known)
        fprintf(out, ",\"%s\":%" PRIu64, key, value);
    else
        fprintf(out, ",\"%s\":null", key);
}

static void json_thread(struct dump *d, const struct ppw_run_thread *t)
{
    FILE *out = d->out;
    struct ppw_symbol start = {0};
    if (t->has_begin && t->start_routine)
        ppw_symbols_lookup(d->syms, t->start_routine, true, &start);
    fprintf(out, "{\"index\":%" PRIu32 ",\"has_record\":%s", t->index,
            t->has_begin ? "true" : "false");
    json_u64_if(out, "tid", t->has_begin, t->tid);
    json_u64_if(out, "parent", t->has_begin && t->parent != UINT32_MAX, t->parent);
    json_u64_if(out, "root_tag", t->has_begin, t->root_tag);
    if (t->has_begin && t->start_routine)
        fprintf(out, ",\"start_routine\":\"0x%" PRIx64 "\"", t->start_routine);
    else
        fputs(",\"start_routine\":null", out);
    fputs(",\"start_function\":", out);
    json_string_or_null(out, start.function);
    json_u64_if(out, "start_ns", t->has_begin, t->start_ns);
    fprintf(out, ",\"ended\":%s,\"at_exit\":%s", t->ended ? "true" : "false",
            t->end_flags & PPW_THREAD_END_AT_EXIT ? "true" : "false");
    json_u64_if(out, "end_ns", t->ended, t->end_ns);
    json_u64_if(out, "cpu_ns", t->ended, t->cpu_ns);
    json_u64_if(out, "samples_recorded", t->ended, t->samples_recorded);
    json_u64_if(out, "runqueue_ns", t->ended && t->runqueue_ns != PPW_WAIT_UNKNOWN, t->runqueue_ns);
    struct ppw_run_loss loss;
    ppw_run_thread_loss(d->run, t, &loss);
    fprintf(out, ",\"lost\":{\"recorded\":%" PRIu64, loss.recorded);
    json_u64_if(out, "expected", loss.known, loss.expected);
    json_u64_if(out, "lost", loss.known, loss.lost);
    fprintf(out, ",\"significant\":%s,\"causes\":[", loss.significant ? "true" : "false");
    for (unsigned b = 0, n = 0; b < PPW_LOSS_CAUSES; b++)
        if (loss.causes & (1u << b))
            fprintf(out, "%s\"%s\"", n++ ? "," : "", ppw_run_loss_cause_name(b));
    fputs("]}", out);
    fputs(",\"files\":{", out);
    json_file(out, "samples", &t->samples_file);
    json_file(out, "events", &t->events_file);
    json_file(out, "profile", &t->profile_file);
    fputs("},\"dropped\":{", out);
    for (unsigned r = 0; r < PPW_DROP_REASONS; r++)
        fprintf(out, "%s\"%s\":%" PRIu64, r ? "," : "", ppw_run_drop_name(r), t->dropped[r]);
    fprintf(out, ",\"ring_full\":%" PRIu64, t->ring_full);
    fprintf(out,
            "},\"handler_ns\":%" PRIu64
            ",\"stacks\":%zu,\"samples\":%zu,\"trace_events\":%zu,\"omp_events\":%zu,"
            "\"timers\":%zu,\"throttles\":%zu",
            t->handler_ns, t->stack_count, t->sample_count, t->trace_count, t->omp_event_count,
            t->timer_count, t->throttle_count);
    json_probe(out, t);
    putc('}', out);
}

static void json_run(struct dump *d)
{
    const struct ppw_run *run = d->run;
    FILE *out = d->out;
    fputs(",\n\"run\":{", out);
    json_info(out, run);
    json_strings(out, "argv", run->argv, run->argc);
    json_strings(out, "env", run->env, run->env_count);
    fprintf(out, ",\"env_left_out\":%" PRIu32, run->env_left_out);
    json_metric(out, run);
    json_config(out, run);
    json_calib(out, run);
    fputs(",\"mpi\":", out);
    if (run->has_mpi) {
        const struct ppw_run_mpi *m = &run->mpi;
        fprintf(out,
                "{\"rank\":%" PRIu32 ",\"size\":%" PRIu32 ",\"job_id\":%" PRIu64
                ",\"init_local_ns\":%" PRIu64 ",\"init_master_ns\":%" PRIu64
                ",\"fini_local_ns\":%" PRIu64 ",\"fini_master_ns\":%" PRIu64 ",\"host\":",
                m->rank, m->size, m->job_id, m->init_local_ns, m->init_master_ns, m->fini_local_ns,
                m->fini_master_ns);
        json_string(out, m->host);
        putc('}', out);
    } else {
        fputs("null", out);
    }
    fputs(",\"finish\":", out);
    if (run->finished)
        fprintf(out, "{\"end_ns\":%" PRIu64 ",\"threads\":%" PRIu64 "}", run->finish_end_ns,
                run->finish_threads);
    else
        fputs("null", out);
    json_modules(d);
    json_regions(out, run);
    fputs(",\"notes\":[", out);
    for (size_t i = 0; i < run->note_count; i++) {
        fprintf(out, "%s{\"severity\":%" PRIu32 ",\"message\":", i ? "," : "",
                run->notes[i].severity);
        json_string(out, run->notes[i].message);
        putc('}', out);
    }
    fputs("]},\n\"threads\":[", out);
    for (size_t i = 0; i < run->thread_count; i++) {
        fputs(i ? ",\n" : "\n", out);
        json_thread(d, &run->threads[i]);
    }
    putc(']', out);
}

/* ---- text ---- */

static void text_key(FILE *out, const char *key, const char *value)
{
    fprintf(out, " %s=", key);
    cli_text(out, value);
}

static void text_info(FILE *out, const struct ppw_run *run)
{
    const struct ppw_run_info *i = &run->info;
    if (!run->has_info)
        return;
    fputs("info", out);
    text_key(out, "host", i->host);
    text_key(out, "exe", i->exe);
    text_key(out, "cwd", i->cwd);
    fprintf(out,
            " ppid=%" PRIu32 " ncpus=%" PRIu32 " parent_fork=%s start_mono_ns=%" PRIu64
            " start_real_ns=%" PRIu64 " clock_res_ns=%" PRIu64 "\n",
            i->ppid, i->ncpus, i->parent_fork ? "yes" : "no", i->start_mono_ns, i->start_real_ns,
            i->clock_res_ns);
}

static void text_strings(FILE *out, const char *key, const char *const *items, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        fprintf(out, "%s[%zu] ", key, i);
        cli_text(out, items[i]);
        putc('\n', out);
    }
}

static void text_settings(FILE *out, const struct ppw_run *run)
{
    if (run->has_metric) {
        const struct ppw_run_metric *m = &run->metric;
        fprintf(out,
                "metric source=%s unit=%s period=%" PRIu64 " jitter_pct=%" PRIu32 " signal=%" PRIu32
                " max_frames=%" PRIu32,
                ppw_run_metric_source_name(m->source), ppw_run_unit_name(m->unit), m->period,
                m->jitter_pct, m->signal, m->max_frames);
        text_key(out, "name", m->name);
        text_key(out, "reason", m->reason);
        putc('\n', out);
    }
    if (run->has_config) {
        const struct ppw_run_config *c = &run->config;
        const char *sep = "";
        fputs("config modes=", out);
        for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
            if (c->modes & mode_names[i].bit)
                fprintf(out, "%s%s", sep, mode_names[i].name), sep = ",";
        fprintf(out,
                "%s callpath_depth=%" PRIu32 " throttle_calls=%" PRIu64 " throttle_ns=%" PRIu64
                " throttle_alloc_calls=%" PRIu64 " throttle_sample=%" PRIu64 "\n",
                sep[0] ? "" : "-", c->callpath_depth, c->throttle_calls, c->throttle_ns,
                c->throttle_alloc_calls, c->throttle_sample);
    }
    if (run->has_calib) {
        const struct ppw_run_calib *c = &run->calib;
        fprintf(out,
                "calibration iterations=%" PRIu64 " pair_ns=%g inner_ns=%g "
                "throttled_pair_ns=%g clock_ns=%g handler_ns=%g\n",
                c->iterations, c->pair_ns, c->inner_ns, c->throttled_pair_ns, c->clock_ns,
                c->handler_ns);
        if (c->has_windows)
            fprintf(out,
                    "calibration windows period=%" PRIu64 " start_ns=%g end_ns=%g inner_ns=%g "
                    "throttled_ns=%g clock_ns=%g\n",
                    c->window_period, c->window_start_ns, c->window_end_ns, c->window_inner_ns,
                    c->window_throttled_ns, c->window_clock_ns);
    }
    if (run->has_mpi)
        fprintf(out,
                "mpi rank=%" PRIu32 " size=%" PRIu32 " job_id=%" PRIu64 " host=%s init=%" PRIu64
                "/%" PRIu64 " fini=%" PRIu64 "/%" PRIu64 "\n",
                run->mpi.rank, run->mpi.size, run->mpi.job_id, run->mpi.host,
                run->mpi.init_local_ns, run->mpi.init_master_ns, run->mpi.fini_local_ns,
                run->mpi.fini_master_ns);
    if (run->finished)
        fprintf(out, "finish end_ns=%" PRIu64 " threads=%" PRIu64 "\n", run->finish_end_ns,
                run->finish_threads);
    else
        fputs("finish none: the run did not end normally\n", out);
}

static void text_modules(struct dump *d)
{
    FILE *out = d->out;
    for (size_t i = 0; i < d->run->module_count; i++) {
        const struct ppw_run_module *m = &d->run->modules[i];
        const char *error = ppw_symbols_module_error(d->syms, m);
        fputs("module ", out);
        cli_text(out, m->path);
        fprintf(out, " bias=0x%" PRIx64 " range=0x%" PRIx64 "-0x%" PRIx64 " build_id=%s flags=",
                m->load_bias, m->lo, m->hi, m->build_id[0] ? m->build_id : "-");
        module_flags(out, m->flags, false);
        fputs(m->unloaded ? " unloaded" : "", out);
        if (error) {
            text_key(out, "symbols", error);
        } else {
            const char *file = ppw_symbols_module_file(d->syms, m);
            text_key(out, "symbols", ppw_symbols_module_table(d->syms, m));
            if (strcmp(file, m->path) != 0)
                text_key(out, "from", file);
        }
        putc('\n', out);
    }
}

static void text_regions(struct dump *d)
{
    FILE *out = d->out;
    const struct ppw_run *run = d->run;
    for (size_t i = 0; i < run->region_count; i++) {
        const struct ppw_run_region *g = &run->regions[i];
        fprintf(out, "region %" PRIu32 " kind=%s", g->id, ppw_run_region_kind_name(g->kind));
        text_key(out, "name", g->name);
        text_key(out, "file", g->file);
        fprintf(out, ":%" PRIu32 ":%" PRIu32 " tag=", g->line, g->col);
        dump_tag(d, g->tag);
        fprintf(out, " op=%s\n", ppw_run_op_name(g->op));
    }
}

static const char *file_state(const struct ppw_run_file *f)
{
    return !f->present ? "absent" : f->flags & PPW_FILE_CLOSED ? "closed" : "open";
}

static void text_thread(struct dump *d, const struct ppw_run_thread *t)
{
    FILE *out = d->out;
    fprintf(out, "thread %" PRIu32, t->index);
    if (t->has_begin) {
        struct ppw_symbol start = {0};
        if (t->start_routine)
            ppw_symbols_lookup(d->syms, t->start_routine, true, &start);
        fprintf(out, " tid=%" PRIu32, t->tid);
        if (t->parent == UINT32_MAX)
            fputs(" parent=-", out);
        else
            fprintf(out, " parent=%" PRIu32, t->parent);
        fprintf(out, " root_tag=%" PRIu32 " start_routine=", t->root_tag);
        if (t->start_routine) {
            fprintf(out, "0x%" PRIx64 "(", t->start_routine);
            cli_text(out, start.function ? start.function : "?");
            putc(')', out);
        } else {
            putc('-', out);
        }
        fprintf(out, " start_ns=%" PRIu64, t->start_ns);
    } else {
        fputs(" (no THREAD record)", out);
    }
    if (t->ended) {
        fprintf(out, " %s end_ns=%" PRIu64 " cpu_ns=%" PRIu64 " samples_recorded=%" PRIu64,
                t->end_flags & PPW_THREAD_END_AT_EXIT ? "running_at_exit" : "ended", t->end_ns,
                t->cpu_ns, t->samples_recorded);
        if (t->runqueue_ns != PPW_WAIT_UNKNOWN)
            fprintf(out, " runqueue_ns=%" PRIu64, t->runqueue_ns);
        putc('\n', out);
    } else
        fputs(" never_ended\n", out);
    fprintf(out, "  files samples=%s events=%s profile=%s dropped", file_state(&t->samples_file),
            file_state(&t->events_file), file_state(&t->profile_file));
    for (unsigned r = 0; r < PPW_DROP_REASONS; r++)
        fprintf(out, " %s=%" PRIu64, ppw_run_drop_name(r), t->dropped[r]);
    fprintf(out, " ring_full=%" PRIu64 " handler_ns=%" PRIu64, t->ring_full, t->handler_ns);
    fprintf(out,
            "\n  stacks=%zu samples=%zu trace_events=%zu omp_events=%zu timers=%zu throttles=%zu\n",
            t->stack_count, t->sample_count, t->trace_count, t->omp_event_count, t->timer_count,
            t->throttle_count);
    const struct ppw_run_probe *w = &t->probe;
    if (t->has_probe)
        fprintf(out,
                "  probe_windows period=%" PRIu32 " start=%" PRIu64 "/%" PRIu64 "ns tail=%" PRIu64
                "ns end=%" PRIu64 "/%" PRIu64 "ns head=%" PRIu64 "ns throttled=%" PRIu64 "/%" PRIu64
                "ns interrupted=%" PRIu64 " clock=%" PRIu64 "ns\n",
                w->window_period, w->start_count, w->start_ns, w->start_tail_ns, w->end_count,
                w->end_ns, w->end_head_ns, w->throttled_count, w->throttled_ns, w->interrupted,
                w->clock_ns);
}

static void text_run(struct dump *d)
{
    const struct ppw_run *run = d->run;
    FILE *out = d->out;
    fputs("run ", out);
    cli_text(out, run->dir);
    fprintf(out, " format=%u.%u pid=%" PRIu32 " build_id=%s\n", run->file.major, run->file.minor,
            run->pid, run->build_id[0] ? run->build_id : "-");
    text_info(out, run);
    text_strings(out, "argv", run->argv, run->argc);
    text_strings(out, "env", run->env, run->env_count);
    if (run->env_left_out)
        fprintf(out, "  env: %" PRIu32 " more variables not recorded (PPW_RECORD_ENV=all records them)\n",
                run->env_left_out);
    text_settings(out, run);
    text_modules(d);
    text_regions(d);
    for (size_t i = 0; i < run->thread_count; i++)
        text_thread(d, &run->threads[i]);
    for (size_t i = 0; i < run->note_count; i++) {
        fprintf(out, "note severity=%" PRIu32 " ", run->notes[i].severity);
        cli_text(out, run->notes[i].message);
        putc('\n', out);
    }
}

void dump_run(struct dump *d)
{
    if (d->json)
        json_run(d);
    else
        text_run(d);
}

/* The views' shared input and output helpers (view.h). */
#define _POSIX_C_SOURCE 200809L

#include "view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "folded.h"
#include "glue.h"
#include "lines.h"
#include "names.h"
#include "user_stacks.h"
#include "read_run.h"
#include "symbols.h"
#include "view_int.h"
#include "read_elf.h"
#include "json.h"
#include "read_graph.h"
#include "stacks.h"

enum { PROGRESS_MIN_SAMPLES = 200000 };

int view_check_opts(struct view_opts *o, const char *command, size_t top_default,
                    struct ppw_err *err)
{
    if (!o->format || strcmp(o->format, "text") == 0)
        o->fmt = VIEW_TEXT;
    else if (strcmp(o->format, "tsv") == 0)
        o->fmt = VIEW_TSV;
    else if (strcmp(o->format, "csv") == 0)
        o->fmt = VIEW_TSV, o->csv = true; /* printed as TSV, converted by view_out_finish */
    else if (strcmp(o->format, "json") == 0)
        o->fmt = VIEW_JSON;
    else
        return ppw_err_set(err, PPW_EUSAGE,
                           "%s: unknown format '%s' (expected text, tsv, csv or json)", command,
                           o->format);
    o->top_n = top_default;
    if (o->top) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(o->top, &end, 10);
        if (o->top[0] < '0' || o->top[0] > '9' || *end || errno || n > SIZE_MAX)
            return ppw_err_set(err, PPW_EUSAGE, "%s: --top needs a number (0: all), not '%s'",
                               command, o->top);
        o->top_n = (size_t)n;
    }
    if (o->thread) {
        char *end;
        errno = 0;
        unsigned long long t = strtoull(o->thread, &end, 10);
        if (o->thread[0] < '0' || o->thread[0] > '9' || *end || errno || t >= UINT32_MAX)
            return ppw_err_set(err, PPW_EUSAGE, "%s: --thread needs a thread index, not '%s'",
                               command, o->thread);
        o->has_thread = true;
        o->thread_id = (uint32_t)t;
        o->split_threads = true;
    }
    if (o->rank) {
        char *end;
        errno = 0;
        unsigned long long r = strtoull(o->rank, &end, 10);
        if (o->rank[0] < '0' || o->rank[0] > '9' || *end || errno ||
            r >= UINT32_MAX / PPW_JOB_RANK_SHIFT)
            return ppw_err_set(err, PPW_EUSAGE, "%s: --rank needs a rank, not '%s'", command,
                               o->rank);
        if (o->folded)
            return ppw_err_set(err, PPW_EUSAGE, "%s: --rank needs a job directory, not --folded",
                               command);
        o->has_rank = true;
        o->rank_id = (uint32_t)r;
        o->split_threads = true;
    }
    if (o->ndirs)
        o->dir = o->dirs[0];
    if (o->folded && o->dir)
        return ppw_err_set(err, PPW_EUSAGE, "%s: give a run directory or --folded FILE, not both",
                           command);
    if (o->folded && !o->binary)
        return ppw_err_set(err, PPW_EUSAGE,
                           "%s: --folded needs --binary BIN, the binary the stacks ran in",
                           command);
    return 0;
}

static int load_folded(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    int rc = ppw_static_graph_load(o->binary, &in->graph, err);
    if (!rc)
        rc = ppw_folded_load(o->folded, in->graph, in->stacks, err);
    in->metric = "samples";
    in->unit = "samples";
    return rc;
}

double view_run_metric(const struct ppw_run *run, struct view_input *in)
{
    in->metric = run->has_metric ? ppw_run_metric_source_name(run->metric.source) : "unknown";
    if (run->has_metric && run->metric.unit == PPW_UNIT_NS) {
        in->unit = "s";
        return 1e-9;
    }
    in->unit = run->has_metric && run->metric.unit == PPW_UNIT_CYCLES ? "cycles" : "units";
    return 1;
}

/* The executable's module of the run, or NULL. */
static const struct ppw_run_module *exe_module(const struct ppw_run *run)
{
    for (size_t i = 0; i < run->module_count; i++)
        if (run->modules[i].flags & PPW_MODULE_EXE)
            return &run->modules[i];
    return NULL;
}

/* --force with a binary of another build, and the run's executable (the
 * file its samples' addresses must be read in) is no longer that build:
 * it was rebuilt in place.  Says what differs, precisely: the build-ids,
 * and whether the code still has the run's size and layout. */
static int rebuilt_error(const struct ppw_run *run, const struct ppw_run_module *exe,
                         struct ppw_err *err)
{
    struct ppw_elf *elf = NULL;
    struct ppw_err ignored;
    char layout[200] = "it cannot be read";
    if (ppw_elf_open(exe->path, &elf, &ignored) == 0) {
        uint64_t lo, hi, run_lo = exe->lo - exe->load_bias, run_hi = exe->hi - exe->load_bias;
        if (ppw_elf_load_extent(elf, &lo, &hi) != 0)
            snprintf(layout, sizeof layout, "it has no loadable segments");
        else if (lo != run_lo || hi != run_hi)
            snprintf(layout, sizeof layout,
                     "its code and data span 0x%" PRIx64 "-0x%" PRIx64 " where the run's spanned "
                     "0x%" PRIx64 "-0x%" PRIx64 ", so the samples' addresses point elsewhere",
                     lo, hi, run_lo, run_hi);
        else
            snprintf(layout, sizeof layout,
                     "its code and data still span 0x%" PRIx64 "-0x%" PRIx64 " as in the run, "
                     "but nothing shows the instructions at the samples' addresses are the same",
                     lo, hi);
        int rc = ppw_err_set(err, PPW_ECORRUPT,
                             "%s: the run's executable was rebuilt since the run (build-id %s, "
                             "the run's %s): %s. --force takes blame graphs from another build, "
                             "but the samples' addresses can only be read in the build that ran: "
                             "keep a copy of it (--binary COPY), or run the new build again",
                             exe->path, ppw_elf_build_id(elf), run->build_id, layout);
        ppw_elf_close(elf);
        return rc;
    }
    return ppw_err_set(err, PPW_ENOTFOUND,
                       "%s: the run's executable cannot be read (%s): the samples' addresses can "
                       "only be read in the build that ran",
                       exe->path, ignored.message);
}

int view_check_binary(const struct view_opts *o, const struct ppw_run *run, struct view_input *in,
                      struct ppw_lines *lines, struct ppw_err *err)
{
    int rc = ppw_run_check_binary(run, in->binary, err);
    if (rc == PPW_ECORRUPT && o->force) {
        in->forced = true;
        rc = 0;
    } else if (rc == PPW_ECORRUPT) {
        size_t len = strlen(err->message);
        snprintf(err->message + len, sizeof err->message - len, " (--force uses it anyway)");
    }
    const struct ppw_run_module *exe = rc ? NULL : exe_module(run);
    const char *why = exe ? ppw_lines_module_error(lines, exe) : NULL;
    if (why && in->forced)
        rc = rebuilt_error(run, exe, err);
    else if (why)
        rc = ppw_err_set(err, PPW_ENOTFOUND,
                         "%s: no source lines to attribute samples to (%s): build with ppw-cc, "
                         "which adds -g, or with clang -g -fpass-plugin=ppw.so",
                         in->binary, why);
    if (!rc)
        rc = ppw_static_graph_load(in->binary, &in->graph, err);
    return rc;
}

/* A progress bar on stderr while a large run is glued, on a terminal only
 * (the only other thing ppw-blame writes there is its one error line). */
static void progress_bar(void *context, uint64_t done, uint64_t total)
{
    bool *shown = context;
    if (total < PROGRESS_MIN_SAMPLES)
        return;
    int width = 40, filled = (int)((double)width * (double)done / (double)total);
    fprintf(stderr, "\rppw-blame: reading %" PRIu64 " samples [%.*s%*s] %3d%%", total, filled,
            "########################################", width - filled, "",
            (int)(100.0 * (double)done / (double)total));
    fflush(stderr);
    *shown = true;
}

/* The room job_notes holds for len bytes: a power of two, so that notes
 * added one by one (a job can have one per rank) copy it log(n) times. */
static size_t notes_room(size_t len)
{
    size_t room = 256;
    while (room < len)
        room *= 2;
    return room;
}

int view_note(struct view_input *in, const char *line, struct ppw_err *err)
{
    size_t old = in->job_notes_len, n = strlen(line);
    if (!in->job_notes || notes_room(old + 1) < old + n + 2) {
        char *p = realloc(in->job_notes, notes_room(old + n + 2));
        if (!p)
            return ppw_err_set(err, PPW_ENOMEM, "out of memory");
        in->job_notes = p;
    }
    memcpy(in->job_notes + old, line, n);
    in->job_notes[old + n] = '\n';
    in->job_notes[old + n + 1] = 0;
    in->job_notes_len = old + n + 1;
    return 0;
}

int view_reserve_fault(struct view_input *in, struct ppw_err *err)
{
    if (in->nfaults < in->faults_cap)
        return 0;
    size_t cap = in->faults_cap ? 2 * in->faults_cap : 16;
    struct view_rank_fault *f = realloc(in->faults, cap * sizeof *f);
    if (!f)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    in->faults = f;
    in->faults_cap = cap;
    return 0;
}

static const char *const fault_states[] = {"missing", "unfinished", "unreadable"};

/* Records a rank's fault for JSON. */
static int add_fault(struct view_input *in, uint32_t rank, int which, const char *error,
                     struct ppw_err *err)
{
    int rc = view_reserve_fault(in, err);
    if (rc)
        return rc;
    struct view_rank_fault *f = in->faults;
    f[in->nfaults] = (struct view_rank_fault){rank, fault_states[which], NULL, NULL};
    if (error && !(f[in->nfaults].error = strdup(error)))
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    in->nfaults++;
    return 0;
}

/* "<what>: r r r" for the ranks where which (0 missing, 1 unfinished, 2
 * unreadable) says so, as a note; each also as a fault. */
static int note_ranks(struct view_input *in, const struct ppw_job *job, const char *what, int which,
                      struct ppw_err *err)
{
    char line[1024];
    size_t len = (size_t)snprintf(line, sizeof line, "%s:", what), count = 0;
    size_t n = which == 0 ? job->nmissing : job->count;
    for (size_t i = 0; i < n; i++) {
        uint32_t r;
        if (which == 0)
            r = job->missing[i];
        else if (which == 1 && job->ranks[i].loaded && !job->ranks[i].finished)
            r = job->ranks[i].rank;
        else if (which == 2 && !job->ranks[i].loaded)
            r = job->ranks[i].rank;
        else
            continue;
        int rc = add_fault(in, r, which, which == 2 ? job->ranks[i].err.message : NULL, err);
        if (rc)
            return rc;
        count++;
        if (len < sizeof line - 40)
            len += (size_t)snprintf(line + len, sizeof line - len, " %" PRIu32, r);
        else if (len < sizeof line - 4)
            len += (size_t)snprintf(line + len, sizeof line - len, " ...");
    }
    return count ? view_note(in, line, err) : 0;
}

void view_add_glue(struct ppw_glue_stats *to, const struct ppw_glue_stats *from)
{
    to->samples += from->samples;
    to->glue_errors += from->glue_errors;
    to->truncated += from->truncated;
    to->without_lines += from->without_lines;
}

int view_check_first_binary(const struct view_opts *o, const struct ppw_job_rank *first,
                            struct view_input *in, struct ppw_err *err)
{
    struct ppw_run *run = NULL;
    struct ppw_symbols *syms = NULL;
    struct ppw_lines *lines = NULL;
    int rc = 0;
    if (!o->binary && !first->exe)
        rc = ppw_err_set(err, PPW_ENOTFOUND,
                         "%s: the run does not name its executable: give --binary BIN", first->dir);
    if (!rc && (!(in->binary = strdup(o->binary ? o->binary : first->exe)) ||
                !(in->build_id = strdup(first->build_id)) ||
                (first->exe && !(in->exe = strdup(first->exe)))))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    if (!rc)
        rc = ppw_run_load_merged(first->dir, &run, err);
    if (!rc)
        rc = ppw_symbols_new(run, getenv("PPW_DEBUG_DIR"), &syms, err);
    if (!rc)
        rc = ppw_lines_new(syms, &lines, err);
    if (!rc)
        rc = view_check_binary(o, run, in, lines, err);
    if (!rc)
        view_run_metric(run, in);
    ppw_lines_free(lines);
    ppw_symbols_free(syms);
    ppw_run_free(run);
    return rc;
}

static int load_job(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    struct ppw_job *job = NULL;
    const struct ppw_job_rank *first = NULL, *other = NULL;
    int rc = ppw_job_scan(in->source, &job, err);
    if (!rc)
        job->exe_copy = o->binary;
    if (!rc)
        rc = ppw_job_load(job, getenv("PPW_DEBUG_DIR"), cli_loader_threads(), err);
    if (!rc)
        other = ppw_job_mismatch(job, &first);
    if (!rc && !first)
        rc = ppw_err_set(err, job->ranks[0].err.code ? job->ranks[0].err.code : PPW_EIO,
                         "%s: no rank could be read (rank %" PRIu32 ": %s)", in->source,
                         job->ranks[0].rank, job->ranks[0].err.message);
    if (!rc && other && !o->force)
        rc = ppw_err_set(err, PPW_ECORRUPT,
                         "%s: ranks from different binaries: rank %" PRIu32 " has build-id %s, "
                         "rank %" PRIu32 " has %s (--force uses them anyway)",
                         in->source, first->rank, first->build_id[0] ? first->build_id : "none",
                         other->rank, other->build_id[0] ? other->build_id : "none");
    if (!rc && other)
        rc = view_note(in, "warning: the ranks come from different binaries (--force)", err);
    /* The binary is checked against the first rank read. */
    if (!rc)
        rc = view_check_first_binary(o, first, in, err);
    if (!rc)
        rc = ppw_job_merge(job, in->stacks, err);
    size_t nthreads = 0;
    for (size_t i = 0; !rc && i < job->count; i++)
        nthreads += job->ranks[i].nthreads;
    if (!rc && (!(in->threads = malloc((nthreads ? nthreads : 1) * sizeof *in->threads)) ||
                !(in->ranks = malloc(job->count * sizeof *in->ranks))))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    if (!rc) {
        in->from_run = true;
        in->job = true;
        in->finished = true;
        in->job_size = job->size;
        for (size_t i = 0; i < job->count; i++) {
            const struct ppw_job_rank *r = &job->ranks[i];
            if (!r->loaded)
                continue;
            in->ranks[in->nranks++] = r->rank;
            in->finished &= r->finished;
            size_t first = in->nthreads;
            for (size_t t = 0; t < r->nthreads; t++)
                in->threads[in->nthreads++] =
                    r->rank * PPW_JOB_RANK_SHIFT +
                    (r->threads[t] < PPW_JOB_RANK_SHIFT ? r->threads[t] : PPW_JOB_RANK_SHIFT - 1);
            view_add_glue(&in->glue, &r->glue);
            if (!rc)
                rc = view_add_losses(in, NULL, true, r->rank, in->threads + first, r->losses,
                                     r->nthreads, err);
        }
        rc = note_ranks(in, job, "warning: ranks missing (no run directory)", 0, err);
    }
    if (!rc)
        rc = note_ranks(in, job, "warning: ranks that did not end normally", 1, err);
    if (!rc)
        rc = note_ranks(in, job, "warning: ranks that could not be read", 2, err);
    for (size_t i = 0; !rc && i < job->count; i++)
        if (!job->ranks[i].loaded) {
            char line[sizeof job->ranks[i].err.message + 32];
            snprintf(line, sizeof line, "  rank %" PRIu32 ": %s", job->ranks[i].rank,
                     job->ranks[i].err.message);
            rc = view_note(in, line, err);
        }
    ppw_job_free(job);
    return rc;
}

static int load_run(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    bool shown = false;
    struct ppw_glue_progress progress = {progress_bar, &shown};
    struct ppw_run *run = NULL;
    struct ppw_symbols *syms = NULL;
    struct ppw_lines *lines = NULL;
    int rc = cli_run_dir(o->dir, &in->source, err);
    if (!rc && ppw_job_is_dir(in->source))
        return load_job(o, in, err);
    if (!rc && o->has_rank)
        rc = ppw_err_set(err, PPW_EUSAGE, "%s: --rank needs a job directory (of an MPI run)",
                         in->source);
    if (!rc)
        rc = ppw_run_load_merged(in->source, &run, err);
    if (!rc && o->binary) {
        struct ppw_err ignored; /* --binary of another build: checked below */
        ppw_run_use_exe_copy(run, o->binary, &ignored);
    }
    if (!rc && !o->binary && !(run->has_info && run->info.exe[0]))
        rc = ppw_err_set(err, PPW_ENOTFOUND,
                         "%s: the run does not name its executable: give --binary BIN", in->source);
    if (!rc && (!(in->binary = strdup(o->binary ? o->binary : run->info.exe)) ||
                !(in->build_id = strdup(run->build_id)) ||
                (run->has_info && run->info.exe[0] && !(in->exe = strdup(run->info.exe)))))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    if (!rc)
        rc = ppw_symbols_new(run, getenv("PPW_DEBUG_DIR"), &syms, err);
    if (!rc)
        rc = ppw_lines_new(syms, &lines, err);
    if (!rc)
        rc = view_check_binary(o, run, in, lines, err);
    if (!rc && run->thread_count &&
        !(in->threads = malloc(run->thread_count * sizeof *in->threads)))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < run->thread_count; i++) {
        struct ppw_run_loss loss;
        ppw_run_thread_loss(run, &run->threads[i], &loss);
        in->threads[in->nthreads++] = run->threads[i].index;
        rc = view_add_losses(in, NULL, false, 0, &run->threads[i].index, &loss, 1, err);
    }
    if (!rc) {
        in->from_run = true;
        in->finished = run->finished;
        rc = ppw_glue_run(run, syms, lines, view_run_metric(run, in), isatty(2) ? &progress : NULL,
                          in->stacks, &in->glue, err);
        if (shown)
            fputs("\r\033[K", stderr); /* clears the bar */
    }
    ppw_lines_free(lines);
    ppw_symbols_free(syms);
    ppw_run_free(run);
    return rc;
}

static int compare_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

int view_add_losses(struct view_input *in, const char *run, bool has_rank, uint32_t rank,
                    const uint32_t *ids, const struct ppw_run_loss *losses, size_t n,
                    struct ppw_err *err)
{
    if (n == 0)
        return 0;
    if (in->nlosses + n > in->losses_cap) { /* doubling: added a rank or a thread at a time */
        size_t cap = in->losses_cap ? 2 * in->losses_cap : 16;
        while (cap < in->nlosses + n)
            cap *= 2;
        struct view_loss *grown = realloc(in->losses, cap * sizeof *grown);
        if (!grown)
            return ppw_err_set(err, PPW_ENOMEM, "out of memory");
        in->losses = grown;
        in->losses_cap = cap;
    }
    for (size_t i = 0; i < n; i++) {
        struct view_loss *l = &in->losses[in->nlosses];
        *l = (struct view_loss){ids[i], has_rank, rank, NULL, losses[i]};
        if (run && !(l->run = strdup(run)))
            return ppw_err_set(err, PPW_ENOMEM, "out of memory");
        in->nlosses++;
    }
    return 0;
}

/* Folded stacks carry no threads but thread 0: the threads are the stacks'. */
static int stack_threads(struct view_input *in, struct ppw_err *err)
{
    size_t n;
    const struct ppw_blame_stack *st = ppw_stack_set_stacks(in->stacks, &n);
    if (n && !(in->threads = malloc(n * sizeof *in->threads)))
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (st[i].thread != UINT32_MAX)
            in->threads[in->nthreads++] = st[i].thread;
    if (in->nthreads)
        qsort(in->threads, in->nthreads, sizeof *in->threads, compare_u32);
    size_t k = 0;
    for (size_t i = 0; i < in->nthreads; i++)
        if (!k || in->threads[k - 1] != in->threads[i])
            in->threads[k++] = in->threads[i];
    in->nthreads = k;
    return 0;
}

static bool in_list(const uint32_t *v, size_t n, uint32_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* Whether a stack's thread id is in the selection. */
static bool selected(const struct view_input *in, uint32_t id)
{
    if (id == UINT32_MAX)
        return false;
    if (!in->job)
        return id == in->thread;
    return (!in->sel_rank || id / PPW_JOB_RANK_SHIFT == in->rank) &&
           (!in->sel_thread || id % PPW_JOB_RANK_SHIFT == in->thread);
}

/* --thread T and --rank R: the stacks of thread T (of every rank in a job),
 * of rank R, or of thread T of rank R. */
static int select_stacks(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    in->sel_thread = o->has_thread;
    in->sel_rank = o->has_rank;
    in->thread = o->thread_id;
    in->rank = o->rank_id;
    if (o->has_rank && !in_list(in->ranks, in->nranks, o->rank_id))
        return ppw_err_set(err, PPW_ENOTFOUND, "%s: no rank %" PRIu32 " (%zu ranks read)",
                           in->source, o->rank_id, in->nranks);
    bool known = false;
    for (size_t i = 0; i < in->nthreads && o->has_thread; i++)
        known |= selected(in, in->threads[i]);
    if (o->has_thread && !known)
        return ppw_err_set(err, PPW_ENOTFOUND, "%s: no thread %" PRIu32 " (there are %zu: %s)",
                           in->source, o->thread_id, in->nthreads,
                           in->nthreads ? "see 'ppw-blame dump'" : "none");
    size_t n;
    const struct ppw_blame_stack *st = ppw_stack_set_stacks(in->stacks, &n);
    if (n && !(in->sel = malloc(n * sizeof *in->sel)))
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (selected(in, st[i].thread)) {
            in->sel[in->nsel++] = st[i];
            in->sel_samples += st[i].samples;
            in->sel_weight += st[i].weight;
        }
    in->selected = true;
    return 0;
}

int view_load(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    *in = (struct view_input){0};
    int rc = ppw_stack_set_new(&in->stacks, err);
    if (rc)
        return rc;
    if (o->split_threads)
        ppw_stack_set_split_threads(in->stacks);
    if (!o->folded && o->ndirs > 1) {
        rc = view_load_runs(o, in, err);
    } else if (!o->folded) {
        in->nruns = 1;
        rc = load_run(o, in, err);
    } else if (!(in->source = strdup(o->folded)) || !(in->binary = strdup(o->binary))) {
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    } else {
        rc = load_folded(o, in, err);
        if (!rc)
            rc = stack_threads(in, err);
    }
    if (!rc && (o->has_thread || o->has_rank))
        rc = select_stacks(o, in, err);
    if (!rc)
        rc = ppw_names_new(in->graph, &in->names, err);
    if (!rc && !(in->user = calloc(1, sizeof *in->user)))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    return rc;
}

int view_load_dir(const struct view_opts *o, const char *dir, struct view_input *in,
                  struct ppw_err *err)
{
    struct view_opts one = *o;
    one.dir = dir, one.dirs = NULL, one.ndirs = 0;
    *in = (struct view_input){.nruns = 1};
    int rc = ppw_stack_set_new(&in->stacks, err);
    if (!rc) {
        ppw_stack_set_split_threads(in->stacks); /* the merge keeps each thread's id */
        rc = load_run(&one, in, err);
    }
    return rc;
}

void view_input_free(struct view_input *in)
{
    if (in->user)
        ppw_user_stacks_free(in->user);
    free(in->user);
    ppw_names_free(in->names);
    ppw_static_graph_free(in->graph);
    ppw_stack_set_free(in->stacks);
    free(in->source);
    for (size_t i = 0; in->run_dirs && i < in->nruns; i++)
        free(in->run_dirs[i]);
    free(in->run_dirs);
    free(in->build_id);
    free(in->exe);
    free(in->binary);
    free(in->threads);
    for (size_t i = 0; i < in->nlosses; i++)
        free(in->losses[i].run);
    free(in->losses);
    free(in->ranks);
    free(in->job_notes);
    for (size_t i = 0; i < in->nfaults; i++) {
        free(in->faults[i].error);
        free(in->faults[i].job);
    }
    free(in->faults);
    free(in->sel);
    *in = (struct view_input){0};
}

const struct ppw_blame_stack *view_stacks(const struct view_input *in, size_t *count)
{
    if (in->selected) {
        *count = in->nsel;
        return in->sel;
    }
    return ppw_stack_set_stacks(in->stacks, count);
}

const struct ppw_blame_stack *view_user_stacks(const struct view_input *in, size_t *count,
                                               struct ppw_err *err)
{
    size_t n;
    const struct ppw_blame_stack *stacks = view_stacks(in, &n);
    *count = 0;
    if (!in->user->stacks && ppw_user_stacks_build(in->names, stacks, n, in->user, err) != 0)
        return NULL;
    *count = in->user->count;
    return in->user->stacks;
}

const char *view_frame_name(const struct view_input *in, const struct ppw_blame_frame *frame)
{
    return ppw_names_frame(in->names, frame);
}

uint64_t view_total_samples(const struct view_input *in)
{
    return in->selected ? in->sel_samples : ppw_stack_set_samples(in->stacks);
}

double view_total_weight(const struct view_input *in)
{
    return in->selected ? in->sel_weight : ppw_stack_set_weight(in->stacks);
}

size_t view_top_frame(const struct ppw_blame_stack *st)
{
    for (size_t i = st->nframes; i-- > 0;)
        if (st->frames[i].function && strcmp(st->frames[i].function, "main") == 0)
            return i;
    return st->nframes ? st->nframes - 1 : 0;
}

double view_pct(uint64_t part, uint64_t total)
{
    return total ? 100.0 * (double)part / (double)total : 0;
}

/* What each enum ppw_loss_cause bit means, for the text warning. */
static const char *loss_cause_text(unsigned bit, const struct view_loss *l)
{
    switch (1u << bit) {
    case PPW_LOSS_CRASH: return "the process ended as the thread started";
    case PPW_LOSS_NO_FILE: return "its samples file could not be created (dump --what run: notes)";
    case PPW_LOSS_NOT_ARMED: return "its sampler could not start (dump --what run: notes)";
    case PPW_LOSS_DISK_FULL: return "its samples file could not grow (disk full or file size limit)";
    case PPW_LOSS_DROPPED:
        return "samples dropped by the sampler (thread not ready, stack walk failed, ring buffer"
               " full)";
    case PPW_LOSS_SIGNAL_BLOCKED: return "the thread blocked the sampling signal";
    case PPW_LOSS_SIGNAL_IGNORED: return "the program ignored the sampling signal";
    case PPW_LOSS_SIGNAL_TAKEN: return "the program installed its own handler for the sampling signal";
    case PPW_LOSS_TIMER_CLOSED: return "the program closed the sampler's descriptor";
    default:
        (void)l;
        return "no cause recorded: the program may have blocked, ignored or taken the sampling "
               "signal, or closed the sampler's descriptor";
    }
}

static void loss_label(FILE *out, const struct view_loss *l)
{
    if (l->run) {
        cli_text(out, l->run);
        putc(' ', out);
    }
    if (l->has_rank)
        fprintf(out, "rank %" PRIu32 " thread %" PRIu32, l->rank, l->thread % PPW_JOB_RANK_SHIFT);
    else
        fprintf(out, "thread %" PRIu32, l->thread);
}

/* One warning line per thread whose samples fall short of its CPU time. */
static void text_losses(FILE *out, const struct view_input *in)
{
    enum { SHOWN = 8 };
    size_t shown = 0, more = 0;
    for (size_t i = 0; i < in->nlosses; i++) {
        const struct view_loss *l = &in->losses[i];
        const struct ppw_run_loss *x = &l->loss;
        bool crashed = !x->known && (x->causes & PPW_LOSS_CRASH);
        if (!x->significant && !crashed)
            continue;
        if (shown == SHOWN) {
            more++;
            continue;
        }
        shown++;
        fputs("warning: samples lost: ", out);
        loss_label(out, l);
        if (x->known)
            fprintf(out,
                    " had %.3f s of CPU time (%" PRIu64 " samples' worth), recorded %" PRIu64
                    ", lost %" PRIu64 ":",
                    (double)x->cpu_ns / 1e9, x->expected, x->recorded, x->lost);
        else
            fputs(": its samples file was never written:", out);
        const char *sep = " ";
        for (unsigned b = 0; b < PPW_LOSS_CAUSES; b++)
            if (x->causes & (1u << b)) {
                fprintf(out, "%s%s", sep, loss_cause_text(b, l));
                sep = "; ";
            }
        putc('\n', out);
    }
    if (more)
        fprintf(out, "warning: samples lost in %zu more threads (JSON: \"lost\")\n", more);
}

/* "lost": every thread's samples against its CPU time. */
static void json_losses(FILE *out, const struct view_input *in)
{
    if (!in->from_run)
        return;
    fputs(",\"lost\":[", out);
    for (size_t i = 0; i < in->nlosses; i++) {
        const struct view_loss *l = &in->losses[i];
        const struct ppw_run_loss *x = &l->loss;
        fprintf(out, "%s{", i ? "," : "");
        if (l->run) {
            fputs("\"run\":", out);
            json_string(out, l->run);
            putc(',', out);
        }
        if (l->has_rank)
            fprintf(out, "\"rank\":%" PRIu32 ",\"thread\":%" PRIu32, l->rank,
                    l->thread % PPW_JOB_RANK_SHIFT);
        else
            fprintf(out, "\"thread\":%" PRIu32, l->thread);
        if (x->known)
            fprintf(out,
                    ",\"cpu_ns\":%" PRIu64 ",\"expected\":%" PRIu64 ",\"recorded\":%" PRIu64
                    ",\"lost\":%" PRIu64,
                    x->cpu_ns, x->expected, x->recorded, x->lost);
        else
            fprintf(out, ",\"cpu_ns\":null,\"expected\":null,\"recorded\":%" PRIu64
                         ",\"lost\":null",
                    x->recorded);
        fprintf(out, ",\"significant\":%s,\"causes\":[", x->significant ? "true" : "false");
        const char *sep = "";
        for (unsigned b = 0; b < PPW_LOSS_CAUSES; b++)
            if (x->causes & (1u << b)) {
                fprintf(out, "%s\"%s\"", sep, ppw_run_loss_cause_name(b));
                sep = ",";
            }
        fputs("]}", out);
    }
    putc(']', out);
}

void view_json_head(FILE *out, const struct view_input *in)
{
    fprintf(out, "{\"total_samples\":%" PRIu64 ",\"metric\":{\"name\":", view_total_samples(in));
    json_string(out, in->metric);
    fputs(",\"unit\":", out);
    json_string(out, in->unit);
    fputs(",\"total\":", out);
    json_double(out, view_total_weight(in));
    putc('}', out);
    if (in->job) {
        fprintf(out, ",\"ranks_read\":%zu,\"job_size\":%" PRIu32 ",\"rank_faults\":[", in->nranks,
                in->job_size);
        for (size_t i = 0; i < in->nfaults; i++) {
            const struct view_rank_fault *f = &in->faults[i];
            fprintf(out, "%s{\"rank\":%" PRIu32 ",\"state\":\"%s\"", i ? "," : "", f->rank,
                    f->state);
            if (f->error) {
                fputs(",\"error\":", out);
                json_string(out, f->error);
            }
            if (f->job) {
                fputs(",\"job\":", out);
                json_string(out, f->job);
            }
            putc('}', out);
        }
        putc(']', out);
    }
    if (in->nruns > 1) {
        fprintf(out, ",\"runs\":%zu,\"run_dirs\":[", in->nruns);
        for (size_t i = 0; i < in->nruns; i++) {
            if (i)
                putc(',', out);
            json_string(out, in->run_dirs[i]);
        }
        putc(']', out);
    }
    json_losses(out, in);
}

void view_json_open(FILE *out, const struct view_input *in, const char *list)
{
    view_json_head(out, in);
    if (in->sel_rank)
        fprintf(out, ",\"rank\":%" PRIu32, in->rank);
    if (in->sel_thread)
        fprintf(out, ",\"thread\":%" PRIu32, in->thread);
    fprintf(out, ",\"%s\":[", list);
}

void view_text_title(FILE *out, const struct view_input *in, const char *view)
{
    fprintf(out, "%s: %" PRIu64 " samples (metric: %s) ", view, view_total_samples(in), in->metric);
    if (in->sel_thread)
        fprintf(out, "of thread %" PRIu32 " ", in->thread);
    if (in->sel_rank)
        fprintf(out, "of rank %" PRIu32 " ", in->rank);
    fputs("from ", out);
    cli_text(out, in->source);
    fputs(", binary ", out);
    cli_text(out, view_basename(in->binary));
    putc('\n', out);
    if (!in->from_run)
        return;
    if (in->nruns > 1)
        fprintf(out, "runs: %zu, their samples summed\n", in->nruns);
    if (in->job)
        fprintf(out, "job: %zu of %" PRIu32 " ranks read\n", in->nranks, in->job_size);
    if (in->job_notes)
        fputs(in->job_notes, out);
    if (in->forced)
        fputs("warning: the binary is from another build than the run (--force)\n", out);
    if (!in->finished && !in->job && in->nruns <= 1) /* several: a note names them */
        fputs("warning: the run did not end normally\n", out);
    text_losses(out, in);
    const struct ppw_glue_stats *g = &in->glue;
    if (g->glue_errors)
        fprintf(out, "warning: %" PRIu64 " samples lost the end of their spawn chain\n",
                g->glue_errors);
    if (g->truncated)
        fprintf(out,
                "note: %" PRIu64
                " samples had stacks cut before main (walk depth limit, or the ring's 4 KiB copy)\n",
                g->truncated);
    if (g->without_lines)
        fprintf(out, "note: %" PRIu64 " samples have no frame with a source line\n",
                g->without_lines);
}

static void put_clean(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        putc((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i], out);
}

void view_cell(FILE *out, const char *s, size_t width, bool keep_end)
{
    size_t len = strlen(s);
    if (len <= width) {
        put_clean(out, s, len);
        fprintf(out, "%*s", (int)(width - len), "");
    } else if (width < 4) {
        put_clean(out, keep_end ? s + len - width : s, width);
    } else if (keep_end) {
        fputs("...", out);
        put_clean(out, s + len - (width - 3), width - 3);
    } else {
        put_clean(out, s, width - 3);
        fputs("...", out);
    }
}

void view_wrap(FILE *out, const char *prefix, const char *s, size_t indent, size_t width)
{
    size_t lead = strlen(prefix), col = lead;
    bool line_empty = true; /* no part of s on this line yet */
    fputs(prefix, out);
    while (*s) {
        const char *sep = strstr(s, " > ");
        size_t len = sep ? (size_t)(sep - s) : strlen(s);
        if (!line_empty && col + 3 + len <= width) {
            fputs(" > ", out);
            col += 3;
        } else if (!line_empty) {
            fprintf(out, "\n%*s> ", (int)(indent + lead), "");
            col = lead + 2;
        }
        while (col + len > width && width > col) { /* a part longer than a line */
            put_clean(out, s, width - col);
            s += width - col, len -= width - col;
            fprintf(out, "\n%*s", (int)(indent + lead + 2), "");
            col = lead + 2;
        }
        put_clean(out, s, len);
        col += len;
        line_empty = false;
        s += len + (sep ? 3 : 0);
    }
}

FILE *view_out(struct view_opts *o)
{
    if (!o->csv)
        return stdout;
    if (!o->csv_stream)
        o->csv_stream = open_memstream(&o->csv_tsv, &o->csv_size);
    /* without memory the table goes nowhere; view_out_finish says so */
    return o->csv_stream ? o->csv_stream : fopen("/dev/null", "w");
}

int view_out_finish(struct view_opts *o)
{
    if (!o->csv)
        return 0;
    if (!o->csv_stream)
        return PPW_ENOMEM;
    int rc = fclose(o->csv_stream) == 0 ? 0 : PPW_ENOMEM;
    o->csv_stream = NULL;
    for (size_t i = 0; !rc && i < o->csv_size;) {
        size_t end = i;
        while (end < o->csv_size && o->csv_tsv[end] != '\n')
            end++;
        for (size_t f = i; f <= end; f++) /* fields between tabs */
            if (f == end || o->csv_tsv[f] == '\t') {
                cli_csv_n(stdout, o->csv_tsv + i, f - i);
                if (f < end)
                    putc(',', stdout);
                i = f + 1;
            }
        putc('\n', stdout);
        i = end + 1;
    }
    free(o->csv_tsv);
    o->csv_tsv = NULL;
    return rc;
}

void view_tsv(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
        putc(*p < 0x20 || *p == 0x7f ? ' ' : *p, out);
}

const char *view_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

const char *view_metric_header(const struct view_input *in)
{
    if (strcmp(in->unit, "s") == 0)
        return "seconds";
    return strcmp(in->unit, "cycles") == 0 ? "cycles" : "metric";
}

void view_metric_cell(FILE *out, const struct view_input *in, double weight)
{
    if (strcmp(in->unit, "s") == 0)
        fprintf(out, "%9.3f", weight);
    else if (strcmp(in->unit, "cycles") == 0)
        fprintf(out, "%9.3g", weight);
    else
        fprintf(out, "%9s", "-");
}

/* Several run or job directories summed (view_int.h's view_load_runs;
 * docs/ppw-blame.md, "Several runs").  Runs are loaded in parallel by the
 * job loader (job.h), as if they were the ranks of a job, and thread T of
 * every run becomes one thread T; jobs are loaded one after the other,
 * each as a single job would be, and rank R thread T of every job becomes
 * one rank R thread T.  Either way the runs must be of one program (one
 * build-id, or with --force builds of one executable) and one metric unit. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "glue.h"
#include "job.h"
#include "lines.h"
#include "read_run.h"
#include "stacks.h"
#include "symbols.h"
#include "view_int.h"

enum { SOURCE_MAX = 60 }; /* the title names the runs up to this length, else the first */

/* What must agree between the runs summed. */
struct identity {
    const char *dir;
    const char *build_id; /* hex, "" when none */
    const char *exe;      /* NULL when the run does not name it */
    const char *unit;     /* of the weights: "s", "cycles" or "units" */
};

static const char *unit_of(bool has_metric, uint32_t unit)
{
    if (has_metric && unit == PPW_UNIT_NS)
        return "s";
    return has_metric && unit == PPW_UNIT_CYCLES ? "cycles" : "units";
}

/* Refuses to sum b with a, the first run: another executable, another
 * build (unless --force, then noted once: *noted), another metric unit. */
static int check_same_program(const struct view_opts *o, struct view_input *in,
                              const struct identity *a, const struct identity *b, bool *noted,
                              struct ppw_err *err)
{
    if (strcmp(a->build_id, b->build_id) != 0) {
        const char *name_a = a->exe ? view_basename(a->exe) : NULL;
        const char *name_b = b->exe ? view_basename(b->exe) : NULL;
        const char *id_a = a->build_id[0] ? a->build_id : "none";
        const char *id_b = b->build_id[0] ? b->build_id : "none";
        if (name_a && name_b && strcmp(name_a, name_b) != 0)
            return ppw_err_set(err, PPW_ECORRUPT,
                               "runs of different executables: %s ran %s (build-id %s), %s ran "
                               "%s (build-id %s)",
                               a->dir, a->exe, id_a, b->dir, b->exe, id_b);
        if (!o->force)
            return ppw_err_set(err, PPW_ECORRUPT,
                               "runs from different builds: %s has build-id %s, %s has %s "
                               "(--force sums them anyway)",
                               a->dir, id_a, b->dir, id_b);
        if (!*noted) {
            *noted = true;
            int rc = view_note(in, "warning: the runs come from different builds (--force)", err);
            if (rc)
                return rc;
        }
    }
    if (strcmp(a->unit, b->unit) != 0)
        return ppw_err_set(err, PPW_ECORRUPT,
                           "runs of different metrics: %s weighs its samples in %s, %s in %s; "
                           "they do not add up",
                           a->dir, a->unit, b->dir, b->unit);
    return 0;
}

/* Every argument a directory, each once, all runs or all jobs. */
static int check_dirs(const struct view_opts *o, bool *jobs, struct ppw_err *err)
{
    for (size_t i = 0; i < o->ndirs; i++) {
        const char *dir = o->dirs[i];
        struct stat st, other;
        if (stat(dir, &st) != 0)
            return ppw_err_set(err, PPW_EIO, "%s: %s", dir, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return ppw_err_set(err, PPW_EIO,
                               "%s: not a directory (give run or job directories to sum)", dir);
        for (size_t k = 0; k < i; k++) /* counted twice, its samples would be too */
            if (stat(o->dirs[k], &other) == 0 && other.st_dev == st.st_dev &&
                other.st_ino == st.st_ino)
                return ppw_err_set(err, PPW_EUSAGE, "%s and %s are the same directory",
                                   o->dirs[k], dir);
        bool job = ppw_job_is_dir(dir);
        if (i == 0)
            *jobs = job;
        else if (job != *jobs)
            return ppw_err_set(err, PPW_EUSAGE,
                               "%s is a %s directory and %s a %s directory: sum runs with runs, "
                               "jobs with jobs",
                               o->dirs[0], *jobs ? "job" : "run", dir, job ? "job" : "run");
    }
    if (!*jobs && o->has_rank)
        return ppw_err_set(err, PPW_EUSAGE, "%s: --rank needs job directories (of MPI runs)",
                           o->dirs[0]);
    return 0;
}

/* in->source: "A + B + C", or "A + N more" past SOURCE_MAX; in->run_dirs. */
static int name_runs(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    size_t len = 0;
    if (!(in->run_dirs = calloc(o->ndirs, sizeof *in->run_dirs)))
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    for (size_t i = 0; i < o->ndirs; i++) {
        if (!(in->run_dirs[i] = strdup(o->dirs[i])))
            return ppw_err_set(err, PPW_ENOMEM, "out of memory");
        in->nruns++;
        len += strlen(o->dirs[i]) + 3;
    }
    if (!(in->source = malloc(len + strlen(o->dirs[0]) + 32)))
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    if (len > SOURCE_MAX) {
        sprintf(in->source, "%s + %zu more", o->dirs[0], o->ndirs - 1);
        return 0;
    }
    in->source[0] = '\0';
    for (size_t i = 0; i < o->ndirs; i++)
        strcat(strcat(in->source, i ? " + " : ""), o->dirs[i]);
    return 0;
}

static int compare_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* Sorts v[0..*n) and drops repeats. */
static void sort_unique(uint32_t *v, size_t *n)
{
    if (!*n)
        return;
    qsort(v, *n, sizeof *v, compare_u32);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (!k || v[k - 1] != v[i])
            v[k++] = v[i];
    *n = k;
}

/* Appends v[0..n) to *list (of *count). */
static int append_ids(uint32_t **list, size_t *count, const uint32_t *v, size_t n,
                      struct ppw_err *err)
{
    uint32_t *p = realloc(*list, (*count + n + 1) * sizeof *p);
    if (!p)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    if (n)
        memcpy(p + *count, v, n * sizeof *p);
    *list = p;
    *count += n;
    return 0;
}

/* ---- runs: the job loader, each run an entry ---- */


static int load_runs(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    struct ppw_job *job = NULL;
    int rc = ppw_job_of_runs(in->source, o->dirs, o->ndirs, &job, err);
    if (!rc)
        job->exe_copy = o->binary;
    if (!rc)
        rc = ppw_job_load(job, getenv("PPW_DEBUG_DIR"), cli_loader_threads(), err);
    /* A run that cannot be read is an error: the sum would be silently short. */
    for (size_t i = 0; !rc && i < job->count; i++)
        if (!job->ranks[i].loaded)
            rc = ppw_err_set(err, job->ranks[i].err.code ? job->ranks[i].err.code : PPW_EIO, "%s",
                             job->ranks[i].err.message);
    const struct ppw_job_rank *first = rc ? NULL : &job->ranks[0];
    struct identity a = {0};
    bool noted = false;
    if (first)
        a = (struct identity){first->dir, first->build_id, first->exe,
                              unit_of(first->has_metric, first->metric_unit)};
    for (size_t i = 1; !rc && i < job->count; i++) {
        const struct ppw_job_rank *r = &job->ranks[i];
        struct identity b = {r->dir, r->build_id, r->exe, unit_of(r->has_metric, r->metric_unit)};
        rc = check_same_program(o, in, &a, &b, &noted, err);
    }
    if (!rc)
        rc = view_check_first_binary(o, first, in, err);
    if (!rc)
        rc = ppw_job_merge(job, in->stacks, err);
    char line[1024];
    size_t len = (size_t)snprintf(line, sizeof line, "warning: runs that did not end normally:");
    bool unfinished = false;
    in->finished = true;
    for (size_t i = 0; !rc && i < job->count; i++) {
        const struct ppw_job_rank *r = &job->ranks[i];
        rc = append_ids(&in->threads, &in->nthreads, r->threads, r->nthreads, err);
        if (!rc)
            rc = view_add_losses(in, r->dir, false, 0, r->threads, r->losses, r->nthreads, err);
        view_add_glue(&in->glue, &r->glue);
        in->finished &= r->finished;
        if (!r->finished && len < sizeof line - 4) {
            unfinished = true;
            len += (size_t)snprintf(line + len, sizeof line - len, " %s", r->dir);
        }
    }
    if (!rc && unfinished)
        rc = view_note(in, line, err);
    ppw_job_free(job);
    return rc;
}

/* ---- jobs: each loaded as one job, then added up ---- */

/* Adds one job's part to in: stacks (rank R thread T of every job is one),
 * ranks, threads, faults and notes (named after the job). */
static int add_job(struct view_input *in, struct view_input *part, const char *dir,
                   struct ppw_err *err)
{
    size_t n;
    const struct ppw_blame_stack *st = ppw_stack_set_stacks(part->stacks, &n);
    int rc = 0;
    for (size_t s = 0; s < n && !rc; s++)
        rc = ppw_stack_set_add_copy(in->stacks, &st[s], st[s].thread, err);
    if (!rc)
        rc = append_ids(&in->threads, &in->nthreads, part->threads, part->nthreads, err);
    if (!rc)
        rc = append_ids(&in->ranks, &in->nranks, part->ranks, part->nranks, err);
    for (size_t i = 0; !rc && i < part->nlosses; i++) {
        const struct view_loss *l = &part->losses[i];
        rc = view_add_losses(in, dir, l->has_rank, l->rank, &l->thread, &l->loss, 1, err);
    }
    view_add_glue(&in->glue, &part->glue);
    in->finished &= part->finished;
    in->forced |= part->forced;
    if (part->job_size > in->job_size)
        in->job_size = part->job_size;
    for (size_t i = 0; !rc && i < part->nfaults; i++) {
        if ((rc = view_reserve_fault(in, err)) != 0)
            return rc;
        struct view_rank_fault *f = in->faults;
        f[in->nfaults] = part->faults[i];
        part->faults[i].error = NULL; /* moved */
        if (!(f[in->nfaults++].job = strdup(dir)))
            rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    char line[1200];
    if (!rc && part->job_notes) {
        snprintf(line, sizeof line, "%s:", dir);
        rc = view_note(in, line, err);
    }
    for (char *p = part->job_notes; !rc && p && *p;) {
        char *end = strchr(p, '\n');
        snprintf(line, sizeof line, "  %.*s", (int)(end ? end - p : (long)strlen(p)), p);
        rc = view_note(in, line, err);
        p = end ? end + 1 : p + strlen(p);
    }
    return rc;
}

static int load_jobs(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    struct identity a = {0};
    bool noted = false;
    int rc = 0;
    in->finished = true;
    for (size_t i = 0; i < o->ndirs && !rc; i++) {
        struct view_input part;
        rc = view_load_dir(o, o->dirs[i], &part, err);
        struct identity b = {o->dirs[i], part.build_id ? part.build_id : "", part.exe,
                             part.unit ? part.unit : "units"};
        if (!rc && i == 0) { /* the first job's binary, graphs and metric are the sum's */
            a = b;
            in->graph = part.graph, part.graph = NULL;
            in->binary = part.binary, part.binary = NULL;
            in->build_id = part.build_id, part.build_id = NULL;
            in->exe = part.exe, part.exe = NULL;
            in->metric = part.metric;
            in->unit = part.unit;
            a.build_id = in->build_id;
            a.exe = in->exe;
        } else if (!rc) {
            rc = check_same_program(o, in, &a, &b, &noted, err);
        }
        if (!rc)
            rc = add_job(in, &part, o->dirs[i], err);
        view_input_free(&part);
    }
    return rc;
}

int view_load_runs(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    bool jobs = false;
    int rc = check_dirs(o, &jobs, err);
    if (!rc)
        rc = name_runs(o, in, err);
    if (!rc)
        rc = jobs ? load_jobs(o, in, err) : load_runs(o, in, err);
    if (rc)
        return rc;
    in->from_run = true;
    in->job = jobs;
    sort_unique(in->threads, &in->nthreads);
    sort_unique(in->ranks, &in->nranks);
    return 0;
}

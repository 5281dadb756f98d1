/* Job directories (job.h): scanning, parallel loading, merging. */
#define _POSIX_C_SOURCE 200809L

#include "job.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glue.h"
#include "lines.h"
#include "read_run.h"
#include "stacks.h"
#include "symbols.h"

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* r<digits>-...: the rank, or -1. */
static long rank_of_name(const char *name)
{
    if (name[0] != 'r' || name[1] < '0' || name[1] > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long r = strtoul(name + 1, &end, 10);
    if (*end != '-' || errno || r >= UINT32_MAX / PPW_JOB_RANK_SHIFT)
        return -1;
    return (long)r;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool ppw_job_is_dir(const char *dir)
{
    char *run = join(dir, "run.ppw");
    struct stat st;
    bool has_run = !run || stat(run, &st) == 0;
    free(run);
    if (has_run)
        return false;
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *de;
    while (!found && (de = readdir(d)) != NULL) {
        if (rank_of_name(de->d_name) < 0)
            continue;
        char *p = join(dir, de->d_name);
        found = p && is_dir(p);
        free(p);
    }
    closedir(d);
    return found;
}

static int compare_rank(const void *x, const void *y)
{
    const struct ppw_job_rank *a = x, *b = y;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

int ppw_job_scan(const char *dir, struct ppw_job **out, struct ppw_err *err)
{
    *out = NULL;
    struct ppw_job *job = calloc(1, sizeof *job);
    if (!job || !(job->dir = strdup(dir))) {
        free(job);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    DIR *d = opendir(dir);
    if (!d) {
        int e = errno;
        ppw_job_free(job);
        return ppw_err_set(err, PPW_EIO, "%s: cannot list the job directory: %s", dir,
                           strerror(e));
    }
    size_t cap = 0;
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d)) != NULL) {
        long r = rank_of_name(de->d_name);
        if (r < 0)
            continue;
        char *p = join(dir, de->d_name);
        if (!p) {
            rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
            break;
        }
        if (!is_dir(p)) {
            free(p);
            continue;
        }
        if (job->count == cap) {
            cap = cap ? cap * 2 : 64;
            struct ppw_job_rank *ranks = realloc(job->ranks, cap * sizeof *ranks);
            if (!ranks) {
                free(p);
                rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
                break;
            }
            job->ranks = ranks;
        }
        job->ranks[job->count++] = (struct ppw_job_rank){.rank = (uint32_t)r, .dir = p};
    }
    closedir(d);
    if (!rc && !job->count)
        rc = ppw_err_set(err, PPW_ENOTFOUND, "%s: no r<rank>-<host>-<pid> run directory", dir);
    if (!rc) {
        qsort(job->ranks, job->count, sizeof *job->ranks, compare_rank);
        for (size_t i = 1; i < job->count && !rc; i++)
            if (job->ranks[i].rank == job->ranks[i - 1].rank)
                rc = ppw_err_set(err, PPW_ECORRUPT, "%s: two run directories of rank %u: %s, %s",
                                 dir, job->ranks[i].rank, job->ranks[i - 1].dir,
                                 job->ranks[i].dir);
    }
    if (!rc)
        job->size = job->ranks[job->count - 1].rank + 1;
    if (rc) {
        ppw_job_free(job);
        return rc;
    }
    *out = job;
    return 0;
}

int ppw_job_of_runs(const char *dir, const char *const *dirs, size_t n, struct ppw_job **out,
                    struct ppw_err *err)
{
    *out = NULL;
    struct ppw_job *job = calloc(1, sizeof *job);
    if (job) {
        job->runs = true;
        job->dir = strdup(dir);
        job->ranks = calloc(n ? n : 1, sizeof *job->ranks);
    }
    for (size_t i = 0; job && job->dir && job->ranks && i < n; i++) {
        job->ranks[i] = (struct ppw_job_rank){.rank = (uint32_t)i, .dir = strdup(dirs[i])};
        if (!job->ranks[i].dir)
            break;
        job->count++;
    }
    if (!job || !job->dir || !job->ranks || job->count != n) {
        ppw_job_free(job);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    *out = job;
    return 0;
}

/* The module files' symbols and DWARF, read once for all ranks. */
struct shared_files {
    struct ppw_symbol_files *symbols;
    struct ppw_dwarf_files *dwarf;
};

static int load_rank(struct ppw_job_rank *r, const struct shared_files *files, bool runs,
                     const char *exe_copy)
{
    struct ppw_run *run = NULL;
    struct ppw_symbols *syms = NULL;
    struct ppw_lines *lines = NULL;
    struct ppw_err *err = &r->err;
    int rc = ppw_run_load_merged(r->dir, &run, err);
    if (!rc && exe_copy) {
        struct ppw_err ignored; /* another build's rank keeps its own file */
        ppw_run_use_exe_copy(run, exe_copy, &ignored);
    }
    if (!rc) {
        r->finished = run->finished;
        r->has_mpi = run->has_mpi;
        r->mpi_size = run->has_mpi ? run->mpi.size : 0;
        memcpy(r->build_id, run->build_id, sizeof r->build_id);
        r->has_metric = run->has_metric;
        r->metric_source = run->metric.source;
        r->metric_unit = run->metric.unit;
        if (run->has_info && run->info.exe[0] && !(r->exe = strdup(run->info.exe)))
            rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
        if (!runs && run->has_mpi && run->mpi.rank != r->rank)
            rc = ppw_err_set(err, PPW_ECORRUPT, "%s: its MPI record says rank %u", r->dir,
                             run->mpi.rank);
    }
    if (!rc && run->thread_count &&
        (!(r->threads = malloc(run->thread_count * sizeof *r->threads)) ||
         !(r->losses = malloc(run->thread_count * sizeof *r->losses))))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < run->thread_count; i++) {
        ppw_run_thread_loss(run, &run->threads[i], &r->losses[r->nthreads]);
        r->threads[r->nthreads++] = run->threads[i].index;
    }
    if (!rc)
        rc = ppw_symbols_new_shared(run, files->symbols, &syms, err);
    if (!rc)
        rc = ppw_lines_new_shared(syms, files->dwarf, &lines, err);
    if (!rc)
        rc = ppw_stack_set_new(&r->stacks, err);
    if (!rc) {
        ppw_stack_set_split_threads(r->stacks);
        double scale = run->has_metric && run->metric.unit == PPW_UNIT_NS ? 1e-9 : 1;
        rc = ppw_glue_run(run, syms, lines, scale, NULL, r->stacks, &r->glue, err);
    }
    ppw_lines_free(lines);
    ppw_symbols_free(syms);
    ppw_run_free(run);
    r->loaded = !rc;
    return rc;
}

struct pool {
    struct ppw_job *job;
    const struct shared_files *files;
    atomic_size_t next;
};

static void *worker(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->job->count)
            return NULL;
        load_rank(&p->job->ranks[i], p->files, p->job->runs, p->job->exe_copy);
    }
}

int ppw_job_load(struct ppw_job *job, const char *debug_dir, unsigned workers,
                 struct ppw_err *err)
{
    if (!workers) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        workers = n > 0 ? (unsigned)n : 1;
    }
    if (workers > job->count)
        workers = (unsigned)job->count;
    if (workers > 256)
        workers = 256;
    struct shared_files files = {0};
    int rc = ppw_symbol_files_new(debug_dir, &files.symbols, err);
    if (!rc)
        rc = ppw_dwarf_files_new(&files.dwarf, err);
    struct pool pool = {job, &files, 0};
    pthread_t *tids = rc ? NULL : calloc(workers ? workers : 1, sizeof *tids);
    if (!tids) {
        ppw_symbol_files_free(files.symbols);
        ppw_dwarf_files_free(files.dwarf);
        return rc ? rc : ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    unsigned started = 0;
    for (unsigned i = 1; i < workers; i++) /* the caller is worker 0 */
        if (pthread_create(&tids[started], NULL, worker, &pool) == 0)
            started++;
    worker(&pool);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    ppw_dwarf_files_free(files.dwarf);
    ppw_symbol_files_free(files.symbols);
    if (job->runs) /* no ranks to miss */
        return 0;
    /* Missing ranks: below the size the MPI records give (else the highest
     * rank + 1), without a directory. */
    for (size_t i = 0; i < job->count; i++)
        if (job->ranks[i].loaded && job->ranks[i].has_mpi && job->ranks[i].mpi_size > job->size)
            job->size = job->ranks[i].mpi_size;
    size_t nmissing = job->size > job->count ? job->size - job->count : 0;
    if (nmissing && !(job->missing = malloc(nmissing * sizeof *job->missing)))
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    size_t k = 0;
    for (uint32_t r = 0; r < job->size; r++) {
        while (k < job->count && job->ranks[k].rank < r)
            k++;
        if (k >= job->count || job->ranks[k].rank != r)
            job->missing[job->nmissing++] = r;
    }
    return 0;
}

const struct ppw_job_rank *ppw_job_mismatch(const struct ppw_job *job,
                                            const struct ppw_job_rank **first)
{
    *first = NULL;
    for (size_t i = 0; i < job->count; i++) {
        const struct ppw_job_rank *r = &job->ranks[i];
        if (!r->loaded)
            continue;
        if (!*first)
            *first = r;
        else if (strcmp(r->build_id, (*first)->build_id) != 0)
            return r;
    }
    return NULL;
}

int ppw_job_merge(const struct ppw_job *job, struct ppw_stack_set *set, struct ppw_err *err)
{
    int rc = 0;
    for (size_t i = 0; i < job->count && !rc; i++) {
        const struct ppw_job_rank *r = &job->ranks[i];
        if (!r->loaded)
            continue;
        size_t n;
        const struct ppw_blame_stack *st = ppw_stack_set_stacks(r->stacks, &n);
        for (size_t s = 0; s < n && !rc; s++) {
            /* runs: thread T of every run is one thread T */
            uint32_t t = st[s].thread < PPW_JOB_RANK_SHIFT ? st[s].thread : PPW_JOB_RANK_SHIFT - 1;
            rc = ppw_stack_set_add_copy(
                set, &st[s], job->runs ? st[s].thread : r->rank * PPW_JOB_RANK_SHIFT + t, err);
        }
    }
    return rc;
}

void ppw_job_free(struct ppw_job *job)
{
    if (!job)
        return;
    for (size_t i = 0; i < job->count; i++) {
        free(job->ranks[i].dir);
        free(job->ranks[i].exe);
        free(job->ranks[i].threads);
        free(job->ranks[i].losses);
        ppw_stack_set_free(job->ranks[i].stacks);
    }
    free(job->ranks);
    free(job->missing);
    free(job->dir);
    free(job);
}

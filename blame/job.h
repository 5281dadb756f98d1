/* A job directory of an MPI run (include/ppw/run_format.h): one run
 * directory r<rank>-<host>-<pid>/ per rank and no run.ppw.  Each rank is
 * loaded, symbolized and glued into its own stack set, the ranks in
 * parallel on all cores; the sets are merged after.  A rank that cannot be
 * read, or whose run did not finish, leaves the others usable.
 *
 * The same loader sums several runs of one program (ppw_job_of_runs): each
 * run is an entry, loaded in parallel like a rank, and merging adds thread
 * T of every run into one thread T. */
#ifndef PPW_BLAME_JOB_H
#define PPW_BLAME_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "glue.h"
#include "ppw/run_format.h"
#include "read_run.h"

struct ppw_stack_set;

/* Merged stacks keep rank and thread in one id: rank * PPW_JOB_RANK_SHIFT + thread. */
#define PPW_JOB_RANK_SHIFT 65536u

struct ppw_job_rank {
    uint32_t rank; /* of a job of runs: the run's position in the list */
    char *dir;
    bool loaded;   /* read and glued; else err says why */
    struct ppw_err err;
    bool finished; /* FINISH present */
    bool has_mpi;
    uint32_t mpi_size;
    char build_id[2 * PPW_BUILD_ID_MAX + 1];
    char *exe; /* the run's executable, NULL when unnamed */
    bool has_metric;
    uint32_t metric_source, metric_unit;
    struct ppw_stack_set *stacks; /* threads kept apart */
    struct ppw_glue_stats glue;
    uint32_t *threads;
    size_t nthreads;
    struct ppw_run_loss *losses; /* one per thread, in threads' order */
};

struct ppw_job {
    char *dir;
    struct ppw_job_rank *ranks; /* sorted by rank */
    size_t count;
    uint32_t size;     /* the MPI record's size, else the highest rank + 1; 0 for runs */
    uint32_t *missing; /* ranks below size without a directory */
    size_t nmissing;
    bool runs;         /* made by ppw_job_of_runs: entries are runs, not ranks */
    const char *exe_copy; /* set before ppw_job_load: a copy of the build that ran, read
                             for ranks of its build-id (ppw_run_use_exe_copy); NULL: none */
};

/* True when dir has no run.ppw and holds at least one r<rank>-* directory. */
bool ppw_job_is_dir(const char *dir);

/* Lists the rank directories of dir.  Errors: PPW_EIO, PPW_ENOTFOUND (no
 * rank directory), PPW_ECORRUPT (two directories of one rank), PPW_ENOMEM. */
int ppw_job_scan(const char *dir, struct ppw_job **out, struct ppw_err *err);

/* A job whose entries are the run directories dirs[0..n), in that order,
 * to be summed: their MPI records, if any, are not checked against their
 * position, no rank is missing, and ppw_job_merge adds thread T of every
 * run into thread T.  dir (the job's name) is copied.  Errors: PPW_ENOMEM. */
int ppw_job_of_runs(const char *dir, const char *const *dirs, size_t n, struct ppw_job **out,
                    struct ppw_err *err);

/* Loads every rank (ppw_run_load_merged, symbols with debug_dir, lines,
 * glue) on up to `workers` threads (0: one per core).  A rank that fails
 * keeps loaded false and its error.  Errors: PPW_ENOMEM only. */
int ppw_job_load(struct ppw_job *job, const char *debug_dir, unsigned workers,
                 struct ppw_err *err);

/* The first loaded rank whose build-id differs from the first loaded
 * rank's, or NULL. */
const struct ppw_job_rank *ppw_job_mismatch(const struct ppw_job *job,
                                            const struct ppw_job_rank **first);

/* Adds every loaded rank's stacks to set, with thread ids
 * rank * PPW_JOB_RANK_SHIFT + thread (for a job of runs, the thread
 * alone).  Stacks already in set add up.  Errors: PPW_ENOMEM. */
int ppw_job_merge(const struct ppw_job *job, struct ppw_stack_set *set, struct ppw_err *err);

void ppw_job_free(struct ppw_job *job);

#endif

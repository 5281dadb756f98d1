/* The microbenchmarks of ppw-blame calibrate: what a barrier, a lock, a
 * condition variable and a small MPI message cost on this machine when
 * nobody waits for anybody (docs/ppw-blame.md, "ppw-blame calibrate").
 * Each result is the fastest of several trials with fresh threads (or
 * mpiruns) of the fastest batch or the 10th percentile of single events,
 * in nanoseconds. */
#ifndef PPW_BLAME_MICROBENCH_H
#define PPW_BLAME_MICROBENCH_H

#include <stdbool.h>

#include "error.h"

/* One pthread_barrier_wait episode of nthreads threads (>= 2). */
int microbench_barrier(unsigned nthreads, double *ns, struct ppw_err *err);

/* pthread_mutex_lock + unlock by one thread. */
int microbench_lock(double *ns, struct ppw_err *err);

/* From an unlock to the moment the thread blocked in pthread_mutex_lock
 * holds the mutex. */
int microbench_lock_handoff(double *ns, struct ppw_err *err);

/* pthread_cond_signal to a waiting thread, which signals back: one round trip. */
int microbench_cond_roundtrip(double *ns, struct ppw_err *err);

/* What MPI costs between 2 ranks when nobody waits, in ns (fence_ns and
 * rma_ns 0 when the helper could not measure them). */
struct microbench_mpi_costs {
    double latency_ns, ns_per_byte; /* an 8-byte message; each further byte */
    double fence_ns;                /* MPI_Win_fence */
    double rma_ns;                  /* an 8-byte MPI_Get completed by MPI_Win_flush */
};

/* Runs the MPI helper (ping-pong of 8 B and 64 KiB messages, a fence and
 * a get between 2 ranks) under mpirun, a few times.  Returns 0 and the
 * costs, or a negative code with err saying why MPI was not measured (no
 * helper, no mpirun, it failed, or a run took more than timeout_s
 * seconds). */
int microbench_mpi(const char *helper, unsigned timeout_s, struct microbench_mpi_costs *out,
                   struct ppw_err *err);

#endif

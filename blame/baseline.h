/* Baseline costs of synchronization and messages on one machine, measured
 * by `ppw-blame calibrate` and read by `ppw-blame analyze`'s baseline
 * filter: a barrier, lock or message that costs many times its baseline is
 * waiting, not working.  The file format (text, "ppw-baseline 1.0") is
 * docs/FORMATS.md, "Baseline file". */
#ifndef PPW_BLAME_BASELINE_H
#define PPW_BLAME_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define PPW_BASELINE_MAJOR 1
#define PPW_BASELINE_MINOR 1

/* Every time is a median, in nanoseconds, finite and > 0 (mpi_ns_per_byte
 * may be 0: a transfer too fast to tell from the latency). */
struct ppw_baseline {
    double barrier2_ns;           /* one pthread_barrier_wait episode, 2 threads */
    double barrier_all_ns;        /* the same with barrier_all_threads threads */
    unsigned barrier_all_threads; /* the machine's online CPUs when measured */
    double lock_ns;               /* pthread_mutex_lock + unlock, uncontended */
    double lock_handoff_ns;       /* unlock to the blocked waiter holding the mutex */
    double cond_roundtrip_ns;     /* signal -> wake -> signal back -> wake, 2 threads */
    bool has_mpi;                 /* the two MPI keys were measured */
    double mpi_latency_ns;        /* half the round trip of an 8-byte message, 2 ranks */
    double mpi_ns_per_byte;       /* what each further byte adds (from 64 KiB messages) */
    double mpi_fence_ns;          /* MPI_Win_fence, 2 ranks; 0: not measured (1.1) */
    double mpi_rma_ns;            /* an 8-byte MPI_Get + MPI_Win_flush; 0: not measured (1.1) */
    int64_t measured_at;          /* Unix time of the measurement; 0 when unknown */
    char host[256];               /* the machine it was measured on */
};

/* Reads and validates a baseline file.  Errors: PPW_EIO (cannot read it),
 * PPW_EVERSION (another major version), PPW_ECORRUPT (not a baseline file,
 * a bad or missing value: the message names the line and key). */
int ppw_baseline_load(const char *path, struct ppw_baseline *out, struct ppw_err *err);

/* Creates path's missing directories and checks that a file can be
 * written there, before minutes are spent measuring.  Errors: PPW_EIO. */
int ppw_baseline_prepare(const char *path, struct ppw_err *err);

/* Writes b to path (through a temporary file renamed over it), creating
 * the missing directories.  Errors: PPW_EUSAGE (a value out of range),
 * PPW_EIO (cannot create the directory or write the file). */
int ppw_baseline_save(const char *path, const struct ppw_baseline *b, struct ppw_err *err);

/* Where the baseline of this machine lives: $PPW_BASELINE, else
 * $XDG_CACHE_HOME/ppw/baseline-<host>, else ~/.cache/ppw/baseline-<host>.
 * Returns buf, or NULL when it does not fit or no home is known. */
const char *ppw_baseline_default_path(char *buf, size_t size);

#endif

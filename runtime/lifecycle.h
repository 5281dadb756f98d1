/* Process start and end: configuration, the output directory, the order in
 * which subsystems start and stop, and fork(). */
#ifndef PPW_RUNTIME_LIFECYCLE_H
#define PPW_RUNTIME_LIFECYCLE_H

#include <stdint.h>

#include "sigsafe.h"

/* 1 once the output directory exists and measurement runs. */
extern volatile int ppw_running;

/* Directory descriptor of the run directory, -1 when not running. */
int ppw_output_dirfd(void);

/* 1 when the run directory was made inside the job directory that
 * PPW_OUTPUT names (an MPI rank: r<rank>-<host>-<pid>), so MPI_Init need
 * not move it. */
int ppw_output_in_job(void);

/* CLOCK_MONOTONIC in ns: every timestamp ppw writes. */
PPW_SIGSAFE uint64_t ppw_now_ns(void);

/* The executable's GNU build-id (size 0 when it has none). */
const uint8_t *ppw_build_id(uint32_t *size);

/* Makes sure libppw is initialized (the constructor normally did it);
 * callable from any entry point. */
void ppw_lifecycle_ensure(void);

/* Whether libppw is off for good in this process: initialized, and not
 * running (PPW_DISABLE=1, a start that failed, or after the process's
 * end). */
int ppw_lifecycle_off(void);

#endif

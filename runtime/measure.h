/* GASP measurement: profile mode (per region and callpath statistics in a
 * per-thread profile file) and trace mode (timestamped events in the
 * thread's events file), with PPW-style throttling of tiny hot regions and
 * probe-cost calibration (seed 001).  Not used in signal context. */
#ifndef PPW_RUNTIME_MEASURE_H
#define PPW_RUNTIME_MEASURE_H

#include <stdarg.h>
#include <stdint.h>

#include "ppw/gasp.h"

struct ppw_thread;

/* Process start, after the run file is open: writes PPW_RUN_CONFIG, runs
 * the probe calibration and writes PPW_RUN_CALIB.  0 or -errno. */
int ppw_measure_init(void);
void ppw_measure_fini(void);

void ppw_measure_thread_begin(struct ppw_thread *t);
/* Closes open regions as of now (marked open) and the profile file. */
void ppw_measure_thread_end(struct ppw_thread *t);
/* fork() child: drop the inherited profile mapping without writing it. */
void ppw_measure_thread_abandon(struct ppw_thread *t);

/* What one event did, for its probe window: the window costs of these
 * kinds are kept apart (struct ppw_rec_probe). */
enum ppw_probe_kind {
    PPW_PROBE_OTHER,     /* not a probe of a timed or throttled call */
    PPW_PROBE_START,     /* pushed a timed call */
    PPW_PROBE_END,       /* closed a timed call */
    PPW_PROBE_THROTTLED, /* START or END of a throttled region */
};

/* One GASP event on thread t (the entry points have set the guard and
 * saved errno).  site and gate_read are a wrapped call's site record and
 * the gate its code read (ppw/gasp.h, GASP_PPW_SITE), or NULL and 1.  ap
 * holds the event's other varargs; may be NULL when there are none.  *now
 * is set to the clock read the event's timing used (START, END), else
 * left alone. */
enum ppw_probe_kind ppw_measure_event(struct ppw_thread *t, unsigned int tag, gasp_evttype_t type,
                                      const char *file, int line, int col,
                                      struct ppw_gasp_site *site, int64_t gate_read, va_list *ap,
                                      uint64_t *now);

/* Probe windows (docs/runtime.md, "In-situ probe cost"): an entry point
 * times about one event in PPW_PROBE_WINDOW_PERIOD: two clock reads back
 * to back first thing (gap_start, entry), one last (exit); it reports the
 * window here, after leaving libppw's guard.  now is the event's own
 * clock read.  Kept in the thread's profile file. */
#define PPW_PROBE_WINDOW_PERIOD 64
void ppw_measure_probe_window(struct ppw_thread *t, enum ppw_probe_kind kind, uint64_t gap_start,
                              uint64_t entry, uint64_t now, uint64_t exit);
/* Events until the next timed window: uniform in [PERIOD/2, 3*PERIOD/2),
 * so that no loop's period aliases with it.  *rng is per-thread state. */
int32_t ppw_probe_window_next(uint64_t *rng);

/* mpi.c (absent without mpi.h, hence weak): the bytes of count elements of
 * an MPI datatype handle as the event operands carry it; 0 outside
 * MPI_Init..MPI_Finalize or for a bad handle. */
__attribute__((weak)) uint64_t ppw_mpi_bytes(uint64_t count, uint64_t datatype);
/* mpi.c: the MPI_Win handle stored at address, as the event operands carry
 * handles (widened to 64 bits). */
__attribute__((weak)) uint64_t ppw_mpi_window_at(uint64_t address);

/* gasp_create_event: a new user event id in [GASP_PPW_USEREVT_START,
 * GASP_PPW_USEREVT_END], or 0 when they are exhausted. */
unsigned int ppw_measure_create_event(const char *name, const char *desc);

/* ---- additions (measure.c) --------------------------------------------- */

/* Calling rules for the functions above:
 *  - ppw_measure_init runs again in a fork()ed child, once its run file
 *    is open: it then keeps the parent's calibration and writes
 *    PPW_RUN_CONFIG, PPW_RUN_CALIB and every PPW_RUN_REGION record again.
 *  - ppw_measure_thread_begin and _end run on the thread itself (or once
 *    it can no longer send events): the state is unsynchronized.  Threads
 *    still running at exit keep their profile files as last updated
 *    (complete calls only, no PPW_FILE_CLOSED).
 *  - ppw_measure_thread_abandon, in a fork()ed child: on the calling
 *    thread it drops the inherited file and keeps the state, so that the
 *    next ppw_measure_thread_begin goes on with the open regions into the
 *    child's files; on any other thread (gone in the child) it frees the
 *    state and sets t->measure to NULL.
 *  - ppw_measure_event ignores events while t->measure is NULL (mode none,
 *    before begin, after end). */

/* fork(): prepare and parent bracket the fork in the parent, child runs
 * first thing in the child (before ppw_measure_init).  They hold the
 * region registry's mutex across the fork, so that a child never inherits
 * it locked; take it before ppw_runfile_lock (regions write their records
 * under the run file's lock while holding it). */
void ppw_measure_fork_prepare(void);
void ppw_measure_fork_parent(void);
void ppw_measure_fork_child(void);
#endif

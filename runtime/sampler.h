/* Sampling: chooses the metric (PAPI cycles, perf software task clock, or a
 * POSIX CPU-time timer), arms one per thread, and records a sample with its
 * full stack at every overflow, from the signal handler. */
#ifndef PPW_RUNTIME_SAMPLER_H
#define PPW_RUNTIME_SAMPLER_H

#include <stdint.h>

#include "sigsafe.h"

struct ppw_thread;

/* Process start: picks the metric, installs the handler, writes
 * PPW_RUN_METRIC (with the reason for the choice).  0, or -errno when no
 * method works (the run continues without samples). */
int ppw_sampler_init(void);
void ppw_sampler_fini(void);

/* Per thread, on the thread itself: opens its samples file, warms the
 * unwinder up, arms the timer.  Failures are counted, never fatal. */
void ppw_sampler_thread_start(struct ppw_thread *t);
/* Disarms and closes; the handler drops anything that arrives after. */
void ppw_sampler_thread_stop(struct ppw_thread *t);

/* What keeps t's samples from coming, as enum ppw_thread_end_flag's
 * SIGNAL_* and TIMER_CLOSED bits: on_thread when called by t itself (its
 * signal mask is read directly), else from /proc. */
uint32_t ppw_sampler_thread_faults(struct ppw_thread *t, int on_thread);
/* fork() child: forget the inherited timer and file. */
void ppw_sampler_thread_abandon(struct ppw_thread *t);

/* Normal-context stack walks (spawn records) set t->walking, since
 * libunwind is not re-entrant within a thread; a sample arriving meanwhile
 * is deferred, and this records it with the walk's own stack (frames[0..n),
 * return addresses, ppw's frames included: the time was spent there).
 * Call with t->walking still set. */
void ppw_sampler_take_deferred(struct ppw_thread *t, const uint64_t *frames, int n);

/* The ring sampler (PPW_SAMPLER=ring) buffers t's samples in the kernel,
 * and records them when it reads them.  Call on t before each change of
 * t->spawn_tag or t->measuring: it notes when the context now in force
 * ends, so that the samples taken before get it (a clock read; a load
 * when nothing is buffered, nothing at all without the ring sampler; a
 * reading of the ring, as ppw_sampler_flush, when the notes are full). */
void ppw_sampler_context_change(struct ppw_thread *t);
/* Records t's buffered samples now, on t: before anything that must see
 * them in the samples file (the thread's end, execve). */
void ppw_sampler_flush(struct ppw_thread *t);
/* The same for another thread, at process exit, under the registry lock
 * (ppw_thread_end_others): a thread still running keeps its samples. */
void ppw_sampler_flush_other(struct ppw_thread *t);

/* Whether samples wait in memory the process loses when it dies (the ring
 * sampler's rings): signals.c then guards the fatal signals, and _exit
 * saves them first (docs/runtime.md, "Samples at a fatal signal"). */
int ppw_sampler_buffers(void);
/* Records what every thread's ring holds, from a fatal signal's handler or
 * _exit: the registry lock is only tried (a thread it interrupted may hold
 * it), and without it the calling thread's ring alone is read.  Nothing
 * in a vfork()ed child, whose rings are its parent's. */
PPW_SIGSAFE void ppw_sampler_save_all(void);

/* The sampling signal when ppw's handler is installed for it, else 0
 * (blocking.c masks it around calls it must not interrupt). */
PPW_SIGSAFE int ppw_sampler_signal(void);

/* Moves sampling to another free real-time signal (the program is taking
 * the current one): installs the handler there and redirects every
 * thread's timer.  0, or -1 when no signal is free or the threads cannot
 * be reached now (the current signal is then kept). */
int ppw_sampler_move_signal(void);
/* Stops and restarts the calling thread's signal source, around execve:
 * a signal raised during the call would be pending in the new program. */
void ppw_sampler_thread_pause(struct ppw_thread *t);
void ppw_sampler_thread_resume(struct ppw_thread *t);

#endif

/* The sampling signal, kept out of the program's way (docs/runtime.md,
 * "The sampling signal").
 *
 * The sampler takes a real-time signal the program does not use.  A
 * program may later take that signal itself (sigaction, signal), or block
 * or unblock it with every other one (sigprocmask, pthread_sigmask).
 * signals.c interposes those calls so that the program sees exactly what
 * it would without ppw, and ppw keeps its samples:
 * - a disposition set for the sampling signal is installed as the program
 *   asked, after the sampler has moved to another free real-time signal;
 *   a query returns what the program set (SIG_DFL before);
 * - a mask never blocks the sampling signal, but the program reads back
 *   the mask it set, the sampling signal blocked if it blocked it.
 * Raw system calls bypass this; the run then records what it saw at each
 * thread's end (THREAD_END flags), and the views count the samples lost. */
#ifndef PPW_RUNTIME_SIGNALS_H
#define PPW_RUNTIME_SIGNALS_H

#include <signal.h>

#include "sigsafe.h"

/* Resolves the real functions (dlsym): at start-up, before any thread. */
void ppw_signals_init(void);

/* The C library's own sigaction and pthread_sigmask, for ppw's use. */
int ppw_signals_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
PPW_SIGSAFE int ppw_signals_real_mask(int how, const sigset_t *set, sigset_t *old);

/* Blocks every signal in the calling thread, the previous mask into
 * *saved, until ppw_signals_restore(saved).  Meanwhile the interposed
 * sigprocmask and pthread_sigmask make no system call: the ring sampler's
 * leaf repair runs libunwind, which masks and restores signals around each
 * of its locks, four times a sample (sampler.c). */
PPW_SIGSAFE void ppw_signals_block_all(sigset_t *saved);
PPW_SIGSAFE void ppw_signals_restore(const sigset_t *saved);

/* A real-time signal whose disposition is SIG_DFL, other than `avoid`,
 * starting the search at `first`; 0 when none is free. */
int ppw_signals_free_rt(int first, int avoid);

/* The sampler took sig, whose disposition was *before: what the program
 * reads back until it sets its own. */
void ppw_signals_took(int sig, const struct sigaction *before);

/* Runs the disposition the program set for the sampling signal, for a
 * signal that is not the sampler's (only while no other signal was free to
 * move to). */
PPW_SIGSAFE void ppw_signals_forward(int sig, siginfo_t *info, void *uc);

/* While the sampler buffers samples in memory (ppw_sampler_buffers): a
 * handler that saves them stands in for each fatal signal the program
 * leaves at SIG_DFL, unseen by the program (signals.c). */
void ppw_signals_guard_fatal(void);

/* Brackets ppw's signal handlers: mask calls made inside pass through. */
PPW_SIGSAFE void ppw_signals_handler_enter(void);
PPW_SIGSAFE void ppw_signals_handler_leave(void);

/* Whether the calling thread's program asked to block the sampling signal
 * (inherited by the threads it creates: spawn.c passes it on). */
int ppw_signals_program_blocked(void);
void ppw_signals_set_program_blocked(int blocked);

#endif

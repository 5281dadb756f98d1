/* Stack walks with libunwind's unw_backtrace (toolchain-facts §5: 0.3 us a
 * walk; the step-by-step cursor costs 10-20 us because of signal masking). */
#ifndef PPW_RUNTIME_UNWIND_H
#define PPW_RUNTIME_UNWIND_H

#include <stdint.h>

#include "sigsafe.h"

/* Return addresses of the calling context, innermost first, at most max.
 * Returns the count; count == max means the stack may be deeper. */
PPW_SIGSAFE int ppw_unwind_walk(uint64_t *frames, int max);

/* The same for a walk a thread does rarely (a spawn context seen for the
 * first time): unw_backtrace when the thread has walked with it before,
 * else libunwind's cursor, step by step.  unw_backtrace's first walk in a
 * thread maps and fills a 256 KiB cache, 64 page faults (1 ms of CPU in
 * this VM, the largest part of ppw's fixed cost on a short OpenMP run),
 * which a few walks of 10-20 us do not repay. */
int ppw_unwind_walk_rarely(uint64_t *frames, int max);

/* Around any other unwind that calls dl_iterate_phdr (leaf.c): marks the
 * calling thread as inside a walk of ppw's, for ppw_unwind_in_walk.  The
 * slot (NULL when all are taken) goes back to ppw_unwind_leave. */
PPW_SIGSAFE uint32_t *ppw_unwind_enter(void);
PPW_SIGSAFE void ppw_unwind_leave(uint32_t *slot);

/* Whether thread tid is inside ppw_unwind_walk (signal-safe).  Such a
 * thread holds the dynamic linker's lock only inside libunwind's
 * dl_iterate_phdr callback, which waits for no lock of the program's. */
PPW_SIGSAFE int ppw_unwind_in_walk(uint32_t tid);

/* In a fork()ed child: no walk runs, and the thread's tid changed. */
void ppw_unwind_after_fork_child(void);

/* Once per process, before the first walk: libunwind's caches per thread,
 * so that no walk takes a lock another thread's walk may hold. */
void ppw_unwind_init(void);

/* The first walk in a thread costs up to 0.6 ms (libunwind fills its
 * caches); do it at thread start, not in the first sample. */
void ppw_unwind_warm_up(void);

#endif

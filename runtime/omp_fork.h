/* OpenMP parallel regions without OMPT: libppw's __kmpc_fork_call stands in
 * front of libomp's, records the region's spawn context at the fork and
 * runs the region's outlined body through a trampoline that sets each team
 * thread's spawn tag.  Being an OMPT tool costs libomp about 5% on short
 * regions even with no callback registered (docs/runtime.md, "Where a
 * short region's cost goes"); a program whose regions all pass through here
 * and that creates no explicit tasks needs no OMPT tool at all.
 *
 * The choice, made once before libomp starts (ppw_omp_fork_decide):
 *   hooked   the stand-in records contexts; ompt_start_tool declines
 *   forward  the stand-in jumps straight to libomp; OMPT does the work
 * Forward when: PPW_OMPT=always, trace mode (its per-region records are
 * OMPT's), libppw off, not x86-64, libomp not found, another module's calls
 * would not reach the stand-in, or a loaded module imports an entry that
 * creates explicit tasks or teams, or libgomp's GOMP_ interface. */
#ifndef PPW_RUNTIME_OMP_FORK_H
#define PPW_RUNTIME_OMP_FORK_H

/* Makes the choice (idempotent, thread-safe); called at libppw's start and
 * by ompt_start_tool, whichever comes first. */
void ppw_omp_fork_decide(void);
/* 1 when regions are hooked here and OMPT is not needed.  PPW_VERBOSE=1
 * says which way it went, and why. */
int ppw_omp_fork_hooked(void);

#endif

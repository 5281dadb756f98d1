/* Spawn contexts: at each spawn (pthread_create, OpenMP parallel region,
 * OpenMP explicit task) the creator's stack is recorded once per unique
 * context, under a process-wide tag; the new thread or task carries the tag
 * and every sample names it, so ppw-blame can glue a worker's stack to the
 * path that created it, back to main (seed 002 Ch. 5). */
#ifndef PPW_RUNTIME_SPAWN_H
#define PPW_RUNTIME_SPAWN_H

#include <stdint.h>

#include "ppw/run_format.h"

struct ppw_thread;

int ppw_spawn_init(void);
/* The tag of the calling context: walks t's stack, chains it to
 * t->spawn_tag, and writes a PPW_EVT_SPAWN record the first time this
 * (parent, kind, stack) is seen in the process.  site: the spawn call's
 * return address when known (OMPT's codeptr_ra), else 0; OpenMP tasks with
 * a known site skip the walk after the first one per site and parent.
 * frame: OMPT's enter_frame of the runtime entry the program called (its
 * saved frame pointer and return address), or NULL; parallel regions whose
 * callers' frame-pointer chain was seen before skip the walk.
 * 0 when it cannot. */
uint32_t ppw_spawn_context(struct ppw_thread *t, enum ppw_spawn_kind kind, uint64_t site,
                           const void *frame);
void ppw_spawn_after_fork_child(void);
/* Unique contexts recorded so far. */
uint32_t ppw_spawn_count(void);

#endif

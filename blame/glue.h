/* A run's samples as source-level stacks for attribution: each sample's
 * frames glued to its spawn chain (docs/FORMATS.md, "Glue"; where a chain
 * follows, without the frames beneath the thread's start routine, and
 * without the frames a sample on the creating thread shares with its
 * spawn record), every address
 * symbolized to its source frames with inlined calls expanded (lines.h;
 * function names only, from symbols.h, where a module has no DWARF), return
 * addresses as the call sites they return to, and identical stacks merged
 * with their weights (stacks.h). */
#ifndef PPW_BLAME_GLUE_H
#define PPW_BLAME_GLUE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ppw_run;
struct ppw_run_sample;
struct ppw_symbols;
struct ppw_lines;
struct ppw_stack_set;

struct ppw_glue_stats {
    uint64_t samples;       /* samples read */
    uint64_t glue_errors;   /* samples whose spawn chain broke (a tag no events file defines) */
    uint64_t truncated;     /* samples whose stack was cut above main (deeper than the
                               walk's limit, or beyond the ring sampler's stack copy) */
    uint64_t without_lines; /* samples with no frame that has a source line */
};

/* How many of a sample's frames start its glued stack: all of them in the
 * thread's root context (spawn_tag 0); in a spawned context, up to the
 * first frame of ppw or of the parallel runtime after the task's own code
 * (runtime frames at the top, where the sample landed, stay). */
size_t ppw_glue_kept_frames(struct ppw_symbols *syms, const struct ppw_run_sample *sample);

/* Called now and then while a run is glued: done of total samples. */
struct ppw_glue_progress {
    void (*report)(void *context, uint64_t done, uint64_t total);
    void *context;
};

/* Adds every sample of run to set, weighted by weight_scale times its
 * weight (1e-9 turns nanoseconds into seconds).  lines may be NULL
 * (function names only), progress too.  A broken spawn chain keeps the
 * part that was found and is counted in stats.  Errors: PPW_ENOMEM. */
int ppw_glue_run(const struct ppw_run *run, struct ppw_symbols *syms, struct ppw_lines *lines,
                 double weight_scale, const struct ppw_glue_progress *progress,
                 struct ppw_stack_set *set, struct ppw_glue_stats *stats, struct ppw_err *err);

#endif

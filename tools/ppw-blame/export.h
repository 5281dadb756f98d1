/* What ppw-blame export and flame share: each stack's blamed variable,
 * a table of distinct frames, the threads of a stack set, and the trace
 * writers: Chrome trace-event JSON (export_chrome.c) and OTF2
 * (export_otf2.c), which read the trace through export_trace.h. */
#ifndef PPW_BLAME_EXPORT_H
#define PPW_BLAME_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attribute.h"
#include "error.h"
#include "strmap.h"

struct view_input;
struct ppw_static_graph;
struct ppw_static_func;

/* The output FILE (stdout for NULL or "-"); NULL with err set when it
 * cannot be opened. */
FILE *export_open(const char *path, struct ppw_err *err);
/* Closes the output after writing it returned rc.  A write error loses
 * the export, so it is an error too; a failed export to a file leaves no
 * file (a half-written one would look like a whole one).  Returns rc or
 * the write error. */
int export_finish(FILE *out, const char *path, int rc, struct ppw_err *err);

/* Text for XML and HTML (SVG, the HTML report): markup characters escaped,
 * control bytes XML forbids as '?'; NULL writes nothing. */
void export_xml(FILE *out, const char *s);

/* Each stack's variable: the first one blamed exclusively in the
 * outermost frame that blames one (up to the blame point), the data the
 * sampled code computes as its caller sees it (docs/ppw-blame.md,
 * "Attribution"); NULL when none is. */
struct export_blame;
int export_blame_new(const struct view_input *in, struct export_blame **out, struct ppw_err *err);
const char *export_stack_variable(const struct export_blame *blame, size_t stack);
void export_blame_free(struct export_blame *blame);

/* Distinct frames by function (the first file seen names one), each with
 * its blame graph looked up once, then one frame "[variable] NAME" per
 * blamed variable. */
struct export_frames {
    const char **names, **files;          /* files[i] NULL when unknown */
    const struct ppw_static_func **funcs; /* the function's graph; NULL: none, or a variable */
    size_t count, cap;
    struct ppw_strmap index;     /* frame name -> index (names[] are its copies) */
    struct ppw_strmap variables; /* variable name -> index of its frame */
};
/* graph: where funcs[] come from (NULL: none).  -1 when out of memory. */
int export_frames_build(struct export_frames *frames, const struct ppw_blame_stack *stacks,
                        size_t n, const struct export_blame *blame,
                        const struct ppw_static_graph *graph);
/* The frame of a function (NULL: "??"), or of a variable; count when absent. */
size_t export_frame_index(const struct export_frames *frames, const char *function);
size_t export_variable_index(const struct export_frames *frames, const char *variable);
void export_frames_free(struct export_frames *frames);

/* The distinct thread ids of the stacks, sorted (malloc'ed; NULL for none
 * or out of memory). */
uint32_t *export_stack_threads(const struct ppw_blame_stack *stacks, size_t n, size_t *count);

/* pprof's profile.proto, gzipped: a sample per stack (values: samples, and
 * the metric: CPU nanoseconds for a CPU-time run), labelled "thread" and,
 * when blame is given, "variable".  Errors: PPW_ENOMEM, PPW_EIO. */
int export_pprof(FILE *out, const struct view_input *in, const struct export_blame *blame,
                 struct ppw_err *err);

/* Chrome trace-event JSON of the run or job directory dir (only rank
 * `rank` when has_rank).  Errors: those of reading the runs, PPW_ENOTFOUND
 * (no trace in any run), PPW_EUSAGE (--rank on a run directory),
 * PPW_ENOMEM. */
int export_chrome(FILE *out, const char *dir, bool has_rank, uint32_t rank, struct ppw_err *err);

/* An OTF2 trace of the run or job directory dir (every rank) written into
 * the directory out_dir (made when absent): traces.otf2, traces.def and
 * traces/, which must not exist yet; a failed export removes what it
 * wrote.  Only in a build with OTF2 (PPW_HAVE_OTF2).  Errors: those of
 * reading the runs, PPW_ENOTFOUND (no trace events; ranks missing),
 * PPW_EIO (out_dir cannot be written, holds a trace, or the OTF2 library
 * failed), PPW_ENOMEM. */
int export_otf2(const char *out_dir, const char *dir, struct ppw_err *err);

#endif

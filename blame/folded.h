/* Folded stacks (docs/FORMATS.md section 3): synthetic attribution input
 * for exact tests, and what 'ppw-blame export --to folded' writes so that
 * the views read a run's stacks back unchanged.  One stack per line, root
 * first, and a count:
 *
 *     main@22;foo@9 3
 *     main@prog.c:40:7;helper@prog.c:0:0;memcpy@@string.c:12:3;[libc.so.6] 5
 *
 * A frame is FUNCTION@LOCATION for a function of the static graphs
 * (LOCATION: LINE, LINE:COL, FILE:LINE or FILE:LINE:COL; line 0 is a
 * frame without a line), FUNCTION@@LOCATION for code without a blame
 * graph whose location is known, or a bare FUNCTION.  '??' is an unknown
 * function, a stack of '-' alone has no frames, and bytes that would clash
 * with the separators are written %XX.  Blank lines and lines starting
 * with '#' are skipped.  The reader and the writer live here together so
 * that they agree on one grammar. */
#ifndef PPW_BLAME_FOLDED_H
#define PPW_BLAME_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"

struct ppw_static_graph;
struct ppw_stack_set;
struct ppw_blame_frame;

/* The text of a stack without frames. */
#define PPW_FOLDED_NO_FRAMES "-"

/* Reads path into set (each line's count is its samples and its weight).
 * With graph, a FUNCTION@LOCATION frame must name a function of the graph,
 * and a bare frame must not name one with a blame graph.  Errors, naming
 * path and the line: PPW_EIO, PPW_ECORRUPT (a malformed line),
 * PPW_ENOTFOUND (an unknown function), PPW_ENOMEM. */
int ppw_folded_load(const char *path, const struct ppw_static_graph *graph,
                    struct ppw_stack_set *set, struct ppw_err *err);

/* Writes one frame so that ppw_folded_load reads it back equal: function,
 * file, line and column.  has_graph: the function is one of the static
 * graphs (FUNCTION@LOCATION, always with a location); else the frame is
 * FUNCTION@@LOCATION, or bare when it has no file, line or column.  An
 * empty file is written as none. */
void ppw_folded_write_frame(FILE *out, const struct ppw_blame_frame *frame, bool has_graph);

#endif

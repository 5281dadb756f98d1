/* Folded stacks: synthetic attribution input for exact tests (docs/FORMATS.md
 * section 3).  One stack per line, root first, and a count:
 *
 *     main@22;foo@9 3
 *
 * Each frame is FUNCTION@LINE, FUNCTION@FILE:LINE or FUNCTION@FILE:LINE:COL
 * (the leaf's location is the sampled one, the others are call sites), or a
 * bare FUNCTION for code without a blame graph (memcpy).  Blank lines and
 * lines starting with '#' are skipped. */
#ifndef PPW_BLAME_FOLDED_H
#define PPW_BLAME_FOLDED_H

#include "error.h"

struct ppw_static_graph;
struct ppw_stack_set;

/* Reads path into set (each line's count is its samples and its weight).
 * With graph, a frame with a location must name a function of the graph,
 * and a bare frame must not.  Errors, naming path and the line:
 * PPW_EIO, PPW_ECORRUPT (a malformed line), PPW_ENOTFOUND (an unknown
 * function), PPW_ENOMEM. */
int ppw_folded_load(const char *path, const struct ppw_static_graph *graph,
                    struct ppw_stack_set *set, struct ppw_err *err);

#endif

/* The pass options: PPW_PASS_OPTIONS tokens, and the GASP event selection
 * they make (docs/gasp.md, docs/config.md).  Clang loads -fpass-plugin
 * libraries after it has parsed -mllvm, so options travel in the
 * environment; ppw-cc sets it. */
#ifndef PPW_PASS_OPTIONS_H
#define PPW_PASS_OPTIONS_H

#include "llvm_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills *opts from `text` (NULL when the variable is unset): tokens
 * separated by commas or white space.  Reads the inst-only file at once.
 * Unknown tokens and unknown event names get one warning each on stderr;
 * an unreadable inst-only file sets opts->error. */
void ppw_options_parse(const char *text, struct ppw_pass_opts *opts);

/* Row of `tag` in PPW_GASP_TAGS, or -1 for a tag the table lacks. */
int ppw_options_event_index(unsigned tag);

/* Whether the events tagged `tag` are to be instrumented. */
int ppw_options_event_selected(const struct ppw_pass_opts *opts, unsigned tag);

#ifdef __cplusplus
}
#endif
#endif

/* The sample graph shared by the unit and CLI tests: one unit with main
 * (three variables, a direct call and an OpenMP fork), its outlined body
 * and a global.  The expected printouts live in expected/. */
#ifndef PPW_TEST_SAMPLE_GRAPH_H
#define PPW_TEST_SAMPLE_GRAPH_H

#include "chunk_writer.h"

void write_main_func(struct chunk_writer *cw);
void write_outlined_func(struct chunk_writer *cw);

/* Appends the sample chunk for unit source to out. */
void build_sample(struct bytes *out, const char *source);

#endif

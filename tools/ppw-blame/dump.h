/* Internal to ppw-blame dump (cmd_dump.c: options, samples, spawns, trace;
 * dump_run.c: the process-level records and the threads). */
#ifndef PPW_BLAME_DUMP_H
#define PPW_BLAME_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ppw_run;
struct ppw_run_spawn;
struct ppw_symbols;

struct dump {
    FILE *out;
    bool json;
    const struct ppw_run *run;
    struct ppw_symbols *syms;
    const struct ppw_run_spawn **chain; /* scratch for spawn chains: run->spawn_count entries */
};

/* The "run" and "threads" parts: as JSON, members of the top object, each
 * preceded by a comma. */
void dump_run(struct dump *d);

/* Text: a GASP tag as NAME(number), or the number alone when unnamed. */
void dump_tag(struct dump *d, uint32_t tag);

/* enum ppw_stack_flag bits: a JSON array of names, or a comma-separated
 * list ("-" for none). */
void dump_stack_flags(struct dump *d, uint16_t flags);

#endif

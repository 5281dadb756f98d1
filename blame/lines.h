/* Source-level symbolization with libdwarf: a PC of a run's module to its
 * function, file, line and column, with inlined frames expanded, so that
 * -O2 builds attribute as well as -O0.  Modules are found through the run's
 * module map and must match its build-ids (symbols.h resolves the file,
 * including separate debug files).  Each file's DWARF is read once into a
 * store (ppw_dwarf_files) that the symbolizers of several runs may share
 * from several threads. */
#ifndef PPW_BLAME_LINES_H
#define PPW_BLAME_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ppw_symbols;
struct ppw_lines;
struct ppw_dwarf_files;

struct ppw_source_frame {
    const char *function; /* source name (DW_AT_name); NULL when unknown; owned by ppw_lines */
    const char *linkage;  /* linkage name when it differs, else NULL */
    const char *file;     /* as the static graph spells it (DW_AT_name of the line table's file) */
    uint32_t line, col;
    bool inlined;         /* this frame was inlined into the next one */
};

/* A store of DWARF files, thread-safe.  Errors: PPW_ENOMEM. */
int ppw_dwarf_files_new(struct ppw_dwarf_files **out, struct ppw_err *err);

/* Frees the store; its symbolizers must be freed first. */
void ppw_dwarf_files_free(struct ppw_dwarf_files *files);

/* A source symbolizer for syms's run over files; syms and files must
 * outlive it.  One per thread.  Errors: PPW_ENOMEM. */
int ppw_lines_new_shared(struct ppw_symbols *syms, struct ppw_dwarf_files *files,
                         struct ppw_lines **out, struct ppw_err *err);

/* A source symbolizer with a store of its own. */
int ppw_lines_new(struct ppw_symbols *syms, struct ppw_lines **out, struct ppw_err *err);
void ppw_lines_free(struct ppw_lines *lines);

/* The source frames at pc, innermost (deepest inlined) first, at most max;
 * returns how many.  exact as in ppw_symbols_lookup (a return address is
 * looked up at pc - 1).  0 when the module has no DWARF: the caller falls
 * back to ppw_symbols for a function name.  For an inlined chain, frame k's
 * line/col are where frame k-1 was inlined (DW_AT_call_line/column). */
size_t ppw_lines_lookup(struct ppw_lines *lines, uint64_t pc, bool exact,
                        struct ppw_source_frame *out, size_t max);

/* The same, as the views attribute it: at an address the line table gives
 * line 0, the frames of the closest row before it in its line sequence and
 * function that has a line (after it when none before), inlined chain
 * included; the line-0 frames when there is no such row within 32 rows, or
 * no DWARF function covers the address.  Other addresses as
 * ppw_lines_lookup. */
size_t ppw_lines_lookup_near(struct ppw_lines *lines, uint64_t pc, bool exact,
                             struct ppw_source_frame *out, size_t max);

/* Why module has no usable DWARF (for "build with -g" errors), or NULL. */
const char *ppw_lines_module_error(struct ppw_lines *lines, const void *module);

#endif

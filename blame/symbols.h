/* Function-level symbolization of a run's addresses: a PC is mapped to the
 * module of the run that held it, its address in that module's ELF file,
 * and the function whose .symtab entry covers it.  For a stripped file the
 * names come from its separate debug file (DEBUG_DIR/.build-id/xx/yyyy.debug,
 * with the same build-id), else from .dynsym.  Source lines and inlined
 * frames come later, from DWARF.
 *
 * Each module's file is opened on first use and its symbols are kept in a
 * store (ppw_symbol_files), keyed by path and build-id, that the
 * symbolizers of several runs may share from several threads: the ranks of
 * a job read each file once.  A file whose build-id differs from the one the
 * run recorded is not used. */
#ifndef PPW_BLAME_SYMBOLS_H
#define PPW_BLAME_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ppw_run;
struct ppw_run_module;
struct ppw_symbols;
struct ppw_symbol_files;

struct ppw_symbol {
    const struct ppw_run_module *module; /* NULL: no module of the run holds the PC */
    uint64_t offset;         /* PC - the module's load bias: the address in its ELF file */
    const char *function;    /* NULL when unknown; owned by the ppw_symbols */
    uint64_t function_start; /* the function's address in the ELF file, from its symbol or,
                                unnamed, from the unwind table; 0 when unknown */
};

/* A store of module files' symbols, thread-safe.  debug_dir: where
 * separate debug files are (NULL: /usr/lib/debug).  Errors: PPW_ENOMEM. */
int ppw_symbol_files_new(const char *debug_dir, struct ppw_symbol_files **out,
                         struct ppw_err *err);

/* Frees the store; its symbolizers must be freed first. */
void ppw_symbol_files_free(struct ppw_symbol_files *files);

/* A symbolizer for run's modules over files; run and files must outlive it.
 * One symbolizer is for one thread; several may share files.  Errors:
 * PPW_ENOMEM. */
int ppw_symbols_new_shared(const struct ppw_run *run, struct ppw_symbol_files *files,
                           struct ppw_symbols **out, struct ppw_err *err);

/* A symbolizer with a store of its own. */
int ppw_symbols_new(const struct ppw_run *run, const char *debug_dir, struct ppw_symbols **out,
                    struct ppw_err *err);

void ppw_symbols_free(struct ppw_symbols *syms);

/* Looks pc up.  exact: pc is an instruction's own address (an interrupted
 * PC, a start routine); otherwise it is a return address, and the function
 * is looked up at pc - 1, inside the call.  out->offset is for pc itself. */
void ppw_symbols_lookup(struct ppw_symbols *syms, uint64_t pc, bool exact, struct ppw_symbol *out);

/* Frame i of a stack (frames innermost first) with enum ppw_stack_flag
 * flags: frames[0] is exact when flags has PPW_STACK_LEAF_PC, every other
 * frame is a return address. */
void ppw_symbols_frame(struct ppw_symbols *syms, const uint64_t *frames, size_t i, uint16_t flags,
                       struct ppw_symbol *out);

/* Loads module's symbols if needed (module is one of the run's) and says
 * why its functions are unknown ("<path>: No such file or directory",
 * "... build-id ... differs ...", "... no symbol table"), or NULL when its
 * symbols loaded. */
const char *ppw_symbols_module_error(struct ppw_symbols *syms, const struct ppw_run_module *module);

/* Which table module's names come from: ".symtab", ".dynsym", or NULL
 * (loads them if needed). */
const char *ppw_symbols_module_table(struct ppw_symbols *syms, const struct ppw_run_module *module);

/* The file module's names come from: its own path, or its separate debug
 * file; NULL when there are none (loads them if needed). */
const char *ppw_symbols_module_file(struct ppw_symbols *syms, const struct ppw_run_module *module);

#endif

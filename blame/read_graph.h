/* Loads the static blame graphs that ppw.so embeds in section .ppw.blame
 * (docs/FORMATS.md section 1) into memory, validating every byte.
 *
 * The graph owns all of its strings and arrays; nothing points into the
 * file, which is closed before ppw_static_graph_load returns. */
#ifndef PPW_BLAME_READ_GRAPH_H
#define PPW_BLAME_READ_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ppw_static_loc {
    const char *file;   /* never "": an empty file in the format is the function's file */
    uint32_t line, col; /* col 0: the whole line */
};

struct ppw_static_var {
    uint32_t id;      /* index in its function's vars */
    const char *name; /* fields are paths such as "g->cells[].energy" */
    uint32_t kind;    /* enum ppw_var_kind */
    const char *type;
    const char *decl_file;
    uint32_t decl_line;  /* 0: unknown */
    int32_t parent;      /* index of the parent variable, -1 none */
    int32_t param_index; /* IR parameter number, -1 none */
    uint32_t flags;      /* enum ppw_var_flag */
    const char *key;     /* symbol of globals and statics, else "" */
    struct ppw_static_loc *inclusive;
    size_t inclusive_count;
    struct ppw_static_loc *exclusive;
    size_t exclusive_count;
};

struct ppw_static_binding {
    int32_t var;             /* caller variable index, -1 none */
    int32_t formal;          /* callee parameter number, -1 the return value */
    uint32_t mode;           /* enum ppw_bind_mode */
    const char *callee_path; /* field path under the formal, "" for the formal itself */
};

struct ppw_static_call {
    uint32_t id, line, col;
    const char *callee;   /* "" when unknown */
    uint32_t kind, flags; /* enum ppw_call_kind */
    struct ppw_static_binding *bindings;
    size_t binding_count;
    uint32_t *written_after; /* since 1.2: variables written after the call, ascending */
    size_t written_after_count;
};

/* Since format 1.1: the accesses of one source location (access view). */
struct ppw_static_access_entry {
    uint32_t var;           /* index into the function's vars */
    uint32_t reads, writes; /* loads and stores (or memcpy, library arguments) */
};

struct ppw_static_access {
    struct ppw_static_loc loc;
    struct ppw_static_access_entry *entries;
    size_t entry_count;
};

/* Since format 1.2: the variables whose values are computed from source in
 * this function (explicit and implicit transfer, transitively). */
struct ppw_static_flow {
    uint32_t source;
    uint32_t *targets;
    size_t target_count;
};

struct ppw_static_func {
    const char *name, *linkage_name, *file;
    uint32_t line, flags; /* enum ppw_func_flag */
    const char *parent;   /* linkage name it was outlined from, "" none */
    struct ppw_static_var *vars;
    size_t var_count;
    struct ppw_static_call *calls;
    size_t call_count;
    struct ppw_static_access *accesses; /* sorted by location as written; NULL before 1.1 */
    size_t access_count;
    struct ppw_static_flow *flows; /* by source; NULL before 1.2 */
    size_t flow_count;
    bool has_flow; /* a FLOW record was read (calls' written_after are known) */
    size_t unit; /* index into graph->units */
};

struct ppw_static_unit {
    const char *source, *comp_dir, *producer;
    uint64_t unit_id;
    uint32_t analysed, skipped_nodebug;
    uint16_t minor; /* the chunk's minor format version (1: has ACCESS records, 2: FLOW) */
};

struct ppw_static_global {
    const char *name, *key, *type, *file;
    uint32_t line;
    size_t unit; /* index into graph->units */
};

struct ppw_arena;

struct ppw_static_graph {
    char *path;
    char build_id[129]; /* lowercase hex GNU build-id (up to 64 bytes), "" if none */
    struct ppw_static_unit *units;
    size_t unit_count;
    struct ppw_static_func *funcs;
    size_t func_count;
    struct ppw_static_global *globals;
    size_t global_count;
    struct ppw_arena *arena; /* owns every string and per-function array */
};

/* Loads every chunk of path's .ppw.blame section; a unit whose unit_id was
 * already loaded is skipped.  Returns 0 and *out, or a negative PPW_E* code
 * (PPW_ENOTELF, PPW_ENOSECTION, PPW_ECORRUPT, PPW_EVERSION, PPW_EIO,
 * PPW_ENOMEM) with err filled and *out NULL. */
int ppw_static_graph_load(const char *path, struct ppw_static_graph **out, struct ppw_err *err);

/* Same, from a section's bytes already in memory; path and base_offset only
 * label error messages (base_offset is the section's file offset). */
int ppw_static_graph_load_section(const void *data, size_t size, const char *path,
                                  uint64_t base_offset, struct ppw_static_graph **out,
                                  struct ppw_err *err);

void ppw_static_graph_free(struct ppw_static_graph *graph);

/* True when name is func's source name or its linkage name. */
bool ppw_static_func_matches(const struct ppw_static_func *func, const char *name);

/* The first function matching name, or NULL. */
const struct ppw_static_func *ppw_static_graph_find_func(const struct ppw_static_graph *graph,
                                                         const char *name);

#endif

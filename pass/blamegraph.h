/* One function's blame graph (seed 002, Chapter 3 and §4.1.2): for each
 * source variable, the source locations whose cost it is blamed for, its
 * exit status, its fields, and how its call sites bind caller variables to
 * callee parameters.  The results are plain data for export.c. */
#ifndef PPW_PASS_BLAMEGRAPH_H
#define PPW_PASS_BLAMEGRAPH_H

#include "dbgvar.h"
#include "source_text.h"
#include "support.h"

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <stddef.h>

struct ppw_loc {
    const char *file; /* NULL: the function's own file */
    unsigned line, col;
};

struct ppw_result_var {
    const char *name;
    unsigned kind; /* enum ppw_var_kind */
    const char *type;
    const char *decl_file;
    unsigned decl_line;
    int parent;      /* index into vars, -1 */
    int param_index; /* IR parameter number, -1 */
    unsigned flags;  /* enum ppw_var_flag */
    const char *key;
    struct ppw_loc *inclusive, *exclusive;
    size_t inclusive_count, exclusive_count;
};

struct ppw_result_binding {
    int var;       /* index into vars, -1 */
    int formal;    /* callee parameter number, -1 for the return value */
    unsigned mode; /* enum ppw_bind_mode */
    const char *callee_path;
};

struct ppw_result_call {
    unsigned line, col;
    const char *callee;
    unsigned kind; /* enum ppw_call_kind */
    struct ppw_result_binding *bindings;
    size_t binding_count;
    int *written_after; /* variables written where control can go after the call, ascending */
    size_t written_after_count;
};

/* The accesses of one source location to one variable (loads and stores,
 * memory intrinsics, library calls' pointer arguments). */
struct ppw_result_access {
    struct ppw_loc loc;
    int var; /* index into vars */
    unsigned reads, writes;
};

/* The variables computed from one variable in this function (explicit and
 * implicit transfer, through temporaries, transitively): where blame that
 * reaches `source` from a callee flows on (ppw-blame's forward closure). */
struct ppw_result_flow {
    int source;   /* index into vars */
    int *targets; /* indices into vars, ascending */
    size_t target_count;
};

struct ppw_result_func {
    const char *name, *linkage_name, *file;
    unsigned line, flags;
    const char *parent;
    struct ppw_result_var *vars;
    size_t var_count;
    struct ppw_result_call *calls;
    size_t call_count;
    struct ppw_result_access *accesses; /* sorted by location, then var */
    size_t access_count;
    struct ppw_result_flow *flows; /* by source, ascending; sources with targets only */
    size_t flow_count;
};

struct ppw_blamegraph_context {
    struct ppw_arena *arena; /* strings in the results live here */
    struct ppw_dbgvar_types *types;
    LLVMTargetDataRef layout;
    struct ppw_source_text *sources;
    const struct ppw_windows *windows; /* the module's MPI windows, may be NULL */
};

/* Analyses a defined function that has a DISubprogram. */
void ppw_blamegraph_analyse(const struct ppw_blamegraph_context *context, LLVMValueRef function,
                            struct ppw_result_func *out);
void ppw_blamegraph_free_result(struct ppw_result_func *result);

/* The module's MPI windows: where each MPI_Win_create or MPI_Win_allocate
 * call keeps the handle and the window's memory (struct ppw_window_rule).
 * Run before the analyses, which read context->windows.  Rules live in
 * the context's arena; out->rules is freed by the caller. */
void ppw_blamegraph_find_windows(const struct ppw_blamegraph_context *context,
                                 LLVMModuleRef module, struct ppw_windows *out);

#endif

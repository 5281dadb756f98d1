/* Memory nodes of one function and what each pointer value points to.
 *
 * A node is a piece of memory the blame calculus can name: a local, a
 * parameter, a global, a field path under one of those, or the memory a
 * pointer-valued node points to (its "pointee", shown under the pointer's
 * name, as seed 002 blames x for x[i] = ...).  Compiler temporaries are
 * nodes too, but hidden: data flows through them and they are never
 * reported.
 *
 * Points-to is flow-insensitive: a load from a node yields every pointer
 * stored into it; a node nothing known was stored into (a parameter, a
 * pointer from malloc) yields its own pointee.  A target is encoded as
 * node * 2 + indexed, where indexed means an array subscript was applied
 * since the node (it shows as "[]" before the next field name). */
#ifndef PPW_PASS_MEMORY_H
#define PPW_PASS_MEMORY_H

#include "dbgvar.h"
#include "source_text.h"
#include "support.h"

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

struct ppw_node {
    int parent; /* field parent, -1 */
    int pte_of; /* this node is the pointee of node pte_of, -1 */
    int pte;    /* this node's pointee node, -1 until needed */
    struct ppw_intvec children;
    const char *step;     /* field name, for field nodes */
    int indexed_step;     /* "[]" precedes the field name */
    long long element;    /* an array-of-pointers element at this constant
                             position (step "[VECTOR_U]" or "[9]"), -1 */
    LLVMMetadataRef type; /* debug type of this memory, may be NULL */
    /* Source-variable identity: set on roots named by debug info, and on
     * storage named through a dbg.declare with DW_OP_deref. */
    const char *var_name;
    unsigned kind; /* enum ppw_var_kind for named nodes, 0 otherwise */
    const char *decl_file;
    unsigned decl_line;
    int param_index;   /* IR parameter number, -1 */
    const char *key;   /* globals: program-level identity */
    int is_param_root; /* an IR argument's own storage (named or not) */
    int named_outside; /* a variable whose storage a pointer gives (DW_OP_deref):
                          an OpenMP task's shared or firstprivate copy */
    unsigned flags;    /* enum ppw_var_flag */
    int depth;
    struct ppw_intvec contents;   /* pointer targets stored into this node */
    int stores_unknown;           /* a stored pointer had no known target */
    struct ppw_intvec write_locs; /* locations of direct writes */
    struct ppw_intvec write_blocks; /* CFG blocks of direct writes; -1: unknown */
    struct ppw_intvec write_seqs;   /* ... and the writes' positions in the function */
    int vertex;                   /* first of its graph vertices, -1 */
    int touched;                  /* read, written or bound in this function */
    int block_access;             /* a library call or memcpy reads or writes it */
    int export_id;
};

/* The memory an MPI window handle stands for (MPI_Win_create's buffer,
 * the memory MPI_Win_allocate returned): a one-sided call that reads or
 * writes "the window" through its handle reaches that memory.  Found once
 * per module at the windows' creation (ppw_blamegraph_find_windows), by
 * where the handle is kept: a local or global variable, or a struct
 * field, whose sibling field then holds the memory or its pointer. */
struct ppw_window_rule {
    LLVMValueRef handle_storage; /* alloca or global holding the handle, or NULL */
    LLVMMetadataRef parent_type; /* else: the struct (stripped debug type) ... */
    const char *handle_step;     /* ... whose field this is */
    LLVMValueRef memory_storage; /* alloca or global: the memory or its pointer */
    const char *memory_step;     /* or the sibling field that is */
    LLVMMetadataRef memory_type; /* that field's debug type */
    int pointee;                 /* the memory is what the storage points to */
};

struct ppw_windows {
    struct ppw_window_rule *rules;
    size_t count, capacity;
};

struct ppw_memory {
    struct ppw_arena *arena;
    struct ppw_dbgvar_types *types;
    LLVMTargetDataRef layout;
    struct ppw_source_text *sources; /* spells constant subscripts; may be NULL */
    const char **variable_names;     /* of the function's source variables */
    size_t variable_name_count, variable_name_capacity;
    struct ppw_node *nodes;
    size_t node_count, node_capacity;
    struct ppw_ptrmap storage_node;  /* alloca, global or byval argument -> node */
    struct ppw_ptrmap argument_node; /* argument -> parameter node (spilled params) */
    struct ppw_ptrmap variable_node; /* DILocalVariable -> node */
    struct ppw_ptrmap memo;          /* value -> 1 + index into memo_sets */
    struct ppw_intvec *memo_sets;
    int *memo_rounds; /* round each set was last computed in */
    size_t memo_count, memo_capacity;
    int round, memo_grew, frozen;
    int pointee_when_unknown; /* second phase of the fixpoint */
    const struct ppw_windows *windows; /* the module's window handles, may be NULL */
    struct ppw_ptrmap accessors;       /* callee -> the parameter it returns into, or -1 */
};

void ppw_memory_init(struct ppw_memory *memory, struct ppw_arena *arena,
                     struct ppw_dbgvar_types *types, LLVMTargetDataRef layout);
void ppw_memory_free(struct ppw_memory *memory);

int ppw_memory_new_node(struct ppw_memory *memory);
/* The root node of an alloca, global or byval argument, created on demand. */
int ppw_memory_storage(struct ppw_memory *memory, LLVMValueRef storage);
int ppw_memory_pointee(struct ppw_memory *memory, int node);
int ppw_memory_field(struct ppw_memory *memory, int node, const char *step, int indexed,
                     LLVMMetadataRef type);

/* Targets (node * 2 + indexed) of a pointer value; NULL when none. */
const struct ppw_intvec *ppw_memory_targets(struct ppw_memory *memory, LLVMValueRef pointer);
/* Targets of the pointers loaded from the given targets. */
void ppw_memory_load_targets(struct ppw_memory *memory, const struct ppw_intvec *from,
                             struct ppw_intvec *out);
/* A source variable of the function (inlined ones included): a subscript
 * spelled with its name is no constant, though the optimizer made it one. */
void ppw_memory_note_variable_name(struct ppw_memory *memory, const char *name);
/* Runs the points-to fixpoint over the function's pointer stores. */
void ppw_memory_solve(struct ppw_memory *memory, LLVMValueRef function);

/* The node's member at offset 0 when it is a struct (a load through a
 * pointer to a struct reads its first member), else the node itself. */
int ppw_memory_first_member(struct ppw_memory *memory, int node);
/* The node's member at byte `offset` (as a GEP to it finds it: by debug
 * name, else "+offset"); the first member at 0. */
int ppw_memory_member_at(struct ppw_memory *memory, int node, unsigned long long offset);

/* Display root: the nearest node, itself included, that names a variable;
 * -1 for memory reached only through temporaries. */
int ppw_memory_named_root(const struct ppw_memory *memory, int node);
/* The node's source name, e.g. "g->cells[].energy"; NULL when hidden. */
const char *ppw_memory_display_name(struct ppw_memory *memory, int node);

/* Whether a value is a null or undefined pointer constant. */
int ppw_memory_is_null(LLVMValueRef value);

#endif

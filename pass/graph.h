/* Internal to the blame-graph module (blamegraph.c builds the graph,
 * callsites.c binds call sites, blamesets.c computes the sets): the graph
 * every part works on.  Other modules include blamegraph.h only. */
#ifndef PPW_PASS_GRAPH_H
#define PPW_PASS_GRAPH_H

#include "blamegraph.h"
#include "cfg.h"
#include "memory.h"

#include <stdint.h>

/* The graph: vertices carry at most one source location; an edge a -> b
 * means a's blame set includes b's.  A variable's inclusive blame set is
 * the union of the locations reachable from its export vertex. */
enum vertex_kind {
    VERTEX_INSTRUCTION,
    VERTEX_CALL,        /* a call to code outside this function */
    VERTEX_SELF,        /* direct writes to a node */
    VERTEX_VIEW,        /* what a load of the node reads */
    VERTEX_DOWN,        /* the node with every field and pointee below it */
    VERTEX_DOWN_FIELDS, /* the node with its fields, not its pointees */
    VERTEX_CONTROL,     /* the branches a block is control dependent on */
    VERTEX_EXPORT,
};
enum { NODE_VERTICES = 4 }; /* SELF, VIEW, DOWN, DOWN_FIELDS, in that order */

/* EDGE_EXIT_TEST: control by an exit test (whether a loop runs again, or
 * an early return), implicit transfer that blame sets count and flows do
 * not. */
enum edge_kind { EDGE_DATA = 0, EDGE_CONTROL = 1, EDGE_ADDRESS = 2, EDGE_EXIT_TEST = 3 };
enum {
    EDGE_KINDS_ALL =
        1u << EDGE_DATA | 1u << EDGE_CONTROL | 1u << EDGE_ADDRESS | 1u << EDGE_EXIT_TEST
};

/* Above this many words of reachability bitsets a function is exported
 * without blame sets (flag TRUNCATED) rather than exhausting memory. */
enum { MAX_BITSET_WORDS = 1 << 24 };

struct vertex {
    int loc;                 /* index into locs, -1 */
    int kind;                /* enum vertex_kind */
    int node;                /* memory node of node vertices, -1 */
    struct ppw_intvec edges; /* target * 4 + edge_kind */
};

struct pending_binding {
    int node;
    int formal;
    unsigned mode;
    const char *path;
};

struct call_site {
    LLVMValueRef inst;
    int vertex;
    int seq; /* its position in the function (graph.current_seq) */
    unsigned kind;
    const char *callee;
    struct ppw_intvec bindings; /* indices into graph.pending */
};

struct deferred_name {
    LLVMValueRef storage;
    LLVMMetadataRef variable;
    int through_pointer;
    unsigned long long offset; /* of the pointer slot, with through_pointer */
};

struct graph {
    const struct ppw_blamegraph_context *context;
    struct ppw_memory memory;
    struct ppw_cfg cfg;
    LLVMValueRef function;
    const char *file;
    struct vertex *vertices;
    size_t vertex_count, vertex_capacity;
    struct ppw_ptrmap inst_vertex;  /* instruction -> 1 + vertex */
    int *block_control;             /* per block: control vertex, -1 */
    struct ppw_ptrmap spill_stores; /* stores that spill an argument to its slot */
    struct ppw_loc *locs;
    size_t loc_count, loc_capacity;
    struct ppw_ptrmap loc_index; /* packed location -> 1 + index */
    struct ppw_ptrmap file_ids;  /* file name pointer -> id */
    struct call_site *calls;
    size_t call_count, call_capacity;
    struct pending_binding *pending;
    size_t pending_count, pending_capacity;
    struct deferred_name *deferred;
    size_t deferred_count, deferred_capacity;
    struct ppw_intvec ssa_bindings; /* pairs: node, value vertex */
    struct ppw_intvec access_log;   /* quads: location, node, 1 for a write, 1 if indexed */
    int return_node;
    int current_block; /* the CFG block being visited, -1 */
    int current_seq;   /* the position of the instruction being visited */
    int *export_vertex;         /* per exported node */
    struct ppw_intvec exported; /* node ids in export order */
    int *visit_marks;           /* per vertex: round of the last data_sources walk */
    size_t visit_capacity;
    int visit_round;
};

int ppw_graph_intern_loc(struct graph *graph, const char *file, unsigned line, unsigned col);
int ppw_graph_new_vertex(struct graph *graph, int kind, int loc, int node);
void ppw_graph_add_edge(struct graph *graph, int from, int to, enum edge_kind kind);
/* A node's vertices: its direct writes, what a load of it reads, all of it
 * with fields and pointees, and it with its fields. */
int ppw_graph_self(struct graph *graph, int node);
int ppw_graph_view(struct graph *graph, int node);
int ppw_graph_down(struct graph *graph, int node);
int ppw_graph_fields(struct graph *graph, int node);
int ppw_graph_operand_vertex(struct graph *graph, LLVMValueRef value);
/* The node above: the field's parent or the pointee's pointer, -1. */
int ppw_graph_up(const struct ppw_memory *memory, int node);
int ppw_graph_is_call(LLVMValueRef inst);
/* The function a value names, looking through bitcasts; NULL if none. */
LLVMValueRef ppw_graph_function(LLVMValueRef value);
const char *ppw_graph_callee_name(LLVMValueRef call);
int ppw_graph_is_pointer(LLVMValueRef value);

/* callsites.c */
void ppw_graph_add_pending(struct graph *graph, struct call_site *site, int node, int formal,
                           unsigned mode, const char *path);
void ppw_graph_bind_call(struct graph *graph, struct call_site *site);
void ppw_graph_mark_returned(struct graph *graph);
void ppw_graph_bind_receivers(struct graph *graph);

/* blamesets.c */
void ppw_graph_wire_node(struct graph *graph, int node);
void ppw_graph_select_exports(struct graph *graph);
int ppw_graph_export_of(const struct ppw_memory *memory, int node);
uint64_t **ppw_graph_reachable_locations(struct graph *graph, int **component_of,
                                         size_t *component_count);
uint64_t **ppw_graph_reachable_variables(struct graph *graph, unsigned edge_kinds,
                                         int **component_of, size_t *component_count);
/* One reachability: a bitset per component, and each vertex's component. */
struct ppw_flow_sets {
    uint64_t **sets;
    int *component;
    size_t count;
};
/* For each call, the variables written where control can go after it:
 * out->calls[].written_after. */
void ppw_graph_fill_written_after(struct graph *graph, struct ppw_result_func *out);
/* The variables computed from each variable (out->flows), from
 * ppw_graph_reachable_variables with and without address edges. */
void ppw_graph_fill_flows(struct graph *graph, const struct ppw_flow_sets *by_value,
                          const struct ppw_flow_sets *by_content, struct ppw_result_func *out);
void ppw_graph_fill_variable(struct graph *graph, size_t index, const uint64_t *inclusive,
                             struct ppw_result_var *out);
void ppw_graph_fill_calls(struct graph *graph, struct ppw_result_func *out);

/* accesses.c */
/* indexed: the address has a variable index; block: the access is a
 * memcpy's or a library call's buffer. */
void ppw_graph_log_access(struct graph *graph, int loc, int node, int is_write, int indexed,
                          int block);
void ppw_graph_fill_accesses(struct graph *graph, struct ppw_result_func *out);

#endif

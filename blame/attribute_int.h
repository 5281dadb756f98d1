/* Internal to attribution (attribute.c: blame; access.c: the access
 * view): the state one ppw_blame_attribute call works on.  Other modules
 * include attribute.h only. */
#ifndef PPW_BLAME_ATTRIBUTE_INT_H
#define PPW_BLAME_ATTRIBUTE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "read_graph.h"
#include "strmap.h"

/* A location of a variable's blame set, for lookups by line. */
struct loc_ref {
    uint32_t line, col;
    const char *file;
    uint32_t var;
};

/* Per static function, built the first time a stack reaches it. */
struct fstate {
    bool ready;
    struct loc_ref *incl, *excl; /* sorted by line */
    size_t nincl, nexcl;
    size_t *slot;   /* per variable: 1 + its result slot, 0 until blamed */
    int32_t *root;  /* per variable: the parameter it is (or lies under), -1 */
    int32_t ret;    /* the <return> variable, -1 */
    uint64_t *mark; /* per variable: the frame serial that listed it */
    uint64_t *held; /* per variable: the frame serial in which the closure may not add it */
    uint32_t *pos;  /* ... and where, in the entries */
    const struct ppw_static_flow **flow_of; /* per variable: what is computed from it, NULL */
    uint32_t *globals;                      /* its global and static variables */
    size_t nglobals;
    const struct ppw_static_access **acc; /* accesses sorted by line (access.c) */
    size_t nacc;
    bool acc_ready;
};

/* A fraction of one stack's samples charged to a variable by the access view. */
struct access_share {
    int32_t func;
    uint32_t var;
    double read, write;
};

/* A variable blamed in one frame of the stack being attributed. */
struct entry {
    uint32_t var;
    bool excl;     /* exclusively */
    bool written;  /* written through by a callee: a parameter transfers on */
    bool receiver; /* received blame from a call: what is computed from it is blamed */
};

/* The entries of one user frame: entries[first, first + count). */
struct frame_blame {
    size_t frame;
    int32_t func;
    size_t first, count;
};

struct ctx_count {
    uint32_t node;
    uint64_t samples;
};

/* Where (slot, node) is counted: slot->ctx[at]; slot 0 marks an empty entry. */
struct ctx_ref {
    uint32_t slot; /* 1 + the slot's index */
    uint32_t node;
    uint32_t at;
};

/* A result variable: a (function, variable), or a global by key. */
struct slot {
    int32_t func;
    uint32_t var;
    bool global;
    uint64_t incl, excl, stamp_incl, stamp_excl;
    double incl_w, excl_w;
    double acc_read, acc_write, acc_read_w, acc_write_w; /* access view */
    struct ctx_count *ctx;                               /* calling contexts it was blamed in */
    size_t nctx, ctx_cap;
};

/* Calling-context trie: node 0 is the empty path. */
struct ctx_node {
    uint32_t parent;
    int32_t func;
};

struct name_list {
    size_t *funcs;
    size_t count, cap;
};

struct attr {
    const struct ppw_static_graph *graph;
    const char *blame_point;
    bool outlined_params;
    const char **stack_variable; /* the current stack's entry of options->stack_variable */
    const struct frame_blame *stack_variable_frame; /* the frame that set it */
    struct fstate *fs;
    struct ppw_strmap names; /* source and linkage names -> index into lists */
    struct name_list *lists;
    size_t nlists, lists_cap;
    struct ppw_strmap globals; /* key -> slot */
    struct slot *slots;
    size_t nslots, slots_cap;
    struct ctx_node *nodes;
    size_t nnodes, nodes_cap;
    uint32_t *node_table; /* open addressing over nodes: 1 + node, 0 empty */
    size_t node_table_cap;
    struct ctx_ref *ctx_table; /* open addressing over every slot's contexts */
    size_t ctx_table_cap, nctx_refs;
    uint64_t serial, frame_serial;
    /* scratch for one stack */
    int32_t *func_of; /* per frame: function index, -1 none */
    uint32_t *ctx_of; /* per frame: context node */
    size_t func_of_cap, ctx_of_cap;
    struct entry *entries;
    size_t nentries, entries_cap;
    struct frame_blame *done; /* user frames attributed so far, innermost first */
    size_t ndone, done_cap;
    bool oom;
    /* access view (options->access) */
    bool access;
    struct access_share *shares, *moved;
    size_t nshares, shares_cap, nmoved, moved_cap;
    double access_samples, access_weight; /* charged to some variable */
};

struct fstate *ppw_attr_fstate(struct attr *a, int32_t func);
struct slot *ppw_attr_slot(struct attr *a, int32_t func, uint32_t var);
/* The call of f at the location of frame at whose callee is named name or
 * other (any callee when name is NULL) and, when kind is not 0, of that
 * kind; one at the frame's column first. */
const struct ppw_static_call *ppw_attr_find_call(const struct ppw_static_func *f,
                                                 const struct ppw_blame_frame *at, const char *name,
                                                 const char *other, uint32_t kind);
/* Whether blame stops at func (the blame point, or main). */
bool ppw_attr_stops(const struct attr *a, int32_t func);
/* Paths name the same file when equal or when one ends with "/" + the other. */
bool ppw_attr_same_file(const char *a, const char *b);

/* access.c: charges stack st, whose leaf user frame is u, to the variables
 * accessed at its location, transferred up through parameter bindings. */
void ppw_attr_access_stack(struct attr *a, const struct ppw_blame_stack *st, size_t u);
void ppw_attr_access_free(struct fstate *s);

#endif

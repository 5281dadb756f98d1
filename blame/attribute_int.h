/* Internal to attribution: the state one ppw_blame_attribute call works
 * on, shared by the walk over the stacks (stack_walk.c), what is below the
 * views (datum.c: the chain and the datums; effects.c: what calls write),
 * the views (attribute.c: blame; access.c: access) and the result
 * (results.c).  Other modules include attribute.h only. */
#ifndef PPW_BLAME_ATTRIBUTE_INT_H
#define PPW_BLAME_ATTRIBUTE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "ppw/static_format.h"
#include "read_graph.h"
#include "strmap.h"

/* A location of a variable's blame set, for lookups by line. */
struct loc_ref {
    uint32_t line, col;
    const char *file;
    uint32_t var;
};

/* What datum.c keeps per variable of a function, together because a
 * stack's entries read them together. */
struct datum_var {
    uint64_t step_stamp; /* the stack and chain frame it last resolved in, */
    uint32_t step_slot, step_where; /* to this slot, declared in this chain frame */
    uint32_t copy_of; /* itself, or the shared variable it is a private copy of */
    int32_t root;     /* the parameter it is or lies under (fstate.root), -1 */
    /* its last binding at a call: a stack sorted after one with the same
     * callers meets the same call */
    const struct ppw_static_call *bound_call;
    const char *bound_path;
    int32_t bound_var;
    uint32_t alias_slot; /* 1 + the slot it was last noted as an alias of */
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
    /* per local pointer variable: the pointers of its type its value was
     * computed from (pointer_sources[pointer_start[v], pointer_start[v +
     * 1])): memory written through it is theirs */
    uint32_t *pointer_start, *pointer_sources;
    uint32_t *globals;                      /* its global and static variables */
    size_t nglobals;
    int32_t *global_slot; /* per variable: its slot if program-level, else -1 */
    const struct ppw_static_access **acc; /* accesses sorted by line (access.c) */
    size_t nacc;
    bool acc_ready;
    size_t *arg_start;         /* per variable: its calls in args[arg_start[v], arg_start[v + 1]) */
    struct call_arg *args;
    const struct frame_effects **var_effects; /* per variable, once computed */
    struct global_effects *global_effects;
    size_t nglobal_effects, global_effects_cap;
    struct ppw_strmap by_name; /* field name -> 1 + index, built when first needed */
    bool by_name_ready;
    struct datum_var *dv; /* per variable (datum.c) */
};

/* A frame's closure, memoized (attribute.c): closed_entries[first,
 * first + nstart) are the entries it started with, then ntotal closed
 * ones; closed_globals[gfirst, gfirst + gcount) the globals it noted. */
struct closed_frame {
    uint64_t hash;
    int32_t func;
    bool leaf; /* the stack's leaf frame (its closure runs effects for every entry) */
    const struct ppw_static_call *call;
    uint64_t globals_sig;
    size_t nglobals_before;
    size_t first, nstart, ntotal, gfirst, gcount;
};

/* Where a callee variable's blame goes at a call (attribute.c, memo). */
struct transfer_target {
    int32_t var;
    bool by_arg;
};
struct transfer_memo {
    const struct ppw_static_call *call; /* NULL: empty */
    uint32_t var;
    uint32_t first, count; /* in attr.targets */
};

/* A call a variable is an argument of (effects.c). */
struct call_arg {
    uint32_t call;
    int32_t formal;
};

/* A summary of what a callee writes from one input (effects.c). */
struct effect_list;
struct frame_effects;
struct global_effects {
    int32_t slot;
    const struct frame_effects *list;
};
struct summary_entry {
    uint64_t key; /* 0: empty */
    struct effect_list *list;
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
    bool via_field; /* blamed only as the parent of a blamed field: in the caller its
                       actual is blamed, but what is computed from the rest of it is not */
};

/* One user frame of the stack being attributed, innermost first (the
 * chain, datum.c), and its blamed entries: entries[first, first + count). */
struct frame_blame {
    size_t frame; /* index into the stack's frames */
    int32_t func;
    int32_t from;                      /* the chain frame whose call this frame made, -1 */
    const struct ppw_static_call *call; /* ... that call, in this frame's function */
    int32_t up;                        /* the chain frame that called this one, -1 */
    size_t first, count;
    uint32_t closed; /* 1 + its memoized closure in attr.closed; 0: none */
    bool replayed;   /* its entries are that closure's (ppw_attr_frame_entries) */
};

/* A caller frame's closure, memoized by what it starts from when no global
 * is blamed below it (attribute.c): the closure of the frame it called,
 * and its call into that frame. */
struct frame_step {
    uint32_t from_closed; /* 0: an empty entry */
    const struct ppw_static_call *call;
    uint32_t closed;
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

/* A callee variable the caller knows by another one (datum.c): memo. */
struct binding_memo {
    const struct ppw_static_call *call; /* NULL: an empty entry */
    uint32_t var;
    const char *path;
    int32_t caller_var; /* -1: bound to nothing */
    const char *caller_path;
    uint32_t extra; /* 0 for bindings */
};

/* One step of a datum's walk up the stack being attributed (datum.c). */
/* The call a chain frame made into the frame below it (datum.c): the
 * caller's function and location and the callee decide it. */
#define CALL_CACHE_SLOTS 4096
struct call_cache {
    int32_t caller, callee; /* caller 1 + its function (0: empty); callee -1: indirect */
    uint32_t line, col;
    const struct ppw_static_call *call;
};

struct stack_step {
    uint64_t serial; /* the stack's; older: an empty entry */
    uint32_t link, var;
    const char *path;
    uint32_t slot, where; /* the datum's slot and its chain frame */
};

/* A result variable: one datum, named where it is declared (datum.c): a
 * (function, variable), a path under it that its function does not name
 * itself (a field a callee reaches), or a global by key. */
struct slot {
    int32_t func;
    uint32_t var;
    const char *path; /* "" or the field path under var, interned */
    const char *name; /* var's name and path */
    const char *type; /* the type at path */
    uint32_t alias_func[4], alias_var[4]; /* other names it was blamed as */
    size_t naliases;
    bool global;
    uint64_t incl, excl, stamp_incl, stamp_excl;
    double incl_w, excl_w;
    double acc_read, acc_write, acc_read_w, acc_write_w; /* access view */
    struct ctx_count *ctx;                               /* calling contexts it was blamed in */
    size_t nctx, ctx_cap;
    uint32_t last_ctx; /* the context the last stack counted */
    uint64_t listed;   /* globals: the serial of the stack that noted it in stack_globals */
    bool outermost;    /* declared, in some stack, in the outermost frame's source function */
};

/* An index entry of the context trie: its key, and 1 + node (0 empty). */
struct node_ref {
    uint32_t parent;
    int32_t func;
    uint32_t id;
};

/* Calling-context trie: node 0 is the empty path. */
struct ctx_node {
    uint32_t parent;
    int32_t func;
    uint64_t *counts; /* per variable of func: the samples that blamed it in this context */
};


/* A direct-mapped cache of resolve(): frame name and file -> function. */
enum { RESOLVED_SLOTS = 4096 };
struct resolved {
    const char *function, *file;
    int32_t func;
};

struct attr {
    const struct ppw_static_graph *graph;
    const char *blame_point;
    bool temporaries; /* list the scalar locals of called functions too */
    const char **stack_variable; /* the current stack's entry of options->stack_variable */
    const struct frame_blame *stack_variable_frame; /* the frame that set it */
    struct fstate *fs;
    struct ppw_strmultimap names; /* source and linkage names -> functions */
    struct ppw_strmap globals; /* key -> slot */
    struct slot *slots;
    size_t nslots, slots_cap;
    struct ctx_node *nodes;
    size_t nnodes, nodes_cap;
    struct node_ref *node_table; /* open addressing over nodes, keys inline */
    size_t node_table_cap;
    struct ctx_ref *ctx_table; /* open addressing over every slot's contexts */
    size_t ctx_table_cap, nctx_refs;
    uint64_t serial, frame_serial;
    /* scratch for one stack */
    int32_t *func_of; /* per frame: function index, -1 none */
    uint32_t *ctx_of; /* per frame: context node */
    /* the previous stack's user frames from the outermost, and their
     * contexts: a stack sharing its callers reuses them (contexts()) */
    int32_t *prev_ctx_func;
    uint32_t *prev_ctx_node;
    size_t prev_ctx_len, prev_ctx_func_cap, prev_ctx_node_cap;
    bool *is_main; /* per function: named main (the contexts' root) */
    bool *stops;   /* per function: the blame point (main by default) */
    struct resolved resolved[RESOLVED_SLOTS];
    size_t func_of_cap, ctx_of_cap;
    struct entry *entries;
    size_t nentries, entries_cap;
    struct frame_blame *done; /* the stack's chain of user frames, innermost first */
    size_t ndone, done_cap;
    size_t outer_run; /* chain frames from here up are the outermost frame's source function */
    struct ppw_arena *names_arena; /* the result's: names of datums with a path */
    struct ppw_strmap paths;   /* interned field paths of datums */
    const char *empty_path;    /* paths' "" */
    struct binding_memo *memo; /* open addressing */
    size_t memo_cap, nmemo;
    struct closed_frame *closed; /* memoized frame closures */
    size_t nclosed, closed_cap_items;
    uint32_t *closed_table; /* open addressing: 1 + index into closed */
    size_t closed_cap;
    struct entry *closed_entries, *start_copy;
    size_t nclosed_entries, closed_entries_cap, start_copy_cap;
    /* per closed entry: 1 + the slot of a variable of the frame's own (no
     * walk up the chain needed), once charged; 0: not known */
    uint32_t *closed_slots;
    size_t closed_slots_cap;
    int32_t *closed_globals;
    size_t nclosed_globals, closed_globals_cap;
    uint64_t globals_sig; /* of the stack's globals so far (an order-free hash) */
    struct frame_step *frame_steps; /* open addressing */
    size_t frame_steps_cap, nframe_steps;
    struct transfer_memo *transfers; /* open addressing (attribute.c) */
    size_t transfers_cap, ntransfers;
    struct transfer_target *targets; /* their lists */
    size_t ntargets, targets_cap;
    struct summary_entry *summaries; /* open addressing (effects.c) */
    size_t summaries_cap, nsummaries;
    int32_t *stack_globals; /* slots of the globals the stack's frames blamed so far */
    const struct frame_blame *effect_frame; /* the frame whose closure runs */
    size_t nstack_globals, stack_globals_cap;
    struct call_cache *call_cache; /* direct-mapped, CALL_CACHE_SLOTS (datum.c's chain_call) */
    struct stack_step *steps; /* open addressing, by stack serial */
    size_t steps_cap, nsteps_used;
    uint64_t step_stack;
    bool oom;
    /* access view (options->access) */
    bool access;
    struct access_share *shares;
    size_t nshares, shares_cap;
    double access_samples, access_weight; /* charged to some variable */
    uint64_t unblamed[4];                 /* by enum ppw_blame_cause */
    double unaccessed[4];
};

/* Globals and function-scope statics: one instance for the whole program,
 * by key. */
static inline bool ppw_attr_program_level(const struct ppw_static_var *v)
{
    return (v->kind == PPW_VAR_GLOBAL || v->kind == PPW_VAR_STATIC) && v->key[0];
}

/* splitmix64's finalizer, for the open-addressing tables: every bit of the
 * key reaches the low bits they index by. */
static inline uint64_t ppw_attr_mix(uint64_t h)
{
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

/* Function func's state, made on first use (NULL when out of memory). */
struct fstate *ppw_attr_fstate_make(struct attr *a, int32_t func);
static inline struct fstate *ppw_attr_fstate(struct attr *a, int32_t func)
{
    struct fstate *s = &a->fs[func];
    return s->ready ? s : ppw_attr_fstate_make(a, func);
}
/* Chain frame fb's fb->count entries: its own in attr.entries, or, when it
 * replayed a memoized closure, that closure's. */
static inline const struct entry *ppw_attr_frame_entries(const struct attr *a,
                                                         const struct frame_blame *fb)
{
    if (!fb->replayed)
        return &a->entries[fb->first];
    const struct closed_frame *c = &a->closed[fb->closed - 1];
    return &a->closed_entries[c->first + c->nstart];
}
/* The slot of (func, var, path); path "" for var itself. */
struct slot *ppw_attr_slot(struct attr *a, int32_t func, uint32_t var, const char *path);

/* datum.c: the chain of the stack's user frames from the leaf user frame u
 * up to the blame point, each linked to the call that made it (a->done,
 * entries empty).  False when out of memory. */
bool ppw_attr_chain(struct attr *a, const struct ppw_blame_stack *st, size_t u);
/* The datum variable var of chain frame link stands for: a parameter is the
 * caller's variable bound to it (a field under it, that variable's field of
 * the same path), up the chain as far as bindings go; an OpenMP private or
 * reduction copy is the shared variable.  The slot, with the alias noted;
 * *where is the chain frame that declares it.  NULL when out of memory. */
struct slot *ppw_attr_datum(struct attr *a, size_t link, uint32_t var, size_t *where);
void ppw_attr_datum_free(struct attr *a);
/* The variable of f named name, or -1. */
int32_t ppw_attr_var_named(struct attr *a, struct fstate *s, const struct ppw_static_func *f,
                           const char *name);
/* How a callee's path under a formal joins the name of the actual bound to
 * it with mode: g.cells (&g), a[].cells (an array), p->cells (a pointer). */
void ppw_attr_field_join(const struct ppw_static_var *actual, uint32_t mode, const char *path,
                         const char **join, const char **tail);
/* Per-function state of datum.c, built with the fstate. */
bool ppw_attr_datum_fstate(struct fstate *s, const struct ppw_static_func *f);
void ppw_attr_datum_fstate_free(struct fstate *s);

/* effects.c: the forward closure through a frame's other calls.
 * on_effect(a, func, caller_var, global_slot): the call writes caller_var
 * (>= 0) or the global of slot global_slot (>= 0) from its input. */
typedef void ppw_attr_effect_fn(struct attr *a, int32_t func, int32_t caller_var,
                                int32_t global_slot);
/* The function call c names, among those with a graph; -1. */
int32_t ppw_attr_callee(struct attr *a, const struct ppw_static_func *caller,
                        const struct ppw_static_call *c);
/* What the calls of func other than except write from var, or from the
 * global of slot global_slot. */
void ppw_attr_var_effects(struct attr *a, int32_t func, uint32_t var,
                          const struct ppw_static_call *except, ppw_attr_effect_fn *on_effect);
void ppw_attr_global_effects(struct attr *a, int32_t func, int32_t global_slot,
                             const struct ppw_static_call *except, ppw_attr_effect_fn *on_effect);
bool ppw_attr_effects_fstate(struct fstate *s, const struct ppw_static_func *f);
void ppw_attr_effects_fstate_free(struct fstate *s);
void ppw_attr_effects_free(struct attr *a);
/* The call of f at the location of frame at whose callee is named name or
 * other (any callee when name is NULL) and, when kind is not 0, of that
 * kind; one at the frame's column first. */
const struct ppw_static_call *ppw_attr_find_call(const struct ppw_static_func *f,
                                                 const struct ppw_blame_frame *at, const char *name,
                                                 const char *other, uint32_t kind);
/* Whether blame stops at func (the blame point, or main). */
static inline bool ppw_attr_stops(const struct attr *a, int32_t func)
{
    return a->stops[func];
}

/* A view: one pass over stack st, whose leaf user frame is u (st->nframes:
 * none) and whose chain (attr.done), contexts and outer_run the walk
 * built, charging its data to slots; what it cannot charge it counts as
 * unattributed for cause why. */
typedef void ppw_attr_view_fn(struct attr *a, const struct ppw_blame_stack *st, size_t u,
                              enum ppw_blame_cause why);
/* attribute.c: the blame view. */
ppw_attr_view_fn ppw_attr_blame_stack;
void ppw_attr_blame_free(struct attr *a);
/* access.c: the access view: the variables accessed at the stack's
 * location, transferred up through parameter bindings. */
ppw_attr_view_fn ppw_attr_access_stack;
void ppw_attr_access_free(struct fstate *s);
void ppw_attr_access_view_free(struct attr *a);

/* results.c: the result's rows, from the slots; false when out of memory. */
bool ppw_attr_results(const struct attr *a, struct ppw_blame_result *r);

#endif

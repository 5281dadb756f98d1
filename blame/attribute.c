/* Blame attribution (attribute.h; docs/ppw-blame.md, "Attribution").
 *
 * For each unique stack: the leaf user frame blames the variables whose
 * blame sets hold the sampled location (or, for a sample in code without a
 * graph, the location of the call into it, with the library's written
 * arguments); then, frame by frame up to the blame point, the blamed exit
 * variables of the callee blame the caller variables bound to them at the
 * call site.  Within a frame, a blamed field blames its ancestors, and a
 * blamed variable flowing into the return value blames <return>.  Every
 * result variable is counted at most once per stack (stamped with the
 * stack's serial number) and weighted by the stack's samples. */
#include "attribute.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "attribute_int.h"
#include "names.h"
#include "ppw/static_format.h"
#include "read_graph.h"
#include "strmap.h"

/* ---- functions by name ---- */

static bool is_user(const struct ppw_static_func *f)
{
    return (f->flags & PPW_FUNC_ANALYSED) != 0;
}

static bool index_name(struct attr *a, const char *name, size_t func)
{
    bool added;
    if (!name[0])
        return true;
    struct ppw_strmap_entry *e = ppw_strmap_put(&a->names, name, a->nlists, &added);
    if (!e)
        return false;
    if (added) {
        if (!ppw_array_reserve(&a->lists, &a->lists_cap, a->nlists + 1, sizeof *a->lists))
            return false;
        a->lists[a->nlists++] = (struct name_list){0};
    }
    struct name_list *list = &a->lists[e->value];
    if (list->count && list->funcs[list->count - 1] == func)
        return true; /* name == linkage name */
    if (!ppw_array_reserve(&list->funcs, &list->cap, list->count + 1, sizeof *list->funcs))
        return false;
    list->funcs[list->count++] = func;
    return true;
}

/* Paths name the same file when equal or when one ends with "/" + the other. */
bool ppw_attr_same_file(const char *a, const char *b)
{
    if (!a || !b || a == b)
        return true;
    size_t la = strlen(a), lb = strlen(b);
    if (la < lb) {
        const char *t = a;
        a = b, b = t;
        size_t tl = la;
        la = lb, lb = tl;
    }
    return strcmp(a + la - lb, b) == 0 && (la == lb || a[la - lb - 1] == '/');
}

/* The function a frame is in: among several of that name (static functions
 * of different units), one with a graph whose file matches the frame's. */
static int32_t resolve(const struct attr *a, const struct ppw_blame_frame *frame)
{
    if (!frame->function)
        return -1;
    struct ppw_strmap_entry *e = ppw_strmap_find(&a->names, frame->function);
    if (!e)
        return -1;
    const struct name_list *list = &a->lists[e->value];
    int32_t best = (int32_t)list->funcs[0];
    int best_score = -1;
    for (size_t i = 0; i < list->count; i++) {
        const struct ppw_static_func *f = &a->graph->funcs[list->funcs[i]];
        int score = is_user(f) * 2 + ppw_attr_same_file(f->file, frame->file);
        if (score > best_score)
            best = (int32_t)list->funcs[i], best_score = score;
    }
    return best;
}

/* ---- per-function state ---- */

static int compare_loc(const void *x, const void *y)
{
    const struct loc_ref *a = x, *b = y;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return (a->var > b->var) - (a->var < b->var);
}

static bool collect_locs(const struct ppw_static_func *f, bool excl, struct loc_ref **out,
                         size_t *count)
{
    size_t n = 0;
    for (size_t v = 0; v < f->var_count; v++)
        n += excl ? f->vars[v].exclusive_count : f->vars[v].inclusive_count;
    *count = n;
    *out = NULL;
    if (!n)
        return true;
    struct loc_ref *locs = malloc(n * sizeof *locs);
    if (!locs)
        return false;
    size_t k = 0;
    for (size_t v = 0; v < f->var_count; v++) {
        const struct ppw_static_var *var = &f->vars[v];
        const struct ppw_static_loc *set = excl ? var->exclusive : var->inclusive;
        size_t m = excl ? var->exclusive_count : var->inclusive_count;
        for (size_t i = 0; i < m; i++)
            locs[k++] = (struct loc_ref){set[i].line, set[i].col, set[i].file, (uint32_t)v};
    }
    qsort(locs, n, sizeof *locs, compare_loc);
    *out = locs;
    return true;
}

/* Globals and statics: one instance for the whole program, by key. */
static bool program_level(const struct ppw_static_var *v)
{
    return (v->kind == PPW_VAR_GLOBAL || v->kind == PPW_VAR_STATIC) && v->key[0];
}

static int32_t param_root(const struct ppw_static_func *f, int32_t v)
{
    for (int depth = 0; v >= 0 && depth <= (int)f->var_count; depth++) {
        if (f->vars[v].kind == PPW_VAR_PARAM)
            return f->vars[v].param_index >= 0 ? v : -1;
        if (f->vars[v].kind != PPW_VAR_FIELD)
            return -1;
        v = f->vars[v].parent;
    }
    return -1;
}

struct fstate *ppw_attr_fstate(struct attr *a, int32_t func)
{
    struct fstate *s = &a->fs[func];
    if (s->ready)
        return s;
    const struct ppw_static_func *f = &a->graph->funcs[func];
    size_t n = f->var_count ? f->var_count : 1;
    s->slot = calloc(n, sizeof *s->slot);
    s->root = calloc(n, sizeof *s->root);
    s->mark = calloc(n, sizeof *s->mark);
    s->held = calloc(n, sizeof *s->held);
    s->pos = calloc(n, sizeof *s->pos);
    if (!s->slot || !s->root || !s->mark || !s->held || !s->pos ||
        !collect_locs(f, false, &s->incl, &s->nincl) ||
        !collect_locs(f, true, &s->excl, &s->nexcl)) {
        a->oom = true;
        return NULL;
    }
    s->ret = -1;
    for (size_t v = 0; v < f->var_count; v++) {
        s->root[v] = param_root(f, (int32_t)v);
        if (f->vars[v].kind == PPW_VAR_RETURN && s->ret < 0)
            s->ret = (int32_t)v;
        s->nglobals += program_level(&f->vars[v]);
    }
    s->flow_of = calloc(n, sizeof *s->flow_of);
    s->globals = calloc(s->nglobals ? s->nglobals : 1, sizeof *s->globals);
    if (!s->flow_of || !s->globals) {
        a->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < f->flow_count; i++)
        s->flow_of[f->flows[i].source] = &f->flows[i];
    s->nglobals = 0;
    for (size_t v = 0; v < f->var_count; v++)
        if (program_level(&f->vars[v]))
            s->globals[s->nglobals++] = (uint32_t)v;
    s->ready = true;
    return s;
}

static void fstate_free(struct fstate *s)
{
    free(s->incl);
    free(s->excl);
    free(s->slot);
    free(s->root);
    free(s->mark);
    free(s->held);
    free(s->pos);
    free(s->flow_of);
    free(s->globals);
    ppw_attr_access_free(s);
}

/* ---- calling contexts ---- */

static uint64_t node_hash(uint32_t parent, int32_t func)
{
    uint64_t h = ((uint64_t)parent << 32 | (uint32_t)func) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static bool grow_nodes(struct attr *a)
{
    if (!ppw_array_reserve(&a->nodes, &a->nodes_cap, a->nnodes + 1, sizeof *a->nodes))
        return false;
    if ((a->nnodes + 1) * 2 <= a->node_table_cap)
        return true;
    size_t cap = a->node_table_cap ? a->node_table_cap * 2 : 1024;
    uint32_t *table = calloc(cap, sizeof *table);
    if (!table)
        return false;
    free(a->node_table);
    a->node_table = table;
    a->node_table_cap = cap;
    for (size_t i = 1; i < a->nnodes; i++) {
        size_t k = (size_t)node_hash(a->nodes[i].parent, a->nodes[i].func) & (cap - 1);
        while (table[k])
            k = (k + 1) & (cap - 1);
        table[k] = (uint32_t)i + 1;
    }
    return true;
}

/* The context parent + func; a call of a function from itself stays in the
 * same context, so that recursion does not multiply contexts. */
static uint32_t child_node(struct attr *a, uint32_t parent, int32_t func)
{
    if (parent && a->nodes[parent].func == func)
        return parent;
    if (!grow_nodes(a)) {
        a->oom = true;
        return 0;
    }
    size_t mask = a->node_table_cap - 1;
    size_t k = (size_t)node_hash(parent, func) & mask;
    for (; a->node_table[k]; k = (k + 1) & mask) {
        const struct ctx_node *n = &a->nodes[a->node_table[k] - 1];
        if (n->parent == parent && n->func == func)
            return a->node_table[k] - 1;
    }
    a->nodes[a->nnodes] = (struct ctx_node){parent, func};
    a->node_table[k] = (uint32_t)++a->nnodes;
    return (uint32_t)(a->nnodes - 1);
}

/* The context of every user frame: the path of user functions from the
 * outermost main (or the outermost frame) down to it. */
static void contexts(struct attr *a, const struct ppw_blame_stack *st)
{
    size_t top = st->nframes - 1;
    for (size_t i = st->nframes; i-- > 0;) {
        if (a->func_of[i] >= 0 && strcmp(a->graph->funcs[a->func_of[i]].name, "main") == 0) {
            top = i;
            break;
        }
    }
    uint32_t node = 0;
    for (size_t i = st->nframes; i-- > 0;) {
        if (i <= top && a->func_of[i] >= 0)
            node = child_node(a, node, a->func_of[i]);
        a->ctx_of[i] = i <= top ? node : 0;
    }
}

/* ---- blame within a frame ---- */

static void add_entry(struct attr *a, struct fstate *s, int32_t var, bool excl, bool written,
                      bool receiver)
{
    if (s->mark[var] == a->frame_serial) {
        struct entry *e = &a->entries[s->pos[var]];
        e->excl |= excl;
        e->written |= written;
        e->receiver |= receiver;
        return;
    }
    if (!ppw_array_reserve(&a->entries, &a->entries_cap, a->nentries + 1, sizeof *a->entries)) {
        a->oom = true;
        return;
    }
    s->mark[var] = a->frame_serial;
    s->pos[var] = (uint32_t)a->nentries;
    a->entries[a->nentries++] = (struct entry){(uint32_t)var, excl, written, receiver};
}

static void add(struct attr *a, struct fstate *s, int32_t var, bool excl, bool written)
{
    add_entry(a, s, var, excl, written, false);
}

/* A variable that receives blame from a call (bound to a callee's blamed
 * exit variable, or written by a library): what the frame computes from it
 * is blamed too (bubble). */
static void add_receiver(struct attr *a, struct fstate *s, int32_t var, bool excl, bool written)
{
    add_entry(a, s, var, excl, written, true);
}

static bool loc_matches(const struct loc_ref *l, const struct ppw_blame_frame *at)
{
    return (at->col == 0 || l->col == 0 || l->col == at->col) &&
           ppw_attr_same_file(l->file, at->file);
}

/* The first of locs (sorted by line) on line, or n. */
static size_t first_on_line(const struct loc_ref *locs, size_t n, uint32_t line)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (locs[mid].line < line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Adds the variables whose inclusive set holds the location at; those of
 * them written directly on its line are blamed exclusively: the whole
 * statement that writes a variable is its exclusive cost, not only the
 * column of the store. */
static void match_location(struct attr *a, struct fstate *s, const struct ppw_blame_frame *at)
{
    for (size_t i = first_on_line(s->incl, s->nincl, at->line);
         i < s->nincl && s->incl[i].line == at->line; i++)
        if (loc_matches(&s->incl[i], at))
            add(a, s, (int32_t)s->incl[i].var, false, false);
    for (size_t i = first_on_line(s->excl, s->nexcl, at->line);
         i < s->nexcl && s->excl[i].line == at->line; i++) {
        uint32_t var = s->excl[i].var;
        if (s->mark[var] == a->frame_serial && ppw_attr_same_file(s->excl[i].file, at->file))
            a->entries[s->pos[var]].excl = true;
    }
}

/* The call of f at the location of frame at whose callee is named name or
 * other (any callee when name is NULL) and, when kind is not 0, of that
 * kind; one at the frame's column first. */
const struct ppw_static_call *ppw_attr_find_call(const struct ppw_static_func *f,
                                                 const struct ppw_blame_frame *at, const char *name,
                                                 const char *other, uint32_t kind)
{
    const struct ppw_static_call *line_match = NULL;
    for (size_t i = 0; i < f->call_count; i++) {
        const struct ppw_static_call *c = &f->calls[i];
        bool named = !name || (c->callee[0] && (strcmp(c->callee, name) == 0 ||
                                                (other && strcmp(c->callee, other) == 0)));
        if (c->line != at->line || !named || (kind && c->kind != kind))
            continue;
        if (at->col && c->col == at->col)
            return c;
        if (!line_match)
            line_match = c;
    }
    return line_match;
}

/* Starts the entries of user frame i (function func). */
static struct frame_blame *begin_frame(struct attr *a, size_t i, int32_t func)
{
    if (!ppw_array_reserve(&a->done, &a->done_cap, a->ndone + 1, sizeof *a->done)) {
        a->oom = true;
        return NULL;
    }
    a->frame_serial++;
    struct frame_blame *fb = &a->done[a->ndone++];
    *fb = (struct frame_blame){i, func, a->nentries, 0};
    return fb;
}

/* The leaf user frame u: its location is the sample's (u == 0) or the call
 * into code without a graph, which also blames the library's written
 * arguments (ppw/libcalls.h, as the pass recorded them in the call). */
static void blame_leaf(struct attr *a, const struct ppw_blame_stack *st, size_t u)
{
    int32_t func = a->func_of[u];
    struct fstate *s = ppw_attr_fstate(a, func);
    if (!s || !begin_frame(a, u, func))
        return;
    const struct ppw_blame_frame *at = &st->frames[u];
    match_location(a, s, at);
    if (u == 0)
        return;
    const struct ppw_static_func *f = &a->graph->funcs[func];
    const char *lib = st->frames[u - 1].function;
    const struct ppw_static_call *c = lib ? ppw_attr_find_call(f, at, lib, NULL, 0) : NULL;
    if (!c) /* an internal name (__memmove_avx_unaligned): the library call there */
        c = ppw_attr_find_call(f, at, NULL, NULL, PPW_CALL_LIBRARY);
    for (size_t i = 0; c && i < c->binding_count; i++)
        if (c->bindings[i].mode == PPW_BIND_WRITTEN && c->bindings[i].var >= 0)
            add_receiver(a, s, c->bindings[i].var, true, true);
}

/* A callee field (path under formal, e.g. "->cells[].energy") that no
 * binding names: the caller's field of the same path under the variable
 * bound to the formal itself, if the caller has it (g.cells[].energy for
 * &g, p->cells[].energy for p). */
static void bind_field(struct attr *a, const struct ppw_static_func *f, struct fstate *caller,
                       const struct ppw_static_call *c, int32_t formal, const char *path, bool excl)
{
    char name[512];
    for (size_t i = 0; i < c->binding_count; i++) {
        const struct ppw_static_binding *b = &c->bindings[i];
        if (b->var < 0 || b->formal != formal || b->callee_path[0] ||
            (b->mode != PPW_BIND_REF && b->mode != PPW_BIND_VALUE))
            continue;
        bool deref = b->mode == PPW_BIND_REF && strncmp(path, "->", 2) == 0;
        int len = snprintf(name, sizeof name, "%s%s%s", f->vars[b->var].name, deref ? "." : "",
                           deref ? path + 2 : path);
        if (len < 0 || (size_t)len >= sizeof name)
            continue;
        for (size_t v = 0; v < f->var_count; v++)
            if (f->vars[v].kind == PPW_VAR_FIELD && strcmp(f->vars[v].name, name) == 0)
                add_receiver(a, caller, (int32_t)v, excl, true);
    }
}

/* Transfers the blamed exit variables of frame `from` (in callee) through
 * call c's bindings to the caller f's frame, whose entries are being built. */
static void transfer(struct attr *a, const struct ppw_static_func *f, struct fstate *caller,
                     const struct frame_blame *from, const struct ppw_static_call *c)
{
    const struct ppw_static_func *callee = &a->graph->funcs[from->func];
    const struct fstate *cs = &a->fs[from->func];
    for (size_t k = from->first; k < from->first + from->count; k++) {
        struct entry e = a->entries[k];
        const struct ppw_static_var *v = &callee->vars[e.var];
        bool written = (v->flags & PPW_VAR_EXIT_WRITTEN) || e.written;
        int32_t formal = -1;
        const char *path = "";
        if (v->kind == PPW_VAR_GLOBAL || v->kind == PPW_VAR_STATIC)
            continue; /* program-level: blamed where it is */
        if (c->kind == PPW_CALL_TASK) {
            if (!written)
                continue;
            path = v->name; /* a task's shareds bind by name */
        } else if (v->kind != PPW_VAR_RETURN) {
            int32_t root = cs->root[e.var];
            size_t len = root >= 0 ? strlen(callee->vars[root].name) : 0;
            if (root < 0 || !written || strncmp(v->name, callee->vars[root].name, len) != 0)
                continue;
            formal = callee->vars[root].param_index;
            path = v->name + len;
        }
        bool bound = false;
        for (size_t i = 0; i < c->binding_count; i++) {
            const struct ppw_static_binding *b = &c->bindings[i];
            bool by_return = b->mode == PPW_BIND_RETURN && formal == -1 && c->kind != PPW_CALL_TASK;
            bool by_arg = (b->mode == PPW_BIND_REF || b->mode == PPW_BIND_VALUE) &&
                          (formal >= 0 || c->kind == PPW_CALL_TASK);
            if (b->var < 0 || (!by_return && !by_arg) || strcmp(b->callee_path, path) != 0 ||
                (c->kind != PPW_CALL_TASK && b->formal != formal))
                continue;
            add_receiver(a, caller, b->var, e.excl, by_arg);
            bound = true;
        }
        if (!bound && path[0] && formal >= 0 && c->kind != PPW_CALL_TASK)
            bind_field(a, f, caller, c, formal, path, e.excl);
    }
}

/* Caller frame j: the call at its location into one of the frames below
 * (the nearest whose function the call names: a task's call names the task
 * body, below its runtime entry), and the transfer through it. */
static void blame_caller(struct attr *a, const struct ppw_blame_stack *st, size_t j)
{
    int32_t func = a->func_of[j];
    struct fstate *s = ppw_attr_fstate(a, func);
    const struct ppw_static_func *f = &a->graph->funcs[func];
    const struct ppw_static_call *c = NULL;
    size_t from = a->ndone;
    while (!c && from-- > 0) {
        const struct ppw_static_func *callee = &a->graph->funcs[a->done[from].func];
        c = ppw_attr_find_call(f, &st->frames[j], callee->linkage_name, callee->name, 0);
    }
    if (!s || !begin_frame(a, j, func))
        return;
    /* a global or static blamed below: one instance, which this frame reads */
    for (size_t i = 0; i < s->nglobals; i++) {
        struct ppw_strmap_entry *e = ppw_strmap_find(&a->globals, f->vars[s->globals[i]].key);
        if (e && a->slots[e->value].stamp_incl == a->serial)
            add_receiver(a, s, (int32_t)s->globals[i], false, false);
    }
    if (!c)
        return;
    transfer(a, f, s, &a->done[from], c);
    /* The caller's graph takes a call's result as computed from the memory
     * its pointer arguments point to; what the callee really returned from
     * is known here: a receiver of the return that the transfer left
     * unblamed stays so (seed 002 Figure 3.3: r holds foo's temp, not x). */
    for (size_t i = 0; i < c->binding_count; i++) {
        int32_t var = c->bindings[i].var;
        if (c->bindings[i].mode == PPW_BIND_RETURN && var >= 0 && s->mark[var] != a->frame_serial)
            s->held[var] = a->frame_serial;
    }
}

/* Fields blame their ancestors; what flows into the return value blames
 * <return>; what is computed from a receiver is blamed (the forward closure:
 * seed 002 §3.1, explicit transfer of the blame a call transferred), and so
 * is what is computed from that, its parents included.  The entries list
 * grows while it is walked. */
static void bubble(struct attr *a, struct frame_blame *fb)
{
    const struct ppw_static_func *f = &a->graph->funcs[fb->func];
    struct fstate *s = &a->fs[fb->func];
    for (size_t k = fb->first; k < a->nentries && !a->oom; k++) {
        struct entry e = a->entries[k];
        const struct ppw_static_var *v = &f->vars[e.var];
        if (v->parent >= 0)
            add_entry(a, s, v->parent, e.excl, e.written, e.receiver);
        const struct ppw_static_flow *flow = e.receiver ? s->flow_of[e.var] : NULL;
        for (size_t t = 0; flow && t < flow->target_count; t++)
            if (s->held[flow->targets[t]] != a->frame_serial)
                add_receiver(a, s, (int32_t)flow->targets[t], false, false);
        if ((v->flags & PPW_VAR_EXIT_RETURNED) && v->kind != PPW_VAR_RETURN && s->ret >= 0)
            add(a, s, s->ret, false, false);
    }
    fb->count = a->nentries - fb->first;
}

/* ---- result slots ---- */

static struct slot *new_slot(struct attr *a, int32_t func, uint32_t var, bool global)
{
    if (!ppw_array_reserve(&a->slots, &a->slots_cap, a->nslots + 1, sizeof *a->slots)) {
        a->oom = true;
        return NULL;
    }
    struct slot *slot = &a->slots[a->nslots++];
    *slot = (struct slot){.func = func, .var = var, .global = global};
    return slot;
}

struct slot *ppw_attr_slot(struct attr *a, int32_t func, uint32_t var)
{
    const struct ppw_static_var *v = &a->graph->funcs[func].vars[var];
    struct fstate *s = &a->fs[func];
    if (s->slot[var])
        return &a->slots[s->slot[var] - 1];
    if (program_level(v)) {
        bool added;
        struct ppw_strmap_entry *e = ppw_strmap_put(&a->globals, v->key, a->nslots, &added);
        if (!e || (added && !new_slot(a, func, var, true))) {
            a->oom = true;
            return NULL;
        }
        s->slot[var] = e->value + 1;
    } else {
        if (!new_slot(a, func, var, false))
            return NULL;
        s->slot[var] = a->nslots;
    }
    return &a->slots[s->slot[var] - 1];
}

static uint64_t ctx_hash(uint32_t slot, uint32_t node)
{
    uint64_t h = ((uint64_t)slot << 32 | node) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* Makes room for one more context in the (slot, node) index. */
static bool grow_ctx_table(struct attr *a)
{
    if ((a->nctx_refs + 1) * 2 <= a->ctx_table_cap)
        return true;
    size_t cap = a->ctx_table_cap ? a->ctx_table_cap * 2 : 1024;
    struct ctx_ref *table = calloc(cap, sizeof *table);
    if (!table)
        return false;
    for (size_t i = 0; i < a->ctx_table_cap; i++) {
        const struct ctx_ref *r = &a->ctx_table[i];
        if (!r->slot)
            continue;
        size_t k = (size_t)ctx_hash(r->slot, r->node) & (cap - 1);
        while (table[k].slot)
            k = (k + 1) & (cap - 1);
        table[k] = *r;
    }
    free(a->ctx_table);
    a->ctx_table = table;
    a->ctx_table_cap = cap;
    return true;
}

/* Adds samples to slot's count in context node, through a hash index:
 * a variable may be blamed in as many contexts as there are stacks. */
static void count_context(struct attr *a, struct slot *slot, uint32_t node, uint64_t samples)
{
    uint32_t id = (uint32_t)(slot - a->slots) + 1;
    if (!grow_ctx_table(a)) {
        a->oom = true;
        return;
    }
    size_t mask = a->ctx_table_cap - 1, k = (size_t)ctx_hash(id, node) & mask;
    for (; a->ctx_table[k].slot; k = (k + 1) & mask) {
        if (a->ctx_table[k].slot == id && a->ctx_table[k].node == node) {
            slot->ctx[a->ctx_table[k].at].samples += samples;
            return;
        }
    }
    if (!ppw_array_reserve(&slot->ctx, &slot->ctx_cap, slot->nctx + 1, sizeof *slot->ctx)) {
        a->oom = true;
        return;
    }
    a->ctx_table[k] = (struct ctx_ref){id, node, (uint32_t)slot->nctx};
    a->nctx_refs++;
    slot->ctx[slot->nctx++] = (struct ctx_count){node, samples};
}

static void charge(struct attr *a, const struct ppw_blame_stack *st, const struct frame_blame *fb)
{
    for (size_t k = fb->first; k < fb->first + fb->count && !a->oom; k++) {
        const struct entry *e = &a->entries[k];
        struct slot *slot = ppw_attr_slot(a, fb->func, e->var);
        if (!slot || slot->stamp_incl == a->serial)
            continue;
        slot->stamp_incl = a->serial;
        slot->incl += st->samples;
        slot->incl_w += st->weight;
        if (!slot->global)
            count_context(a, slot, a->ctx_of[fb->frame], st->samples);
        if (e->excl && a->stack_variable && a->stack_variable_frame != fb) {
            const struct ppw_static_func *f = &a->graph->funcs[fb->func];
            /* an outlined function's parameter stands for the parent's
             * variable, which the parent's frame names */
            if (a->outlined_params || !(f->flags & PPW_FUNC_OUTLINED) ||
                a->fs[fb->func].root[e->var] < 0) {
                *a->stack_variable = f->vars[e->var].name; /* outer frames come later */
                a->stack_variable_frame = fb;
            }
        }
        if (e->excl && slot->stamp_excl != a->serial) {
            slot->stamp_excl = a->serial;
            slot->excl += st->samples;
            slot->excl_w += st->weight;
        }
    }
}

/* ---- one stack ---- */

bool ppw_attr_stops(const struct attr *a, int32_t func)
{
    const struct ppw_static_func *f = &a->graph->funcs[func];
    if (a->blame_point)
        return ppw_static_func_matches(f, a->blame_point);
    return strcmp(f->name, "main") == 0;
}

static bool attribute_stack(struct attr *a, const struct ppw_blame_stack *st)
{
    size_t n = st->nframes, u = n;
    if (!ppw_array_reserve(&a->func_of, &a->func_of_cap, n, sizeof *a->func_of) ||
        !ppw_array_reserve(&a->ctx_of, &a->ctx_of_cap, n, sizeof *a->ctx_of)) {
        a->oom = true;
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t func = resolve(a, &st->frames[i]);
        a->func_of[i] = func >= 0 && is_user(&a->graph->funcs[func]) ? func : -1;
        if (u == n && a->func_of[i] >= 0)
            u = i;
    }
    if (u == n)
        return false; /* no frame of user code */
    a->serial++;
    a->nentries = a->ndone = 0;
    contexts(a, st);
    blame_leaf(a, st, u);
    for (size_t i = u; !a->oom;) {
        struct frame_blame *fb = &a->done[a->ndone - 1];
        bubble(a, fb);
        charge(a, st, fb);
        if (ppw_attr_stops(a, a->func_of[i]))
            break;
        do
            i++;
        while (i < n && a->func_of[i] < 0);
        if (i == n)
            break;
        blame_caller(a, st, i);
    }
    if (a->access && !a->oom)
        ppw_attr_access_stack(a, st, u);
    return true;
}

/* ---- results ---- */

static const char *kind_name(uint32_t kind)
{
    static const char *const names[] = {"?",      "local", "parameter", "global",
                                        "static", "field", "return"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

/* Whether node shows as its caller's node: two pieces of one construct. */
static bool same_frame(const struct attr *a, const struct ppw_names *names, uint32_t n)
{
    uint32_t p = a->nodes[n].parent;
    return p && ppw_names_same_frame(names, a->nodes[p].func, a->nodes[n].func);
}

/* "main > solve > step" for node, as names shows them, in the result's arena. */
static const char *context_text(const struct attr *a, const struct ppw_names *names, uint32_t node,
                                struct ppw_arena *arena)
{
    size_t len = 1;
    for (uint32_t n = node; n; n = a->nodes[n].parent)
        if (!same_frame(a, names, n))
            len += strlen(ppw_names_function(names, a->nodes[n].func)) + 3;
    char *text = ppw_arena_alloc(arena, len);
    if (!text)
        return NULL;
    char *end = text + len - 1;
    *end = '\0';
    for (uint32_t n = node; n; n = a->nodes[n].parent) {
        if (same_frame(a, names, n))
            continue;
        const char *name = ppw_names_function(names, a->nodes[n].func);
        size_t l = strlen(name);
        end -= l;
        memcpy(end, name, l);
        if (a->nodes[n].parent) {
            end -= 3;
            memcpy(end, " > ", 3);
        }
    }
    return end;
}

static int compare_vars(const void *x, const void *y)
{
    const struct ppw_blame_var *a = x, *b = y;
    if (a->inclusive != b->inclusive)
        return a->inclusive > b->inclusive ? -1 : 1;
    if (a->exclusive != b->exclusive)
        return a->exclusive > b->exclusive ? -1 : 1;
    int c = strcmp(a->function ? a->function : "", b->function ? b->function : "");
    if (c)
        return c;
    c = strcmp(a->name, b->name);
    if (c)
        return c;
    return strcmp(a->context ? a->context : "", b->context ? b->context : "");
}

static bool build_result(const struct attr *a, struct ppw_blame_result *r)
{
    struct ppw_names *names = NULL;
    struct ppw_err err;
    if (a->nslots && !(r->vars = ppw_arena_calloc(r->arena, a->nslots, sizeof *r->vars)))
        return false;
    if (a->nslots && ppw_names_new(a->graph, &names, &err) != 0)
        return false;
    for (size_t i = 0; i < a->nslots; i++) {
        const struct slot *slot = &a->slots[i];
        const struct ppw_static_func *f = &a->graph->funcs[slot->func];
        const struct ppw_static_var *v = &f->vars[slot->var];
        if (!a->outlined_params && (f->flags & PPW_FUNC_OUTLINED) &&
            a->fs[slot->func].root[slot->var] >= 0)
            continue; /* a shared variable of the parent, which is listed */
        struct ppw_blame_var *out = &r->vars[r->nvars++];
        *out = (struct ppw_blame_var){
            .name = v->name,
            .function = v->kind == PPW_VAR_GLOBAL ? NULL : ppw_names_source(names, slot->func),
            .function_key = v->kind == PPW_VAR_GLOBAL ? NULL : f->linkage_name,
            .kind = kind_name(v->kind),
            .type = v->type,
            .decl_file = v->decl_file[0] ? v->decl_file : f->file,
            .decl_line = v->decl_line,
            .inclusive = slot->incl,
            .exclusive = slot->excl,
            .inclusive_weight = slot->incl_w,
            .exclusive_weight = slot->excl_w,
            .access_read = slot->acc_read,
            .access_write = slot->acc_write,
            .access_read_weight = slot->acc_read_w,
            .access_write_weight = slot->acc_write_w,
        };
        const struct ctx_count *best = NULL;
        for (size_t k = 0; k < slot->nctx; k++)
            if (!best || slot->ctx[k].samples > best->samples)
                best = &slot->ctx[k];
        if (best && !(out->context = context_text(a, names, best->node, r->arena))) {
            ppw_names_free(names);
            return false;
        }
    }
    ppw_names_free(names);
    if (r->nvars)
        qsort(r->vars, r->nvars, sizeof *r->vars, compare_vars);
    return true;
}

static void attr_free(struct attr *a)
{
    for (size_t i = 0; a->fs && i < a->graph->func_count; i++)
        fstate_free(&a->fs[i]);
    free(a->fs);
    for (size_t i = 0; i < a->nlists; i++)
        free(a->lists[i].funcs);
    free(a->lists);
    ppw_strmap_free(&a->names);
    ppw_strmap_free(&a->globals);
    for (size_t i = 0; i < a->nslots; i++)
        free(a->slots[i].ctx);
    free(a->slots);
    free(a->nodes);
    free(a->node_table);
    free(a->ctx_table);
    free(a->func_of);
    free(a->ctx_of);
    free(a->entries);
    free(a->done);
    free(a->shares);
    free(a->moved);
}

static bool attr_init(struct attr *a)
{
    const struct ppw_static_graph *g = a->graph;
    if (!(a->fs = calloc(g->func_count ? g->func_count : 1, sizeof *a->fs)))
        return false;
    for (size_t i = 0; i < g->func_count; i++)
        if (!index_name(a, g->funcs[i].name, i) || !index_name(a, g->funcs[i].linkage_name, i))
            return false;
    a->nnodes = 1; /* node 0: the empty context */
    return ppw_array_reserve(&a->nodes, &a->nodes_cap, 1, sizeof *a->nodes);
}

void ppw_blame_result_free(struct ppw_blame_result *result)
{
    if (!result)
        return;
    ppw_arena_free(result->arena);
    free(result);
}

int ppw_blame_attribute(const struct ppw_static_graph *graph, const struct ppw_blame_stack *stacks,
                        size_t nstacks, const struct ppw_blame_options *options,
                        struct ppw_blame_result **out, struct ppw_err *err)
{
    struct attr a = {.graph = graph,
                     .blame_point = options ? options->blame_point : NULL,
                     .outlined_params = options && options->outlined_params,
                     .access = options && options->access};
    struct ppw_blame_result *r = calloc(1, sizeof *r);
    int rc = 0;
    *out = NULL;
    if (!r || !(r->arena = ppw_arena_new()) || !attr_init(&a)) {
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory attributing samples");
        goto out;
    }
    if (a.blame_point && !ppw_static_graph_find_func(graph, a.blame_point)) {
        rc = ppw_err_set(err, PPW_ENOTFOUND,
                         "blame point: no function named '%s' in the static graphs of %s",
                         a.blame_point, graph->path);
        goto out;
    }
    for (size_t i = 0; i < nstacks && !a.oom; i++) {
        r->total_samples += stacks[i].samples;
        r->total_weight += stacks[i].weight;
        if (options && options->stack_variable) {
            a.stack_variable = &options->stack_variable[i];
            a.stack_variable_frame = NULL;
            *a.stack_variable = NULL;
        }
        if (!attribute_stack(&a, &stacks[i]) && !a.oom)
            r->unattributed += stacks[i].samples;
    }
    r->access_samples = a.access_samples;
    r->access_weight = a.access_weight;
    r->access_data = true;
    for (size_t i = 0; i < graph->unit_count; i++)
        r->access_data &= graph->units[i].minor >= 1;
    if (a.oom || !build_result(&a, r))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory attributing samples");
out:
    attr_free(&a);
    if (rc)
        ppw_blame_result_free(r);
    else
        *out = r;
    return rc;
}

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

/* The function a frame is in: among several of that name (static functions
 * of different units), one with a graph whose file matches the frame's. */
static int32_t resolve_uncached(const struct attr *a, const struct ppw_blame_frame *frame)
{
    struct ppw_strmap_entry *e = ppw_strmap_find(&a->names, frame->function);
    if (!e)
        return -1;
    const struct name_list *list = &a->lists[e->value];
    if (list->count == 1)
        return (int32_t)list->funcs[0];
    int32_t best = (int32_t)list->funcs[0];
    int best_score = -1;
    for (size_t i = 0; i < list->count; i++) {
        const struct ppw_static_func *f = &a->graph->funcs[list->funcs[i]];
        int score = is_user(f) * 2 + ppw_names_same_file(f->file, frame->file);
        if (score > best_score)
            best = (int32_t)list->funcs[i], best_score = score;
    }
    return best;
}

/* resolve_uncached, remembered by the frame's name and file pointers (the
 * readers intern them: a stack's frames repeat across stacks). */
static int32_t resolve(struct attr *a, const struct ppw_blame_frame *frame)
{
    if (!frame->function)
        return -1;
    uint64_t h = ppw_attr_mix((uint64_t)(uintptr_t)frame->function ^
                              (uint64_t)(uintptr_t)frame->file << 1);
    struct resolved *r = &a->resolved[h & (RESOLVED_SLOTS - 1)];
    if (r->function != frame->function || r->file != frame->file) {
        *r = (struct resolved){frame->function, frame->file, resolve_uncached(a, frame)};
    }
    return r->func;
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
        s->nglobals += ppw_attr_program_level(&f->vars[v]);
    }
    s->flow_of = calloc(n, sizeof *s->flow_of);
    s->globals = calloc(s->nglobals ? s->nglobals : 1, sizeof *s->globals);
    if (!s->flow_of || !s->globals) {
        a->oom = true;
        return NULL;
    }
    if (!ppw_attr_datum_fstate(s, f) || !ppw_attr_effects_fstate(s, f)) {
        a->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < f->flow_count; i++)
        s->flow_of[f->flows[i].source] = &f->flows[i];
    s->nglobals = 0;
    s->global_slot = malloc(n * sizeof *s->global_slot);
    if (!s->global_slot) {
        a->oom = true;
        return NULL;
    }
    s->ready = true; /* ppw_attr_slot below needs it */
    for (size_t v = 0; v < f->var_count; v++) {
        s->global_slot[v] = -1;
        if (ppw_attr_program_level(&f->vars[v])) {
            s->globals[s->nglobals++] = (uint32_t)v;
            struct slot *slot = ppw_attr_slot(a, func, (uint32_t)v, "");
            if (!slot)
                return NULL;
            s->global_slot[v] = (int32_t)(slot - a->slots);
        }
    }
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
    free(s->global_slot);
    ppw_attr_datum_fstate_free(s);
    ppw_attr_effects_fstate_free(s);
    ppw_attr_access_free(s);
}

/* ---- calling contexts ---- */

static uint64_t node_hash(uint32_t parent, int32_t func)
{
    return ppw_attr_mix((uint64_t)parent << 32 | (uint32_t)func);
}

static bool grow_nodes(struct attr *a)
{
    if (!ppw_array_reserve(&a->nodes, &a->nodes_cap, a->nnodes + 1, sizeof *a->nodes))
        return false;
    if ((a->nnodes + 1) * 2 <= a->node_table_cap)
        return true;
    size_t cap = a->node_table_cap ? a->node_table_cap * 2 : 1024;
    struct node_ref *table = calloc(cap, sizeof *table);
    if (!table)
        return false;
    free(a->node_table);
    a->node_table = table;
    a->node_table_cap = cap;
    for (size_t i = 1; i < a->nnodes; i++) {
        size_t k = (size_t)node_hash(a->nodes[i].parent, a->nodes[i].func) & (cap - 1);
        while (table[k].id)
            k = (k + 1) & (cap - 1);
        table[k] = (struct node_ref){a->nodes[i].parent, a->nodes[i].func, (uint32_t)i + 1};
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
    for (; a->node_table[k].id; k = (k + 1) & mask)
        if (a->node_table[k].parent == parent && a->node_table[k].func == func)
            return a->node_table[k].id - 1;
    a->nodes[a->nnodes] = (struct ctx_node){parent, func, NULL};
    a->node_table[k] = (struct node_ref){parent, func, (uint32_t)++a->nnodes};
    return (uint32_t)(a->nnodes - 1);
}

/* The context of every user frame: the path of user functions from the
 * outermost main (or the outermost frame) down to it. */
static void contexts(struct attr *a, const struct ppw_blame_stack *st)
{
    size_t top = st->nframes - 1;
    for (size_t i = st->nframes; i-- > 0;) {
        if (a->func_of[i] >= 0 && a->is_main[a->func_of[i]]) {
            top = i;
            break;
        }
    }
    if (!ppw_array_reserve(&a->prev_ctx_func, &a->prev_ctx_func_cap, st->nframes,
                           sizeof *a->prev_ctx_func) ||
        !ppw_array_reserve(&a->prev_ctx_node, &a->prev_ctx_node_cap, st->nframes,
                           sizeof *a->prev_ctx_node)) {
        a->oom = true;
        return;
    }
    uint32_t node = 0;
    size_t depth = 0;
    bool shared = true; /* the callers so far are the previous stack's */
    for (size_t i = st->nframes; i-- > 0;) {
        if (i <= top && a->func_of[i] >= 0) {
            if (shared && depth < a->prev_ctx_len && a->prev_ctx_func[depth] == a->func_of[i]) {
                node = a->prev_ctx_node[depth];
            } else {
                shared = false;
                node = child_node(a, node, a->func_of[i]);
                a->prev_ctx_func[depth] = a->func_of[i];
                a->prev_ctx_node[depth] = node;
            }
            depth++;
        }
        a->ctx_of[i] = i <= top ? node : 0;
    }
    a->prev_ctx_len = depth;
}

/* ---- blame within a frame ---- */

/* Notes that this stack blamed the global of slot id: its callers' frames
 * read its one instance. */
static void note_stack_global(struct attr *a, int32_t id)
{
    struct slot *slot = &a->slots[id];
    if (slot->listed == a->serial)
        return;
    if (!ppw_array_reserve(&a->stack_globals, &a->stack_globals_cap, a->nstack_globals + 1,
                           sizeof *a->stack_globals)) {
        a->oom = true;
        return;
    }
    slot->listed = a->serial;
    a->stack_globals[a->nstack_globals++] = id;
    uint64_t h = ((uint64_t)id + 1) * 0x9e3779b97f4a7c15ull;
    a->globals_sig ^= h ^ (h >> 29);
}

static void add_entry(struct attr *a, struct fstate *s, int32_t var, bool excl, bool written,
                      bool receiver, bool via_field)
{
    if (s->mark[var] == a->frame_serial) {
        struct entry *e = &a->entries[s->pos[var]];
        e->excl |= excl;
        e->written |= written;
        e->receiver |= receiver;
        e->via_field &= via_field;
        return;
    }
    if (!ppw_array_reserve(&a->entries, &a->entries_cap, a->nentries + 1, sizeof *a->entries)) {
        a->oom = true;
        return;
    }
    s->mark[var] = a->frame_serial;
    s->pos[var] = (uint32_t)a->nentries;
    a->entries[a->nentries++] =
        (struct entry){(uint32_t)var, excl, written, receiver, via_field};
    if (s->global_slot[var] >= 0)
        note_stack_global(a, s->global_slot[var]);
}

static void add(struct attr *a, struct fstate *s, int32_t var, bool excl, bool written)
{
    add_entry(a, s, var, excl, written, false, false);
}

/* A variable that receives blame from a call (bound to a callee's blamed
 * exit variable, or written by a library): what the frame computes from it
 * is blamed too (bubble). */
static void add_receiver(struct attr *a, struct fstate *s, int32_t var, bool excl, bool written)
{
    add_entry(a, s, var, excl, written, true, false);
}

static bool loc_matches(const struct loc_ref *l, const struct ppw_blame_frame *at)
{
    return (at->col == 0 || l->col == 0 || l->col == at->col) &&
           ppw_names_same_file(l->file, at->file);
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
        if (s->mark[var] == a->frame_serial && ppw_names_same_file(s->excl[i].file, at->file))
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

/* Starts the entries of chain frame k. */
static struct frame_blame *begin_frame(struct attr *a, size_t k)
{
    a->frame_serial++;
    struct frame_blame *fb = &a->done[k];
    fb->first = a->nentries;
    fb->count = 0;
    fb->replayed = false;
    return fb;
}

/* The leaf user frame u: its location is the sample's (u == 0) or the call
 * into code without a graph, which also blames the library's written
 * arguments (ppw/libcalls.h, as the pass recorded them in the call). */
static void blame_leaf(struct attr *a, const struct ppw_blame_stack *st, size_t u)
{
    int32_t func = a->func_of[u];
    struct fstate *s = ppw_attr_fstate(a, func);
    if (!s)
        return;
    begin_frame(a, 0);
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

static uint64_t transfer_hash(const struct ppw_static_call *c, uint32_t var)
{
    return ppw_attr_mix((uint64_t)(uintptr_t)c ^ (uint64_t)var << 48);
}

static bool push_target(struct attr *a, int32_t var, bool by_arg)
{
    if (!ppw_array_reserve(&a->targets, &a->targets_cap, a->ntargets + 1, sizeof *a->targets))
        return false;
    a->targets[a->ntargets++] = (struct transfer_target){var, by_arg};
    return true;
}

/* The caller variables callee variable var's blame goes to at call c: the
 * bindings of its parameter at its path (or its return value's
 * receivers), else the caller's field of that path under the variable
 * bound to the parameter itself, if the caller names it (g.cells[].energy
 * for &g, p->cells[].energy for p).  Static per call: memoized. */
static const struct transfer_memo *transfer_targets(struct attr *a, const struct ppw_static_func *f,
                                                    struct fstate *caller,
                                                    const struct ppw_static_func *callee,
                                                    const struct fstate *cs,
                                                    const struct ppw_static_call *c, uint32_t var)
{
    if ((a->ntransfers + 1) * 2 > a->transfers_cap) {
        size_t cap = a->transfers_cap ? a->transfers_cap * 2 : 1024;
        struct transfer_memo *table = calloc(cap, sizeof *table);
        if (!table) {
            a->oom = true;
            return NULL;
        }
        for (size_t i = 0; i < a->transfers_cap; i++) {
            const struct transfer_memo *m = &a->transfers[i];
            if (!m->call)
                continue;
            size_t k = (size_t)transfer_hash(m->call, m->var) & (cap - 1);
            while (table[k].call)
                k = (k + 1) & (cap - 1);
            table[k] = *m;
        }
        free(a->transfers);
        a->transfers = table;
        a->transfers_cap = cap;
    }
    size_t mask = a->transfers_cap - 1;
    size_t k = (size_t)transfer_hash(c, var) & mask;
    for (; a->transfers[k].call; k = (k + 1) & mask)
        if (a->transfers[k].call == c && a->transfers[k].var == var)
            return &a->transfers[k];
    struct transfer_memo m = {c, var, (uint32_t)a->ntargets, 0};
    const struct ppw_static_var *v = &callee->vars[var];
    int32_t formal = -1;
    const char *path = "";
    bool ok = true;
    if (c->kind == PPW_CALL_TASK) {
        path = v->name; /* a task's shareds bind by name */
    } else if (v->kind != PPW_VAR_RETURN) {
        int32_t root = cs->root[var];
        size_t len = root >= 0 ? strlen(callee->vars[root].name) : 0;
        if (root >= 0 && strncmp(v->name, callee->vars[root].name, len) == 0) {
            formal = callee->vars[root].param_index;
            path = v->name + len;
        } else {
            path = NULL; /* a local of the callee: no binding */
        }
    }
    for (size_t i = 0; path && i < c->binding_count && ok; i++) {
        const struct ppw_static_binding *b = &c->bindings[i];
        bool by_return = b->mode == PPW_BIND_RETURN && formal == -1 && c->kind != PPW_CALL_TASK;
        bool by_arg = (b->mode == PPW_BIND_REF || b->mode == PPW_BIND_VALUE) &&
                      (formal >= 0 || c->kind == PPW_CALL_TASK);
        if (b->var < 0 || (!by_return && !by_arg) || strcmp(b->callee_path, path) != 0 ||
            (c->kind != PPW_CALL_TASK && b->formal != formal))
            continue;
        ok = push_target(a, b->var, by_arg);
    }
    if (ok && path && a->ntargets == m.first && path[0] && formal >= 0 &&
        c->kind != PPW_CALL_TASK) {
        for (size_t i = 0; i < c->binding_count && ok; i++) {
            const struct ppw_static_binding *b = &c->bindings[i];
            if (b->var < 0 || b->formal != formal || b->callee_path[0] ||
                (b->mode != PPW_BIND_REF && b->mode != PPW_BIND_VALUE))
                continue;
            const char *join, *tail;
            char name[600];
            ppw_attr_field_join(&f->vars[b->var], b->mode, path, &join, &tail);
            int len = snprintf(name, sizeof name, "%s%s%s", f->vars[b->var].name, join, tail);
            int32_t field = len > 0 && (size_t)len < sizeof name
                                ? ppw_attr_var_named(a, caller, f, name)
                                : -1;
            if (field >= 0 && f->vars[field].kind == PPW_VAR_FIELD)
                ok = push_target(a, field, true);
        }
    }
    if (!ok) {
        a->oom = true;
        return NULL;
    }
    m.count = (uint32_t)(a->ntargets - m.first);
    a->transfers[k] = m;
    a->ntransfers++;
    return &a->transfers[k];
}

/* Transfers the blamed exit variables of frame `from` (in callee) through
 * call c's bindings to the caller f's frame, whose entries are being built. */
static void transfer(struct attr *a, const struct ppw_static_func *f, struct fstate *caller,
                     const struct frame_blame *from, const struct ppw_static_call *c)
{
    const struct ppw_static_func *callee = &a->graph->funcs[from->func];
    const struct fstate *cs = &a->fs[from->func];
    for (size_t k = 0; k < from->count && !a->oom; k++) {
        /* read anew each time: add_entry may move attr.entries */
        struct entry e = ppw_attr_frame_entries(a, from)[k];
        const struct ppw_static_var *v = &callee->vars[e.var];
        bool written = (v->flags & PPW_VAR_EXIT_WRITTEN) || e.written;
        if (ppw_attr_program_level(v))
            continue; /* program-level: blamed where it is */
        if (v->kind != PPW_VAR_RETURN && !written)
            continue; /* only what the callee writes transfers */
        const struct transfer_memo *m = transfer_targets(a, f, caller, callee, cs, c, e.var);
        for (uint32_t i = 0; m && i < m->count; i++) {
            const struct transfer_target *t = &a->targets[m->first + i];
            /* A parent blamed through its field blames the caller's actual,
             * but what the caller computes from the actual's other fields
             * (a solver's timers beside its grids) is not computed from
             * the blamed field. */
            add_entry(a, caller, t->var, e.excl, t->by_arg, !e.via_field, false);
        }
    }
}

/* Whether var is written where control can go after call c (all are,
 * without a call, or in a graph older than format 1.2). */
static bool written_after(const struct ppw_static_func *f, const struct ppw_static_call *c,
                          uint32_t var)
{
    if (!c || !f->has_flow)
        return true;
    size_t lo = 0, hi = c->written_after_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->written_after[mid] < var)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->written_after_count && c->written_after[lo] == var;
}

/* What another call of the frame being closed writes from blamed data:
 * blamed too, when written after the stack's call (a global always: its
 * one instance is what the program reads next). */
static void on_effect(struct attr *a, int32_t func, int32_t caller_var, int32_t global_slot)
{
    const struct ppw_static_func *f = &a->graph->funcs[func];
    struct fstate *s = &a->fs[func];
    const struct frame_blame *fb = a->effect_frame;
    if (caller_var >= 0) {
        if (written_after(f, fb ? fb->call : NULL, (uint32_t)caller_var))
            add_receiver(a, s, caller_var, false, true);
        return;
    }
    bool listed = a->slots[global_slot].listed == a->serial;
    note_stack_global(a, global_slot);
    for (size_t i = 0; i < s->nglobals; i++)
        if (s->global_slot[s->globals[i]] == global_slot)
            add_receiver(a, s, (int32_t)s->globals[i], false, false);
    if (!listed) /* its calls may carry it further */
        ppw_attr_global_effects(a, func, global_slot, fb ? fb->call : NULL, on_effect);
}

/* Chain frame k above the leaf: the globals blamed below, and the transfer
 * through its call into the frame it called. */
static void blame_caller(struct attr *a, size_t k)
{
    struct frame_blame *fb = begin_frame(a, k);
    int32_t func = fb->func;
    struct fstate *s = ppw_attr_fstate(a, func);
    const struct ppw_static_func *f = &a->graph->funcs[func];
    if (!s)
        return;
    const struct ppw_static_call *c = fb->call;
    a->effect_frame = fb;
    /* a global or static blamed below: one instance, which this frame reads,
     * and which its other calls may read */
    for (size_t i = 0; i < s->nglobals; i++)
        if (a->slots[s->global_slot[s->globals[i]]].listed == a->serial)
            add_receiver(a, s, (int32_t)s->globals[i], false, false);
    for (size_t i = 0, n = a->nstack_globals; i < n && !a->oom; i++)
        ppw_attr_global_effects(a, func, a->stack_globals[i], c, on_effect);
    if (!c)
        return;
    transfer(a, f, s, &a->done[fb->from], c);
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
            add_entry(a, s, v->parent, e.excl, e.written, false, true);
        const struct ppw_static_flow *flow = e.receiver ? s->flow_of[e.var] : NULL;
        for (size_t t = 0; flow && t < flow->target_count; t++)
            if (s->held[flow->targets[t]] != a->frame_serial &&
                written_after(f, fb->call, flow->targets[t]))
                add_receiver(a, s, (int32_t)flow->targets[t], false, false);
        if (e.receiver || fb == &a->done[0]) { /* and through the frame's other calls */
            a->effect_frame = fb;
            ppw_attr_var_effects(a, fb->func, e.var, fb->call, on_effect);
        }
        if ((v->flags & PPW_VAR_EXIT_RETURNED) && v->kind != PPW_VAR_RETURN && s->ret >= 0)
            add(a, s, s->ret, false, false);
    }
    fb->count = a->nentries - fb->first;
}

/* ---- result slots ---- */

static uint64_t ctx_hash(uint32_t slot, uint32_t node)
{
    return ppw_attr_mix((uint64_t)slot << 32 | node);
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
    if (!slot->path[0] && node && a->nodes[node].func == slot->func) {
        /* a variable in its own function's context: a direct count */
        struct ctx_node *n = &a->nodes[node];
        if (!n->counts) {
            size_t vars = a->graph->funcs[slot->func].var_count;
            if (!(n->counts = calloc(vars ? vars : 1, sizeof *n->counts))) {
                a->oom = true;
                return;
            }
        }
        n->counts[slot->var] += samples;
        return;
    }
    if (slot->nctx && slot->ctx[slot->last_ctx].node == node) {
        slot->ctx[slot->last_ctx].samples += samples; /* as the stack before */
        return;
    }
    uint32_t id = (uint32_t)(slot - a->slots) + 1;
    if (!grow_ctx_table(a)) {
        a->oom = true;
        return;
    }
    size_t mask = a->ctx_table_cap - 1, k = (size_t)ctx_hash(id, node) & mask;
    for (; a->ctx_table[k].slot; k = (k + 1) & mask) {
        if (a->ctx_table[k].slot == id && a->ctx_table[k].node == node) {
            slot->ctx[a->ctx_table[k].at].samples += samples;
            slot->last_ctx = a->ctx_table[k].at;
            return;
        }
    }
    if (!ppw_array_reserve(&slot->ctx, &slot->ctx_cap, slot->nctx + 1, sizeof *slot->ctx)) {
        a->oom = true;
        return;
    }
    a->ctx_table[k] = (struct ctx_ref){id, node, (uint32_t)slot->nctx};
    a->nctx_refs++;
    slot->last_ctx = (uint32_t)slot->nctx;
    slot->ctx[slot->nctx++] = (struct ctx_count){node, samples};
}

/* Whether chain frame fb's <return> is received by a variable of its
 * caller, which then holds its blame (the result is not a datum apart). */
static bool return_received(const struct attr *a, const struct frame_blame *fb)
{
    const struct ppw_static_call *c = fb->up >= 0 ? a->done[fb->up].call : NULL;
    for (size_t i = 0; c && i < c->binding_count; i++)
        if (c->bindings[i].mode == PPW_BIND_RETURN && c->bindings[i].var >= 0)
            return true;
    return false;
}

/* Whether chain frame k's function is code the compiler made of frame
 * k + 1's source function (an OpenMP body, a task and its entry). */
static bool outlined_from_next(const struct attr *a, size_t k)
{
    const struct ppw_static_call *c = a->done[k + 1].call;
    return (c && (c->kind == PPW_CALL_FORK || c->kind == PPW_CALL_TASK)) ||
           ppw_names_compiler_made(&a->graph->funcs[a->done[k].func]);
}

/* The first chain frame of the outermost frame's source function: the
 * blame point (main, a thread's root) with the bodies outlined from it. */
static size_t outer_run(const struct attr *a)
{
    size_t k = a->ndone ? a->ndone - 1 : 0;
    while (k > 0 && outlined_from_next(a, k - 1))
        k--;
    return k;
}

/* Counts chain frame k's entries on their datums, each datum once per
 * stack however many frames and names blame it. */
static void charge(struct attr *a, const struct ppw_blame_stack *st, size_t k)
{
    const struct frame_blame *fb = &a->done[k];
    const struct ppw_static_func *f = &a->graph->funcs[fb->func];
    int received = -1; /* not looked up yet */
    /* A memoized closure's variables that are the frame's own resolve to
     * the same slot in every stack (not in a task, whose variables may be
     * its creator's): kept beside the closure. */
    uint32_t *own_slot = NULL;
    if (fb->closed && (fb->up < 0 || a->done[fb->up].call->kind != PPW_CALL_TASK)) {
        const struct closed_frame *c = &a->closed[fb->closed - 1];
        own_slot = &a->closed_slots[c->first + c->nstart];
    }
    const struct entry *entries = ppw_attr_frame_entries(a, fb);
    for (size_t i = 0; i < fb->count && !a->oom; i++) {
        const struct entry *e = &entries[i];
        struct slot *slot;
        size_t where = k;
        if (own_slot && own_slot[i]) {
            slot = &a->slots[own_slot[i] - 1];
        } else {
            const struct ppw_static_var *v = &f->vars[e->var];
            if (v->kind == PPW_VAR_RETURN) {
                if (received < 0)
                    received = return_received(a, fb);
                if (received)
                    continue;
            }
            if (!(slot = ppw_attr_datum(a, k, e->var, &where)))
                continue;
            if (own_slot && where == k && v->kind != PPW_VAR_RETURN &&
                a->fs[fb->func].dv[a->fs[fb->func].dv[e->var].copy_of].root < 0)
                own_slot[i] = (uint32_t)(slot - a->slots) + 1;
        }
        if (e->excl && a->stack_variable && a->stack_variable_frame != fb) {
            *a->stack_variable = slot->name; /* outer frames come later */
            a->stack_variable_frame = fb;
        }
        slot->outermost |= where >= a->outer_run;
        if (slot->stamp_incl != a->serial) {
            slot->stamp_incl = a->serial;
            slot->incl += st->samples;
            slot->incl_w += st->weight;
            if (!slot->global)
                count_context(a, slot, a->ctx_of[a->done[where].frame], st->samples);
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

/* The parallel runtime's code (OpenMP, MPI and their transports), by the
 * names its frames have without a graph. */
static bool runtime_frame(const struct ppw_blame_frame *frame)
{
    static const char *const prefixes[] = {
        "__kmp",  "kmp_",   "__ompt", "omp_",  "GOMP_", "MPI_",   "PMPI_",  "ompi_",
        "opal_",  "mca_",   "ucp_",   "uct_",  "ucs_",  "pmix",   "PMIx",   "sched_yield",
        "[libomp", "[libgomp", "[libmpi", "[libopen-", "[libuc", "[libpmix", "pthread_barrier",
        "pthread_cond", "__futex", "futex", "__sched_yield", "pthread_spin",
    };
    const char *name = frame->function;
    for (size_t i = 0; name && i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* Why stack st, whose leaf user frame is u (n: none), charged nothing. */
static enum ppw_blame_cause cause_of(const struct ppw_blame_stack *st, size_t u)
{
    if (u == st->nframes) {
        for (size_t i = 0; i < st->nframes; i++)
            if (runtime_frame(&st->frames[i]))
                return PPW_CAUSE_RUNTIME;
        return PPW_CAUSE_NO_GRAPH;
    }
    for (size_t i = 0; i < u; i++)
        if (runtime_frame(&st->frames[i]))
            return PPW_CAUSE_RUNTIME;
    if (st->frames[u].line == 0)
        return PPW_CAUSE_LINE0;
    return u > 0 ? PPW_CAUSE_NO_GRAPH : PPW_CAUSE_NO_VARIABLE;
}

/* ---- closed frames, memoized ----
 *
 * A frame's closed entries (bubble: parents, the forward closure, the
 * effects of its other calls) depend only on its function, its call, the
 * entries it starts with and the globals the stack blamed below: stacks
 * that share them (most do) reuse the first one's result. */

static uint64_t frame_key_hash(int32_t func, const struct ppw_static_call *c, const struct entry *e,
                               size_t n, uint64_t globals_sig, size_t nglobals)
{
    uint64_t h = ((uint64_t)(uint32_t)func * 0x9e3779b97f4a7c15ull) ^ (uint64_t)(uintptr_t)c ^
                 globals_sig ^ ((uint64_t)nglobals << 48);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)e[i].var << 4 | (uint64_t)e[i].via_field << 3 |
                     (uint64_t)e[i].excl << 2 | (uint64_t)e[i].written << 1 |
                     (uint64_t)e[i].receiver;
        h = (h ^ x) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h | 1; /* 0 marks an empty slot */
}

static bool same_entries(const struct entry *x, const struct entry *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i].var != y[i].var || x[i].excl != y[i].excl || x[i].written != y[i].written ||
            x[i].receiver != y[i].receiver || x[i].via_field != y[i].via_field)
            return false;
    return true;
}

/* The memoized closure of frame fb, whose starting entries are
 * entries[fb->first, nentries); NULL when none yet. */
static const struct closed_frame *closed_find(const struct attr *a, const struct frame_blame *fb,
                                              uint64_t hash)
{
    if (!a->closed_cap)
        return NULL;
    size_t n = a->nentries - fb->first, mask = a->closed_cap - 1;
    for (size_t k = (size_t)(hash >> 7) & mask; a->closed_table[k]; k = (k + 1) & mask) {
        const struct closed_frame *c = &a->closed[a->closed_table[k] - 1];
        if (c->hash == hash && c->func == fb->func && c->call == fb->call && c->nstart == n &&
            c->leaf == (fb == &a->done[0]) &&
            c->globals_sig == a->globals_sig && c->nglobals_before == a->nstack_globals &&
            same_entries(&a->closed_entries[c->first], &a->entries[fb->first], n))
            return c;
    }
    return NULL;
}

/* Remembers frame fb's closure: it started with start entries and
 * globals_before globals, and is now closed. */
static void closed_remember(struct attr *a, const struct frame_blame *fb, uint64_t hash,
                            size_t start, size_t globals_before, uint64_t sig_before)
{
    size_t total = a->nentries - fb->first, added = a->nstack_globals - globals_before;
    if (!ppw_array_reserve(&a->closed_entries, &a->closed_entries_cap,
                           a->nclosed_entries + start + total, sizeof *a->closed_entries) ||
        !ppw_array_reserve(&a->closed_slots, &a->closed_slots_cap,
                           a->nclosed_entries + start + total, sizeof *a->closed_slots) ||
        !ppw_array_reserve(&a->closed_globals, &a->closed_globals_cap,
                           a->nclosed_globals + added, sizeof *a->closed_globals) ||
        !ppw_array_reserve(&a->closed, &a->closed_cap_items, a->nclosed + 1, sizeof *a->closed)) {
        a->oom = true;
        return;
    }
    if ((a->nclosed + 1) * 2 > a->closed_cap) {
        size_t cap = a->closed_cap ? a->closed_cap * 2 : 4096;
        uint32_t *table = calloc(cap, sizeof *table);
        if (!table) {
            a->oom = true;
            return;
        }
        for (size_t i = 0; i < a->nclosed; i++) {
            size_t k = (size_t)(a->closed[i].hash >> 7) & (cap - 1);
            while (table[k])
                k = (k + 1) & (cap - 1);
            table[k] = (uint32_t)i + 1;
        }
        free(a->closed_table);
        a->closed_table = table;
        a->closed_cap = cap;
    }
    struct closed_frame *c = &a->closed[a->nclosed];
    *c = (struct closed_frame){.hash = hash,
                               .func = fb->func,
                               .leaf = fb == &a->done[0],
                               .call = fb->call,
                               .globals_sig = sig_before,
                               .nglobals_before = globals_before,
                               .first = a->nclosed_entries,
                               .nstart = start,
                               .ntotal = total,
                               .gfirst = a->nclosed_globals,
                               .gcount = added};
    /* the starting entries (the key), then the closed ones */
    if (start)
        memcpy(&a->closed_entries[a->nclosed_entries], a->start_copy,
               start * sizeof *a->start_copy);
    if (total)
        memcpy(&a->closed_entries[a->nclosed_entries + start], &a->entries[fb->first],
               total * sizeof *a->entries);
    memset(&a->closed_slots[a->nclosed_entries], 0, (start + total) * sizeof *a->closed_slots);
    a->nclosed_entries += start + total;
    if (added)
        memcpy(&a->closed_globals[a->nclosed_globals], &a->stack_globals[globals_before],
               added * sizeof *a->stack_globals);
    a->nclosed_globals += added;
    size_t mask = a->closed_cap - 1, k = (size_t)(hash >> 7) & mask;
    while (a->closed_table[k])
        k = (k + 1) & mask;
    a->closed_table[k] = (uint32_t)++a->nclosed;
}

/* Makes frame fb's entries those of memoized closure c, where they are:
 * the entries it started with are dropped. */
static void replay_closed(struct attr *a, struct frame_blame *fb, const struct closed_frame *c)
{
    a->nentries = fb->first;
    fb->count = c->ntotal;
    fb->closed = (uint32_t)(c - a->closed) + 1;
    fb->replayed = true;
    for (size_t i = 0; i < c->gcount; i++)
        note_stack_global(a, a->closed_globals[c->gfirst + i]);
}

/* Closes frame fb (bubble), or replays a stack's earlier closure of it. */
static void close_frame(struct attr *a, struct frame_blame *fb)
{
    size_t start = a->nentries - fb->first;
    uint64_t hash = frame_key_hash(fb->func, fb->call, &a->entries[fb->first], start,
                                   a->globals_sig, a->nstack_globals) ^
                    (fb == &a->done[0] ? 2 : 0);
    const struct closed_frame *c = closed_find(a, fb, hash);
    if (c) {
        replay_closed(a, fb, c);
        return;
    }
    fb->closed = 0;
    if (!ppw_array_reserve(&a->start_copy, &a->start_copy_cap, start ? start : 1,
                           sizeof *a->start_copy)) {
        a->oom = true;
        return;
    }
    if (start)
        memcpy(a->start_copy, &a->entries[fb->first], start * sizeof *a->entries);
    size_t globals_before = a->nstack_globals;
    uint64_t sig_before = a->globals_sig;
    bubble(a, fb);
    if (!a->oom && !a->stack_variable) {
        closed_remember(a, fb, hash, start, globals_before, sig_before);
        if (!a->oom)
            fb->closed = (uint32_t)a->nclosed;
    }
}

/* ---- caller frames, memoized ----
 *
 * With no global blamed below it, what a caller frame starts from is the
 * transfer of the closure of the frame it called through its call: so
 * (that closure, the call) names its own closure, and stacks that share
 * them (most do) skip the transfer and the closure lookup. */

static uint64_t frame_step_hash(uint32_t from_closed, const struct ppw_static_call *call)
{
    return ppw_attr_mix((uint64_t)from_closed << 40 ^ (uint64_t)(uintptr_t)call);
}

/* The entry of (from_closed, call), or the empty one where it goes; NULL
 * when out of memory. */
static struct frame_step *frame_step_find(struct attr *a, uint32_t from_closed,
                                          const struct ppw_static_call *call)
{
    if ((a->nframe_steps + 1) * 2 > a->frame_steps_cap) {
        size_t cap = a->frame_steps_cap ? a->frame_steps_cap * 2 : 4096;
        struct frame_step *table = calloc(cap, sizeof *table);
        if (!table) {
            a->oom = true;
            return NULL;
        }
        for (size_t i = 0; i < a->frame_steps_cap; i++) {
            const struct frame_step *old = &a->frame_steps[i];
            if (!old->from_closed)
                continue;
            size_t k = (size_t)frame_step_hash(old->from_closed, old->call) & (cap - 1);
            while (table[k].from_closed)
                k = (k + 1) & (cap - 1);
            table[k] = *old;
        }
        free(a->frame_steps);
        a->frame_steps = table;
        a->frame_steps_cap = cap;
    }
    size_t mask = a->frame_steps_cap - 1, k = (size_t)frame_step_hash(from_closed, call) & mask;
    for (; a->frame_steps[k].from_closed; k = (k + 1) & mask)
        if (a->frame_steps[k].from_closed == from_closed && a->frame_steps[k].call == call)
            return &a->frame_steps[k];
    return &a->frame_steps[k];
}

/* Chain frame k above the leaf: blame through its call, then close it;
 * replayed when memoized. */
static void blame_and_close_caller(struct attr *a, size_t k)
{
    const struct frame_blame *fb = &a->done[k];
    uint32_t from_closed = fb->from >= 0 ? a->done[fb->from].closed : 0;
    bool memo = from_closed && fb->call && !a->nstack_globals && !a->stack_variable;
    if (memo) {
        struct frame_step *step = frame_step_find(a, from_closed, fb->call);
        if (!step)
            return;
        if (step->from_closed) {
            replay_closed(a, begin_frame(a, k), &a->closed[step->closed - 1]);
            return;
        }
    }
    blame_caller(a, k);
    close_frame(a, &a->done[k]);
    if (memo && a->done[k].closed && !a->oom) {
        struct frame_step *step = frame_step_find(a, from_closed, fb->call);
        if (!step)
            return;
        *step = (struct frame_step){from_closed, fb->call, a->done[k].closed};
        a->nframe_steps++;
    }
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
    if (u == n) { /* no frame of user code */
        enum ppw_blame_cause why = cause_of(st, n);
        a->unblamed[why] += st->samples;
        a->unaccessed[why] += (double)st->samples;
        return false;
    }
    a->serial++;
    a->nentries = 0;
    a->nstack_globals = 0;
    a->globals_sig = 0;
    a->effect_frame = NULL;
    contexts(a, st);
    if (!ppw_attr_chain(a, st, u))
        return true;
    blame_leaf(a, st, u);
    close_frame(a, &a->done[0]);
    for (size_t k = 1; k < a->ndone && !a->oom; k++)
        blame_and_close_caller(a, k);
    a->outer_run = outer_run(a);
    for (size_t k = 0; k < a->ndone && !a->oom; k++)
        charge(a, st, k);
    /* globals blamed through calls of frames that do not name them */
    for (size_t i = 0; i < a->nstack_globals && !a->oom; i++) {
        struct slot *slot = &a->slots[a->stack_globals[i]];
        if (slot->stamp_incl != a->serial) {
            slot->stamp_incl = a->serial;
            slot->incl += st->samples;
            slot->incl_w += st->weight;
        }
    }
    bool blamed = a->nstack_globals > 0;
    for (size_t k = 0; k < a->ndone && !blamed; k++)
        blamed = a->done[k].count > 0;
    enum ppw_blame_cause why = cause_of(st, u);
    if (!blamed)
        a->unblamed[why] += st->samples;
    if (a->access && !a->oom) {
        double before = a->access_samples;
        ppw_attr_access_stack(a, st, u);
        double share = 1.0 - (a->access_samples - before) / (double)(st->samples ? st->samples : 1);
        if (share > 1e-9)
            a->unaccessed[why] += share * (double)st->samples;
    }
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

/* A variable's declaration line.  A compiler-made copy (an OpenMP loop
 * variable, a task's copy) has none of its own: its construct's, else, in
 * code the compiler made without a line (a taskloop's task), the first
 * line of the variable's blame set. */
static uint32_t decl_line(const struct ppw_static_func *f, const struct ppw_static_var *v)
{
    if (v->decl_line)
        return v->decl_line;
    if (f->line)
        return f->line;
    uint32_t first = 0;
    for (size_t i = 0; i < v->inclusive_count; i++)
        if (v->inclusive[i].line && (!first || v->inclusive[i].line < first))
            first = v->inclusive[i].line;
    return first;
}

/* A copy of s in the result's arena: names' strings die with names. */
static const char *keep(struct ppw_arena *arena, const char *s)
{
    if (!s)
        return NULL;
    size_t len = strlen(s) + 1;
    char *copy = ppw_arena_alloc(arena, len);
    if (copy)
        memcpy(copy, s, len);
    return copy;
}

/* "work() result": a return value no caller receives. */
static const char *result_name(const char *function, struct ppw_arena *arena)
{
    size_t len = strlen(function) + sizeof "() result";
    char *name = ppw_arena_alloc(arena, len);
    if (name)
        snprintf(name, len, "%s() result", function);
    return name;
}

/* Each slot's context with the most samples: the direct counts of the
 * contexts of its function, then the ones counted by slot. */
static void best_contexts(const struct attr *a, uint32_t *best_node, uint64_t *best_samples)
{
    for (size_t n = 1; n < a->nnodes; n++) {
        const struct ctx_node *node = &a->nodes[n];
        if (!node->counts)
            continue;
        const struct fstate *s = &a->fs[node->func];
        for (size_t v = 0; v < a->graph->funcs[node->func].var_count; v++) {
            size_t at = s->slot ? s->slot[v] : 0;
            if (!node->counts[v] || !at || node->counts[v] <= best_samples[at - 1])
                continue;
            best_samples[at - 1] = node->counts[v];
            best_node[at - 1] = (uint32_t)n;
        }
    }
    for (size_t i = 0; i < a->nslots; i++)
        for (size_t k = 0; k < a->slots[i].nctx; k++)
            if (a->slots[i].ctx[k].samples > best_samples[i]) {
                best_samples[i] = a->slots[i].ctx[k].samples;
                best_node[i] = a->slots[i].ctx[k].node;
            }
}

/* A scalar local (a number, an enum) of a function the blame point
 * called: a temporary of the data it computes, which holds its blame
 * (rule 11).  Locals of the outermost function are the program's own. */
static bool is_temporary(const struct slot *slot, const struct ppw_static_var *v)
{
    return !slot->path[0] && v->kind == PPW_VAR_LOCAL && (v->flags & PPW_VAR_SCALAR) &&
           !slot->outermost;
}

static bool build_result(const struct attr *a, struct ppw_blame_result *r)
{
    struct ppw_names *names = NULL;
    struct ppw_err err;
    if (a->nslots && !(r->vars = ppw_arena_calloc(r->arena, a->nslots, sizeof *r->vars)))
        return false;
    if (a->nslots && ppw_names_new(a->graph, &names, &err) != 0)
        return false;
    uint32_t *best_node = calloc(a->nslots + 1, sizeof *best_node);
    uint64_t *best_samples = calloc(a->nslots + 1, sizeof *best_samples);
    if (!best_node || !best_samples) {
        free(best_node);
        free(best_samples);
        ppw_names_free(names);
        return false;
    }
    best_contexts(a, best_node, best_samples);
    bool ok = true;
    for (size_t i = 0; i < a->nslots; i++) {
        const struct slot *slot = &a->slots[i];
        const struct ppw_static_func *f = &a->graph->funcs[slot->func];
        const struct ppw_static_var *v = &f->vars[slot->var];
        if (!slot->incl && !slot->acc_read && !slot->acc_write)
            continue;
        if (!a->temporaries && is_temporary(slot, v)) {
            r->temporaries++;
            continue;
        }
        struct ppw_blame_var *out = &r->vars[r->nvars++];
        *out = (struct ppw_blame_var){
            .name = slot->name,
            .function = v->kind == PPW_VAR_GLOBAL ? NULL
                                                  : keep(r->arena, ppw_names_source(names, slot->func)),
            .function_key = v->kind == PPW_VAR_GLOBAL ? NULL : f->linkage_name,
            .kind = kind_name(slot->path[0] ? PPW_VAR_FIELD : v->kind),
            .type = slot->type,
            .decl_file = v->decl_file[0] ? v->decl_file : f->file,
            .decl_line = decl_line(f, v),
            .inclusive = slot->incl,
            .exclusive = slot->excl,
            .inclusive_weight = slot->incl_w,
            .exclusive_weight = slot->excl_w,
            .access_read = slot->acc_read,
            .access_write = slot->acc_write,
            .access_read_weight = slot->acc_read_w,
            .access_write_weight = slot->acc_write_w,
        };
        if (v->kind == PPW_VAR_RETURN &&
            !(out->name = result_name(ppw_names_source(names, slot->func), r->arena))) {
            ok = false;
            break;
        }
        if (slot->naliases) {
            struct ppw_blame_alias *aliases =
                ppw_arena_calloc(r->arena, slot->naliases, sizeof *aliases);
            if (!aliases) {
                ok = false;
                break;
            }
            for (size_t k = 0; k < slot->naliases; k++) {
                const struct ppw_static_func *af = &a->graph->funcs[slot->alias_func[k]];
                aliases[k] = (struct ppw_blame_alias){
                    af->vars[slot->alias_var[k]].name,
                    keep(r->arena, ppw_names_function(names, slot->alias_func[k]))};
                if (!aliases[k].function)
                    ok = false;
            }
            out->aliases = aliases;
            out->naliases = slot->naliases;
        }
        if (best_samples[i] &&
            !(out->context = context_text(a, names, best_node[i], r->arena))) {
            ok = false;
            break;
        }
        if (!slot->global && (!out->context || !out->context[0]))
            /* only the access view reached it */
            out->context = keep(r->arena, ppw_names_function(names, slot->func));
    }
    free(best_node);
    free(best_samples);
    ppw_names_free(names);
    if (ok && r->nvars)
        qsort(r->vars, r->nvars, sizeof *r->vars, compare_vars);
    return ok;
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
    for (size_t i = 0; i < a->nnodes; i++)
        free(a->nodes[i].counts);
    free(a->nodes);
    free(a->node_table);
    free(a->ctx_table);
    free(a->func_of);
    free(a->ctx_of);
    free(a->prev_ctx_func);
    free(a->prev_ctx_node);
    free(a->is_main);
    free(a->entries);
    free(a->done);
    ppw_attr_datum_free(a);
    ppw_attr_effects_free(a);
    free(a->stack_globals);
    free(a->transfers);
    free(a->targets);
    free(a->closed);
    free(a->closed_table);
    free(a->frame_steps);
    free(a->closed_entries);
    free(a->closed_slots);
    free(a->closed_globals);
    free(a->start_copy);
    free(a->shares);
}

static bool attr_init(struct attr *a)
{
    const struct ppw_static_graph *g = a->graph;
    if (!(a->fs = calloc(g->func_count ? g->func_count : 1, sizeof *a->fs)) ||
        !(a->is_main = calloc(g->func_count ? g->func_count : 1, sizeof *a->is_main)))
        return false;
    for (size_t i = 0; i < g->func_count; i++)
        a->is_main[i] = strcmp(g->funcs[i].name, "main") == 0;
    for (size_t i = 0; i < g->func_count; i++)
        if (!index_name(a, g->funcs[i].name, i) || !index_name(a, g->funcs[i].linkage_name, i))
            return false;
    a->nnodes = 1; /* node 0: the empty context */
    if (!ppw_array_reserve(&a->nodes, &a->nodes_cap, 1, sizeof *a->nodes))
        return false;
    a->nodes[0] = (struct ctx_node){0, -1, NULL};
    return true;
}

void ppw_blame_result_free(struct ppw_blame_result *result)
{
    if (!result)
        return;
    ppw_arena_free(result->arena);
    free(result);
}

/* Orders stacks by their frames from the outermost: callers first. */
static int compare_callers(const void *x, const void *y)
{
    const struct ppw_blame_stack *a = *(const struct ppw_blame_stack *const *)x;
    const struct ppw_blame_stack *b = *(const struct ppw_blame_stack *const *)y;
    size_t i = a->nframes, j = b->nframes;
    while (i && j) {
        const struct ppw_blame_frame *fa = &a->frames[--i], *fb = &b->frames[--j];
        if (fa->function != fb->function)
            return (uintptr_t)fa->function < (uintptr_t)fb->function ? -1 : 1;
        if (fa->line != fb->line)
            return fa->line < fb->line ? -1 : 1;
    }
    return (i > j) - (i < j);
}

int ppw_blame_attribute(const struct ppw_static_graph *graph, const struct ppw_blame_stack *stacks,
                        size_t nstacks, const struct ppw_blame_options *options,
                        struct ppw_blame_result **out, struct ppw_err *err)
{
    struct attr a = {.graph = graph,
                     .blame_point = options ? options->blame_point : NULL,
                     .temporaries = options && options->temporaries,
                     .access = options && options->access};
    struct ppw_blame_result *r = calloc(1, sizeof *r);
    int rc = 0;
    *out = NULL;
    if (r && (r->arena = ppw_arena_new()))
        a.names_arena = r->arena;
    if (!r || !r->arena || !attr_init(&a)) {
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory attributing samples");
        goto out;
    }
    if (a.blame_point && !ppw_static_graph_find_func(graph, a.blame_point)) {
        rc = ppw_err_set(err, PPW_ENOTFOUND,
                         "blame point: no function named '%s' in the static graphs of %s",
                         a.blame_point, graph->path);
        goto out;
    }
    /* Stacks with the same callers in a row share their contexts. */
    const struct ppw_blame_stack **order = calloc(nstacks ? nstacks : 1, sizeof *order);
    if (!order) {
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory attributing samples");
        goto out;
    }
    for (size_t i = 0; i < nstacks; i++)
        order[i] = &stacks[i];
    qsort(order, nstacks, sizeof *order, compare_callers);
    for (size_t k = 0; k < nstacks && !a.oom; k++) {
        const struct ppw_blame_stack *st = order[k];
        r->total_samples += st->samples;
        r->total_weight += st->weight;
        if (options && options->stack_variable) {
            a.stack_variable = &options->stack_variable[st - stacks];
            a.stack_variable_frame = NULL;
            *a.stack_variable = NULL;
        }
        if (!attribute_stack(&a, st) && !a.oom)
            r->unattributed += st->samples;
    }
    free(order);
    r->access_samples = a.access_samples;
    memcpy(r->unblamed, a.unblamed, sizeof r->unblamed);
    memcpy(r->unaccessed, a.unaccessed, sizeof r->unaccessed);
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

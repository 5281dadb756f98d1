/* The blame view (attribute_int.h; docs/ppw-blame.md, "Attribution"), one
 * pass over a stack whose chain the walk (stack_walk.c) built.
 *
 * The leaf user frame blames the variables whose blame sets hold the
 * sampled location (or, for a sample in code without a graph, the location
 * of the call into it, with the library's written arguments); then, frame
 * by frame up to the blame point, the blamed exit variables of the callee
 * blame the caller variables bound to them at the call site.  Within a
 * frame, a blamed field blames its ancestors, a blamed variable flowing
 * into the return value blames <return>, and what is computed from a
 * receiver is blamed (the forward closure).  Every datum is counted at
 * most once per stack (stamped with the stack's serial number) and
 * weighted by the stack's samples. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "attribute_int.h"
#include "names.h"
#include "open_table.h"
#include "ppw/static_format.h"
#include "read_graph.h"

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

/* The variables of f whose inclusive blame sets hold call c's location:
 * what f computes, or decides, from the call's result where no variable
 * receives it (x += log(uniform(r)); if (uniform(r) < p) n++), as a
 * sample on the call's line in f itself would blame.  Added to the frame
 * as receivers when add, else only counted. */
static size_t call_location_blames(struct attr *a, struct fstate *s,
                                   const struct ppw_static_func *f,
                                   const struct ppw_static_call *c, bool add)
{
    struct ppw_blame_frame at = {.file = f->file, .line = c->line, .col = c->col};
    size_t n = 0;
    for (size_t i = first_on_line(s->incl, s->nincl, at.line);
         i < s->nincl && s->incl[i].line == at.line; i++) {
        if (!loc_matches(&s->incl[i], &at) ||
            f->vars[s->incl[i].var].kind == PPW_VAR_RETURN)
            continue;
        n++;
        if (add)
            add_receiver(a, s, (int32_t)s->incl[i].var, false, false);
    }
    return n;
}

/* Whether call c binds its result to a variable of the caller. */
static bool binds_return(const struct ppw_static_call *c)
{
    for (size_t i = 0; c && i < c->binding_count; i++)
        if (c->bindings[i].mode == PPW_BIND_RETURN && c->bindings[i].var >= 0)
            return true;
    return false;
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

static uint64_t place_transfer(const void *entry, const void *ctx)
{
    (void)ctx;
    const struct transfer_memo *m = entry;
    return transfer_hash(m->call, m->var);
}

static bool transfer_used(const void *entry, const void *ctx)
{
    (void)ctx;
    return ((const struct transfer_memo *)entry)->call != NULL;
}

static const struct ppw_open_table_kind transfer_table = {sizeof(struct transfer_memo), 1024,
                                                          place_transfer, transfer_used};

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
    if (!ppw_open_table_reserve((void **)&a->transfers, &a->transfers_cap, a->ntransfers,
                                &transfer_table, NULL)) {
        a->oom = true;
        return NULL;
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
            /* written through a local pointer: through the pointers it was
             * copied from (a pointer an OpenMP body captured) */
            for (uint32_t p = caller->pointer_start[t->var];
                 t->by_arg && p < caller->pointer_start[t->var + 1]; p++)
                add_entry(a, caller, (int32_t)caller->pointer_sources[p], e.excl, true,
                          !e.via_field, false);
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

/* Whether chain frame from blamed its function's return value. */
static bool return_blamed(const struct attr *a, const struct frame_blame *from)
{
    const struct ppw_static_func *callee = &a->graph->funcs[from->func];
    const struct entry *entries = ppw_attr_frame_entries(a, from);
    for (size_t i = 0; i < from->count; i++)
        if (callee->vars[entries[i].var].kind == PPW_VAR_RETURN)
            return true;
    return false;
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
    const struct frame_blame *from = &a->done[fb->from];
    transfer(a, f, s, from, c);
    if (!binds_return(c) && return_blamed(a, from))
        call_location_blames(a, s, f, c, true);
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

static uint64_t place_ctx(const void *entry, const void *ctx)
{
    (void)ctx;
    const struct ctx_ref *r = entry;
    return ctx_hash(r->slot, r->node);
}

static bool ctx_used(const void *entry, const void *ctx)
{
    (void)ctx;
    return ((const struct ctx_ref *)entry)->slot != 0;
}

static const struct ppw_open_table_kind ctx_table = {sizeof(struct ctx_ref), 1024, place_ctx,
                                                     ctx_used};

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
    if (!ppw_open_table_reserve((void **)&a->ctx_table, &a->ctx_table_cap, a->nctx_refs,
                                &ctx_table, NULL)) {
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
static bool return_received(struct attr *a, const struct frame_blame *fb)
{
    if (fb->up < 0)
        return false;
    const struct frame_blame *up = &a->done[fb->up];
    struct fstate *s = ppw_attr_fstate(a, up->func);
    return binds_return(up->call) ||
           (s && call_location_blames(a, s, &a->graph->funcs[up->func], up->call, false) > 0);
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

/* closed_table's entries are 1 + an index into attr.closed */
static uint64_t place_closed(const void *entry, const void *ctx)
{
    const struct closed_frame *closed = ctx;
    return closed[*(const uint32_t *)entry - 1].hash >> 7;
}

static bool closed_used(const void *entry, const void *ctx)
{
    (void)ctx;
    return *(const uint32_t *)entry != 0;
}

static const struct ppw_open_table_kind closed_table = {sizeof(uint32_t), 4096, place_closed,
                                                        closed_used};

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
    if (!ppw_open_table_reserve((void **)&a->closed_table, &a->closed_cap, a->nclosed,
                                &closed_table, a->closed)) {
        a->oom = true;
        return;
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
    if (start + total)
        memset(&a->closed_slots[a->nclosed_entries], 0,
               (start + total) * sizeof *a->closed_slots);
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

static uint64_t place_frame_step(const void *entry, const void *ctx)
{
    (void)ctx;
    const struct frame_step *step = entry;
    return frame_step_hash(step->from_closed, step->call);
}

static bool frame_step_used(const void *entry, const void *ctx)
{
    (void)ctx;
    return ((const struct frame_step *)entry)->from_closed != 0;
}

static const struct ppw_open_table_kind frame_step_table = {
    sizeof(struct frame_step), 4096, place_frame_step, frame_step_used};

/* The entry of (from_closed, call), or the empty one where it goes; NULL
 * when out of memory. */
static struct frame_step *frame_step_find(struct attr *a, uint32_t from_closed,
                                          const struct ppw_static_call *call)
{
    if (!ppw_open_table_reserve((void **)&a->frame_steps, &a->frame_steps_cap, a->nframe_steps,
                                &frame_step_table, NULL)) {
        a->oom = true;
        return NULL;
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
    /* the closure replays the globals it notes, not those the transfer
     * noted (a callee's parameter bound to a global) */
    memo &= !a->nstack_globals;
    close_frame(a, &a->done[k]);
    if (memo && a->done[k].closed && !a->oom) {
        struct frame_step *step = frame_step_find(a, from_closed, fb->call);
        if (!step)
            return;
        *step = (struct frame_step){from_closed, fb->call, a->done[k].closed};
        a->nframe_steps++;
    }
}

/* ---- the view ---- */

void ppw_attr_blame_stack(struct attr *a, const struct ppw_blame_stack *st, size_t u,
                          enum ppw_blame_cause why)
{
    if (u == st->nframes) { /* no frame of user code */
        a->unblamed[why] += st->samples;
        return;
    }
    a->nentries = 0;
    a->nstack_globals = 0;
    a->globals_sig = 0;
    a->effect_frame = NULL;
    blame_leaf(a, st, u);
    close_frame(a, &a->done[0]);
    for (size_t k = 1; k < a->ndone && !a->oom; k++)
        blame_and_close_caller(a, k);
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
    if (!blamed)
        a->unblamed[why] += st->samples;
}

void ppw_attr_blame_free(struct attr *a)
{
    free(a->entries);
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
}

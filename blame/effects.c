/* What a call does with blamed data (attribute_int.h): the forward closure
 * of a frame continues through the other calls it makes.  A call whose
 * argument is computed from a receiver (or that reads a blamed global)
 * writes, from it, some of its written pointer parameters and globals:
 * `dot(p, q)` returns from q, the parallel region that updates z from
 * alpha writes the global z.  Those are blamed in the frame too.
 *
 * The summary of (callee, input) lists those outputs, from the callee's
 * FLOW records and, transitively, its own calls (to a bounded depth); it
 * is static, so it is computed once per callee and input. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "attribute_int.h"
#include "open_table.h"
#include "ppw/static_format.h"

enum { SUMMARY_DEPTH = 4 };

struct effect_list {
    int32_t *items; /* >= 0: a written formal; < 0: -(1 + the global's slot) */
    size_t count, cap;
};

static uint64_t summary_key(int32_t func, int32_t input)
{
    return ((uint64_t)(uint32_t)func << 32 | (uint32_t)input) + 1;
}

static struct summary_entry *lookup(struct attr *a, uint64_t key);
static bool remember(struct attr *a, uint64_t key, struct effect_list *list);
static int32_t find_callee(struct attr *a, const struct ppw_static_func *caller,
                           const struct ppw_static_call *c);

static bool push_effect(struct effect_list *list, int32_t effect)
{
    for (size_t i = 0; i < list->count; i++)
        if (list->items[i] == effect)
            return true;
    if (!ppw_array_reserve(&list->items, &list->cap, list->count + 1, sizeof *list->items))
        return false;
    list->items[list->count++] = effect;
    return true;
}

/* The function a call names, among those with a graph; -1. */
int32_t ppw_attr_callee(struct attr *a, const struct ppw_static_func *caller,
                        const struct ppw_static_call *c)
{
    if (!c->callee[0] || c->kind == PPW_CALL_LIBRARY)
        return -1;
    uint64_t key = ((uint64_t)(uintptr_t)c) | 1ull << 62; /* calls are aligned: no clash */
    struct summary_entry *found = lookup(a, key);
    if (found)
        return (int32_t)(intptr_t)found->list - 1;
    int32_t callee = find_callee(a, caller, c);
    if (!remember(a, key, (struct effect_list *)(intptr_t)(callee + 1)))
        a->oom = true;
    return callee;
}

static int32_t find_callee(struct attr *a, const struct ppw_static_func *caller,
                           const struct ppw_static_call *c)
{
    const struct ppw_strmultimap_list *list = ppw_strmultimap_find(&a->names, c->callee);
    if (!list)
        return -1;
    int32_t best = -1;
    for (size_t i = 0; i < list->count; i++) {
        const struct ppw_static_func *f = &a->graph->funcs[list->items[i]];
        if (!(f->flags & PPW_FUNC_ANALYSED))
            continue;
        if (best < 0 || f->unit == caller->unit)
            best = (int32_t)list->items[i];
    }
    return best;
}

static const struct effect_list *summary(struct attr *a, int32_t func, int32_t input, int depth);

/* Marks var and what is computed from it as reached (a worklist). */
static void reach(const struct fstate *s, uint32_t var, char *reached, uint32_t *work,
                  size_t *nwork)
{
    if (reached[var])
        return;
    reached[var] = 1;
    work[(*nwork)++] = var;
    const struct ppw_static_flow *flow = s->flow_of[var];
    for (size_t t = 0; flow && t < flow->target_count; t++)
        if (!reached[flow->targets[t]]) {
            reached[flow->targets[t]] = 1;
            work[(*nwork)++] = flow->targets[t];
        }
}

static bool compute_summary(struct attr *a, int32_t func, int32_t input, int depth,
                            struct effect_list *out)
{
    const struct ppw_static_func *f = &a->graph->funcs[func];
    struct fstate *s = ppw_attr_fstate(a, func);
    if (!s || !f->var_count)
        return s != NULL;
    char *reached = calloc(f->var_count, 1);
    uint32_t *work = malloc(sizeof *work * f->var_count);
    if (!reached || !work) {
        free(reached);
        free(work);
        return false;
    }
    size_t nwork = 0;
    for (size_t v = 0; v < f->var_count; v++) {
        const struct ppw_static_var *var = &f->vars[v];
        bool seed = input >= 0 ? var->kind == PPW_VAR_PARAM && var->param_index == input
                               : s->global_slot[v] == -(input + 1);
        if (seed)
            reach(s, (uint32_t)v, reached, work, &nwork);
    }
    bool ok = true;
    for (size_t next = 0; next < nwork && ok; next++) {
        uint32_t v = work[next];
        const struct ppw_static_var *var = &f->vars[v];
        if (s->global_slot[v] >= 0) {
            ok = push_effect(out, -(s->global_slot[v] + 1));
        } else if (s->root[v] >= 0 && (var->flags & (PPW_VAR_EXIT_WRITTEN | PPW_VAR_WRITTEN))) {
            ok = push_effect(out, f->vars[s->root[v]].param_index);
        }
        if (!ok || depth >= SUMMARY_DEPTH)
            continue;
        /* the calls it is an argument of: what they write from it */
        for (size_t c = 0; c < f->call_count && ok; c++) {
            const struct ppw_static_call *call = &f->calls[c];
            for (size_t b = 0; b < call->binding_count && ok; b++) {
                const struct ppw_static_binding *bind = &call->bindings[b];
                if (bind->var != (int32_t)v || bind->callee_path[0] ||
                    (bind->mode != PPW_BIND_REF && bind->mode != PPW_BIND_VALUE))
                    continue;
                int32_t callee = ppw_attr_callee(a, f, call);
                const struct effect_list *sub =
                    callee >= 0 ? summary(a, callee, bind->formal, depth + 1) : NULL;
                for (size_t e = 0; sub && e < sub->count; e++) {
                    if (sub->items[e] < 0) {
                        ok = push_effect(out, sub->items[e]);
                        continue;
                    }
                    for (size_t k = 0; k < call->binding_count; k++) /* the written actual */
                        if (call->bindings[k].formal == sub->items[e] &&
                            call->bindings[k].var >= 0 && !call->bindings[k].callee_path[0])
                            reach(s, (uint32_t)call->bindings[k].var, reached, work, &nwork);
                }
            }
        }
    }
    free(reached);
    free(work);
    return ok;
}

static size_t memo_slot(uint64_t key, size_t mask)
{
    return (size_t)ppw_attr_mix(key) & mask;
}

static struct summary_entry *lookup(struct attr *a, uint64_t key)
{
    if (!a->summaries_cap)
        return NULL;
    size_t mask = a->summaries_cap - 1;
    for (size_t k = memo_slot(key, mask); a->summaries[k].key; k = (k + 1) & mask)
        if (a->summaries[k].key == key)
            return &a->summaries[k];
    return NULL;
}

static uint64_t place_summary(const void *entry, const void *ctx)
{
    (void)ctx;
    return ppw_attr_mix(((const struct summary_entry *)entry)->key);
}

static bool summary_used(const void *entry, const void *ctx)
{
    (void)ctx;
    return ((const struct summary_entry *)entry)->key != 0;
}

static const struct ppw_open_table_kind summary_table = {sizeof(struct summary_entry), 256,
                                                         place_summary, summary_used};

/* Enters key -> list (summaries and frame effects share the table: frame
 * effects' keys have the top bit set). */
static bool remember(struct attr *a, uint64_t key, struct effect_list *list)
{
    if (!ppw_open_table_reserve((void **)&a->summaries, &a->summaries_cap, a->nsummaries,
                                &summary_table, NULL))
        return false;
    size_t mask = a->summaries_cap - 1, k = memo_slot(key, mask);
    while (a->summaries[k].key)
        k = (k + 1) & mask;
    a->summaries[k] = (struct summary_entry){key, list};
    a->nsummaries++;
    return true;
}

/* The memoized summary of (func, input); NULL when out of memory. */
static const struct effect_list *summary(struct attr *a, int32_t func, int32_t input, int depth)
{
    uint64_t key = summary_key(func, input);
    struct summary_entry *found = lookup(a, key);
    if (found)
        return found->list;
    struct effect_list *list = calloc(1, sizeof *list);
    if (!list || !compute_summary(a, func, input, depth, list)) {
        if (list)
            free(list->items);
        free(list);
        a->oom = true;
        return NULL;
    }
    found = lookup(a, key);
    if (found) { /* a recursive call computed it meanwhile */
        free(list->items);
        free(list);
        return found->list;
    }
    if (!remember(a, key, list)) {
        free(list->items);
        free(list);
        a->oom = true;
        return NULL;
    }
    return list;
}

/* One output of a frame's call: the caller variable bound to a written
 * parameter (var >= 0), or a global (global >= 0). */
struct frame_effect {
    uint32_t call;
    int32_t var, global;
};

struct frame_effects {
    struct frame_effect *items;
    size_t count, cap;
};

static bool push_frame_effect(struct frame_effects *list, struct frame_effect effect)
{
    for (size_t i = 0; i < list->count; i++)
        if (list->items[i].call == effect.call && list->items[i].var == effect.var &&
            list->items[i].global == effect.global)
            return true;
    if (!ppw_array_reserve(&list->items, &list->cap, list->count + 1, sizeof *list->items))
        return false;
    list->items[list->count++] = effect;
    return true;
}

/* What call c of func writes from its input, into out. */
static bool apply(struct attr *a, int32_t func, uint32_t c, int32_t input,
                  struct frame_effects *out)
{
    const struct ppw_static_func *f = &a->graph->funcs[func];
    const struct ppw_static_call *call = &f->calls[c];
    int32_t callee = ppw_attr_callee(a, f, call);
    const struct effect_list *effects = callee >= 0 ? summary(a, callee, input, 0) : NULL;
    for (size_t e = 0; effects && e < effects->count; e++) {
        if (effects->items[e] < 0) {
            if (!push_frame_effect(out, (struct frame_effect){c, -1, -(effects->items[e] + 1)}))
                return false;
            continue;
        }
        for (size_t k = 0; k < call->binding_count; k++)
            if (call->bindings[k].formal == effects->items[e] && call->bindings[k].var >= 0 &&
                !call->bindings[k].callee_path[0] &&
                (call->bindings[k].mode == PPW_BIND_REF ||
                 call->bindings[k].mode == PPW_BIND_VALUE) &&
                !push_frame_effect(out, (struct frame_effect){c, call->bindings[k].var, -1}))
                return false;
    }
    return true;
}

/* Whether bind passes one of a function's n variables, whole, to a
 * parameter of a callee with a graph (a direct or forked call). */
static bool is_argument(const struct ppw_static_call *call, const struct ppw_static_binding *bind,
                        size_t n)
{
    return bind->var >= 0 && (size_t)bind->var < n && !bind->callee_path[0] && bind->formal >= 0 &&
           (bind->mode == PPW_BIND_REF || bind->mode == PPW_BIND_VALUE) &&
           call->kind != PPW_CALL_LIBRARY && call->kind != PPW_CALL_TASK;
}

bool ppw_attr_effects_fstate(struct fstate *s, const struct ppw_static_func *f)
{
    size_t n = f->var_count;
    s->arg_start = calloc(n + 1, sizeof *s->arg_start);
    if (!s->arg_start)
        return false;
    size_t total = 0;
    for (size_t c = 0; c < f->call_count; c++)
        for (size_t b = 0; b < f->calls[c].binding_count; b++) {
            const struct ppw_static_binding *bind = &f->calls[c].bindings[b];
            if (is_argument(&f->calls[c], bind, n)) {
                s->arg_start[bind->var + 1]++;
                total++;
            }
        }
    for (size_t v = 0; v < n; v++)
        s->arg_start[v + 1] += s->arg_start[v];
    s->args = calloc(total ? total : 1, sizeof *s->args);
    s->var_effects = calloc(n + 1, sizeof *s->var_effects);
    size_t *fill = calloc(n + 1, sizeof *fill);
    if (!s->args || !fill || !s->var_effects) {
        free(fill);
        return false;
    }
    for (size_t c = 0; c < f->call_count; c++)
        for (size_t b = 0; b < f->calls[c].binding_count; b++) {
            const struct ppw_static_binding *bind = &f->calls[c].bindings[b];
            if (is_argument(&f->calls[c], bind, n)) {
                size_t at = s->arg_start[bind->var] + fill[bind->var]++;
                s->args[at] = (struct call_arg){(uint32_t)c, bind->formal};
            }
        }
    free(fill);
    return true;
}

void ppw_attr_effects_fstate_free(struct fstate *s)
{
    free(s->arg_start);
    free(s->args);
    free(s->var_effects);
    free(s->global_effects);
}

/* The outputs of func's calls from var (input >= 0: var; < 0: the
 * global of slot -(input + 1)), computed once. */
static const struct frame_effects *frame_effects(struct attr *a, int32_t func, int32_t input)
{
    uint64_t key = summary_key(func, input) | 1ull << 63;
    size_t mask = a->summaries_cap - 1, k;
    if (a->summaries_cap)
        for (k = (size_t)(key * 0x9e3779b97f4a7c15ull >> 7) & mask; a->summaries[k].key;
             k = (k + 1) & mask)
            if (a->summaries[k].key == key)
                return (const struct frame_effects *)a->summaries[k].list;
    struct frame_effects *list = calloc(1, sizeof *list);
    const struct ppw_static_func *f = &a->graph->funcs[func];
    const struct fstate *s = &a->fs[func];
    bool ok = list != NULL;
    if (ok && input >= 0) {
        for (size_t i = s->arg_start[input]; i < s->arg_start[input + 1] && ok; i++)
            ok = apply(a, func, s->args[i].call, s->args[i].formal, list);
    } else if (ok) {
        for (size_t c = 0; c < f->call_count && ok; c++)
            if (f->calls[c].kind != PPW_CALL_LIBRARY && f->calls[c].kind != PPW_CALL_TASK)
                ok = apply(a, func, (uint32_t)c, input, list);
    }
    if (ok)
        ok = remember(a, key, (struct effect_list *)list);
    if (!ok) {
        if (list)
            free(list->items);
        free(list);
        a->oom = true;
        return NULL;
    }
    return list;
}

static void run_effects(struct attr *a, int32_t func, const struct frame_effects *list,
                        const struct ppw_static_call *except, ppw_attr_effect_fn *on_effect)
{
    const struct ppw_static_func *f = &a->graph->funcs[func];
    for (size_t i = 0; list && i < list->count && !a->oom; i++)
        if (&f->calls[list->items[i].call] != except)
            on_effect(a, func, list->items[i].var, list->items[i].global);
}

void ppw_attr_var_effects(struct attr *a, int32_t func, uint32_t var,
                          const struct ppw_static_call *except, ppw_attr_effect_fn *on_effect)
{
    struct fstate *s = &a->fs[func];
    if (s->arg_start[var] == s->arg_start[var + 1])
        return; /* an argument of no call */
    if (!s->var_effects[var])
        s->var_effects[var] = frame_effects(a, func, (int32_t)var);
    run_effects(a, func, s->var_effects[var], except, on_effect);
}

void ppw_attr_global_effects(struct attr *a, int32_t func, int32_t global_slot,
                             const struct ppw_static_call *except, ppw_attr_effect_fn *on_effect)
{
    struct fstate *s = &a->fs[func];
    const struct frame_effects *list = NULL;
    for (size_t i = 0; i < s->nglobal_effects; i++)
        if (s->global_effects[i].slot == global_slot)
            list = s->global_effects[i].list;
    if (!list) {
        if (!(list = frame_effects(a, func, -(global_slot + 1))))
            return;
        if (!ppw_array_reserve(&s->global_effects, &s->global_effects_cap,
                               s->nglobal_effects + 1, sizeof *s->global_effects)) {
            a->oom = true;
            return;
        }
        s->global_effects[s->nglobal_effects++] = (struct global_effects){global_slot, list};
    }
    run_effects(a, func, list, except, on_effect);
}

void ppw_attr_effects_free(struct attr *a)
{
    for (size_t i = 0; i < a->summaries_cap; i++)
        if ((a->summaries[i].key >> 62) == 1) {
            continue; /* a call's callee, no list */
        } else if (a->summaries[i].key >> 63) {
            struct frame_effects *list = (struct frame_effects *)a->summaries[i].list;
            free(list->items);
            free(list);
        } else if (a->summaries[i].key) {
            struct effect_list *list = a->summaries[i].list;
            free(list->items);
            free(list);
        }
    free(a->summaries);
}

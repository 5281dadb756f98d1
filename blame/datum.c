/* What both views need from a stack (attribute_int.h): its chain of user
 * frames linked by the calls between them, and the datum a frame's
 * variable stands for (docs/ppw-blame.md, "One row per datum").
 *
 * A parameter is the caller's variable bound to it, and a field under a
 * parameter is the caller's field of the same path, whether or not the
 * caller's graph names that field: `p[].force` written in an OpenMP body
 * is main's `p[].force`.  So one datum is one row, named where it is
 * declared, and field paths survive every move up the stack.  Bindings
 * are static per call, so each (call, variable, path) is resolved once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "attribute_int.h"
#include "open_table.h"
#include "ppw/static_format.h"

/* ---- the chain ---- */

static bool push_link(struct attr *a, size_t frame, int32_t func)
{
    if (!ppw_array_reserve(&a->done, &a->done_cap, a->ndone + 1, sizeof *a->done)) {
        a->oom = true;
        return false;
    }
    a->done[a->ndone++] = (struct frame_blame){frame, func, -1, NULL, -1, 0, 0, 0, false};
    return true;
}

/* The call at frame at of chain function caller into callee (-1: the
 * indirect call there), through the cache: stacks sorted by their callers
 * meet the same calls over and over. */
static const struct ppw_static_call *chain_call(struct attr *a, int32_t caller,
                                                const struct ppw_blame_frame *at, int32_t callee)
{
    uint64_t h = ppw_attr_mix((uint64_t)(uint32_t)caller << 32 ^ (uint64_t)(uint32_t)callee ^
                              (uint64_t)at->line << 12 ^ (uint64_t)at->col << 44);
    struct call_cache *c = &a->call_cache[h & (CALL_CACHE_SLOTS - 1)];
    if (c->caller == caller + 1 && c->callee == callee && c->line == at->line && c->col == at->col)
        return c->call;
    const struct ppw_static_func *f = &a->graph->funcs[caller];
    const struct ppw_static_call *call;
    if (callee >= 0) {
        const struct ppw_static_func *g = &a->graph->funcs[callee];
        call = ppw_attr_find_call(f, at, g->linkage_name, g->name, 0);
    } else {
        call = ppw_attr_find_call(f, at, NULL, NULL, PPW_CALL_INDIRECT);
    }
    *c = (struct call_cache){caller + 1, callee, at->line, at->col, call};
    return call;
}

bool ppw_attr_chain(struct attr *a, const struct ppw_blame_stack *st, size_t u)
{
    a->ndone = 0;
    if (!push_link(a, u, a->func_of[u]))
        return false;
    for (size_t i = u; !ppw_attr_stops(a, a->func_of[i]);) {
        do
            i++;
        while (i < st->nframes && a->func_of[i] < 0);
        if (i == st->nframes)
            break;
        if (!push_link(a, i, a->func_of[i]))
            return false;
        /* The call at this frame's location into the nearest frame below
         * whose function it names: a task's call names the task body,
         * below its runtime entry. */
        struct frame_blame *caller = &a->done[a->ndone - 1];
        for (size_t from = a->ndone - 1; from-- > 0;) {
            const struct ppw_static_call *c =
                chain_call(a, caller->func, &st->frames[i], a->done[from].func);
            /* a call through a pointer (s->pot->force(s)) names no callee:
             * the indirect call at the frame's location, into the frame
             * right below */
            if (!c && from == a->ndone - 2)
                c = chain_call(a, caller->func, &st->frames[i], -1);
            if (c) {
                caller->from = (int32_t)from;
                caller->call = c;
                a->done[from].up = (int32_t)(a->ndone - 1);
                break;
            }
        }
    }
    return true;
}

/* ---- per function ---- */

static bool is_outlined(const struct ppw_static_func *f)
{
    return (f->flags & PPW_FUNC_OUTLINED) != 0;
}

bool ppw_attr_datum_fstate(struct fstate *s, const struct ppw_static_func *f)
{
    s->dv = calloc(f->var_count ? f->var_count : 1, sizeof *s->dv);
    if (!s->dv)
        return false;
    for (size_t v = 0; v < f->var_count; v++) {
        s->dv[v].copy_of = (uint32_t)v;
        s->dv[v].root = s->root[v];
        const struct ppw_static_var *var = &f->vars[v];
        if (!is_outlined(f) || var->kind != PPW_VAR_LOCAL)
            continue;
        /* clang names an OpenMP body's private, firstprivate and reduction
         * copies after the shared variable, which is a parameter there */
        for (size_t p = 0; p < f->var_count; p++)
            if (f->vars[p].kind == PPW_VAR_PARAM && strcmp(f->vars[p].name, var->name) == 0 &&
                (var->decl_line == 0 || var->decl_line == f->vars[p].decl_line)) {
                s->dv[v].copy_of = (uint32_t)p;
                break;
            }
    }
    return true;
}

void ppw_attr_datum_fstate_free(struct fstate *s)
{
    free(s->dv);
    ppw_strmap_free(&s->by_name);
}

/* The variable of f named name, or -1. */
int32_t ppw_attr_var_named(struct attr *a, struct fstate *s, const struct ppw_static_func *f,
                           const char *name)
{
    if (!s->by_name_ready) {
        for (size_t v = 0; v < f->var_count; v++) {
            bool added;
            if (!ppw_strmap_put(&s->by_name, f->vars[v].name, v + 1, &added)) {
                a->oom = true;
                return -1;
            }
        }
        s->by_name_ready = true;
    }
    struct ppw_strmap_entry *e = ppw_strmap_find(&s->by_name, name);
    return e ? (int32_t)e->value - 1 : -1;
}

static const char *intern(struct attr *a, const char *path)
{
    bool added;
    struct ppw_strmap_entry *e = ppw_strmap_put(&a->paths, path, 0, &added);
    if (!e)
        a->oom = true;
    return e ? e->key : "";
}

/* ---- one binding ---- */

void ppw_attr_field_join(const struct ppw_static_var *actual, uint32_t mode, const char *path,
                         const char **join, const char **tail)
{
    /* g->cells[].energy under &g is g.cells[].energy, under an array a of
     * structs a[].cells[].energy, under a pointer p p->cells[].energy */
    size_t type_len = strlen(actual->type);
    char last = type_len ? actual->type[type_len - 1] : '\0';
    *tail = path;
    *join = "";
    if (mode == PPW_BIND_REF && strncmp(path, "->", 2) == 0 && last != '*') {
        *tail = path + 2;
        *join = last == ']' ? "[]." : ".";
    }
}

/* A memo entry that is not a binding but a datum with a path: (func in
 * var, path, var in extra) -> slot in caller_var. */
static const struct ppw_static_call datum_key_call;
#define DATUM_KEY (&datum_key_call)

static uint64_t memo_hash(const struct ppw_static_call *c, uint32_t var, const char *path,
                          uint32_t extra)
{
    return ppw_attr_mix((uint64_t)(uintptr_t)c ^ ((uint64_t)var << 40) ^
                        (uint64_t)(uintptr_t)path ^ ((uint64_t)extra << 20));
}

static uint64_t place_memo(const void *entry, const void *ctx)
{
    (void)ctx;
    const struct binding_memo *m = entry;
    return memo_hash(m->call, m->var, m->path, m->extra);
}

static bool memo_used(const void *entry, const void *ctx)
{
    (void)ctx;
    return ((const struct binding_memo *)entry)->call != NULL;
}

static const struct ppw_open_table_kind memo_table = {sizeof(struct binding_memo), 1024, place_memo,
                                                      memo_used};

/* The entry for (c, var, path, extra), or the empty entry where it goes;
 * c NULL looks up a datum key (DATUM_KEY). */
static struct binding_memo *memo_find(struct attr *a, const struct ppw_static_call *c,
                                      uint32_t var, const char *path, uint32_t extra)
{
    if (!c)
        c = DATUM_KEY;
    if (!ppw_open_table_reserve((void **)&a->memo, &a->memo_cap, a->nmemo, &memo_table, NULL)) {
        a->oom = true;
        return NULL;
    }
    size_t mask = a->memo_cap - 1, k = (size_t)memo_hash(c, var, path, extra) & mask;
    for (; a->memo[k].call; k = (k + 1) & mask)
        if (a->memo[k].call == c && a->memo[k].var == var && a->memo[k].path == path &&
            a->memo[k].extra == extra)
            return &a->memo[k];
    return &a->memo[k];
}

/* What callee variable var (with path below it) is in the caller at call
 * c: the variable bound to its parameter at that field path, else the
 * bound variable's field of that path (named by the caller's graph, or a
 * path under it).  -1 when it is the callee's own (a local, a global) or
 * bound to nothing. */
static void bind_one(struct attr *a, const struct ppw_static_func *caller, struct fstate *cs,
                     const struct ppw_static_func *callee, const struct fstate *s,
                     const struct ppw_static_call *c, uint32_t var, const char *path,
                     struct binding_memo *out)
{
    const struct ppw_static_var *v = &callee->vars[var];
    char full[512];
    int32_t formal = -1;
    out->caller_var = -1;
    if (c->kind == PPW_CALL_TASK) {
        /* a task's shareds bind by name, as the variable itself */
        for (size_t i = 0; i < c->binding_count; i++)
            if (c->bindings[i].var >= 0 && strcmp(c->bindings[i].callee_path, v->name) == 0 &&
                (c->bindings[i].mode == PPW_BIND_REF || c->bindings[i].mode == PPW_BIND_VALUE)) {
                out->caller_var = c->bindings[i].var;
                out->caller_path = path;
                return;
            }
        return;
    }
    int32_t root = s->root[var];
    if (root < 0)
        return;
    size_t len = strlen(callee->vars[root].name);
    if (strncmp(v->name, callee->vars[root].name, len) != 0)
        return;
    formal = callee->vars[root].param_index;
    int n = snprintf(full, sizeof full, "%s%s", v->name + len, path);
    if (n < 0 || (size_t)n >= sizeof full)
        return;
    const struct ppw_static_binding *whole = NULL;
    for (size_t i = 0; i < c->binding_count; i++) {
        const struct ppw_static_binding *b = &c->bindings[i];
        if (b->var < 0 || b->formal != formal ||
            (b->mode != PPW_BIND_REF && b->mode != PPW_BIND_VALUE))
            continue;
        if (full[0] && strcmp(b->callee_path, full) == 0) {
            out->caller_var = b->var; /* a struct argument's field (pthread_create) */
            out->caller_path = intern(a, "");
            return;
        }
        if (!b->callee_path[0] && !whole)
            whole = b;
    }
    if (!whole)
        return;
    const char *tail, *join;
    ppw_attr_field_join(&caller->vars[whole->var], whole->mode, full, &join, &tail);
    char name[600];
    n = snprintf(name, sizeof name, "%s%s%s", caller->vars[whole->var].name, join, tail);
    if (n < 0 || (size_t)n >= sizeof name)
        return;
    int32_t field = full[0] ? ppw_attr_var_named(a, cs, caller, name) : -1;
    if (field >= 0) {
        out->caller_var = field;
        out->caller_path = intern(a, "");
        return;
    }
    out->caller_var = whole->var;
    n = snprintf(name, sizeof name, "%s%s", join, tail);
    out->caller_path = n > 0 && (size_t)n < sizeof name ? intern(a, name) : intern(a, "");
}

/* ---- slots ---- */

static struct slot *new_slot(struct attr *a, int32_t func, uint32_t var, const char *path,
                             bool global)
{
    if (!ppw_array_reserve(&a->slots, &a->slots_cap, a->nslots + 1, sizeof *a->slots)) {
        a->oom = true;
        return NULL;
    }
    const struct ppw_static_var *v = &a->graph->funcs[func].vars[var];
    struct slot *slot = &a->slots[a->nslots++];
    *slot = (struct slot){.func = func, .var = var, .path = path, .name = v->name,
                          .type = v->type, .global = global};
    return slot;
}

struct slot *ppw_attr_slot(struct attr *a, int32_t func, uint32_t var, const char *path)
{
    const struct ppw_static_var *v = &a->graph->funcs[func].vars[var];
    struct fstate *s = &a->fs[func];
    if (path && path[0]) {
        /* path is interned: (func, var, path pointer) names the datum */
        struct binding_memo *m = memo_find(a, NULL, (uint32_t)func, path, var);
        if (!m)
            return NULL;
        if (m->call)
            return &a->slots[m->caller_var];
        *m = (struct binding_memo){DATUM_KEY, (uint32_t)func, path, (int32_t)a->nslots, NULL,
                                   var};
        a->nmemo++;
        struct slot *slot = new_slot(a, func, var, path, false);
        if (!slot)
            return NULL;
        size_t len = strlen(v->name) + strlen(path) + 1;
        char *name = ppw_arena_alloc(a->names_arena, len);
        if (!name) {
            a->oom = true;
            return NULL;
        }
        snprintf(name, len, "%s%s", v->name, path);
        slot->name = name;
        return slot;
    }
    if (s->slot[var])
        return &a->slots[s->slot[var] - 1];
    if (ppw_attr_program_level(v)) {
        bool added;
        struct ppw_strmap_entry *e = ppw_strmap_put(&a->globals, v->key, a->nslots, &added);
        if (!e || (added && !new_slot(a, func, var, "", true))) {
            a->oom = true;
            return NULL;
        }
        s->slot[var] = e->value + 1;
    } else {
        if (!new_slot(a, func, var, "", false))
            return NULL;
        s->slot[var] = a->nslots;
    }
    return &a->slots[s->slot[var] - 1];
}

static void note_alias(struct slot *slot, int32_t func, uint32_t var)
{
    if (slot->func == func && slot->var == var)
        return;
    for (size_t i = 0; i < slot->naliases; i++)
        if (slot->alias_func[i] == (uint32_t)func && slot->alias_var[i] == var)
            return;
    if (slot->naliases < sizeof slot->alias_var / sizeof slot->alias_var[0]) {
        slot->alias_func[slot->naliases] = (uint32_t)func;
        slot->alias_var[slot->naliases++] = var;
    }
}

/* ---- the datum ---- */

static uint64_t step_hash(uint32_t link, uint32_t var, const char *path)
{
    return ppw_attr_mix(((uint64_t)link << 32 | var) ^ (uint64_t)(uintptr_t)path);
}

static uint64_t place_step(const void *entry, const void *ctx)
{
    (void)ctx;
    const struct stack_step *step = entry;
    return step_hash(step->link, step->var, step->path);
}

/* A step of an older stack is a free entry. */
static bool step_used(const void *entry, const void *ctx)
{
    const struct attr *a = ctx;
    return ((const struct stack_step *)entry)->serial == a->serial;
}

static const struct ppw_open_table_kind step_table = {sizeof(struct stack_step), 1024, place_step,
                                                      step_used};

/* The entry of (link, var, path) in the current stack's steps, or where it
 * goes (serial older than the stack's).  Entries of older stacks are
 * overwritten; the table grows when a stack fills half of it. */
static struct stack_step *step_find(struct attr *a, uint32_t link, uint32_t var, const char *path)
{
    if (a->step_stack != a->serial) {
        a->step_stack = a->serial;
        a->nsteps_used = 0;
    }
    if (!ppw_open_table_reserve((void **)&a->steps, &a->steps_cap, a->nsteps_used, &step_table,
                                a)) {
        a->oom = true;
        return NULL;
    }
    size_t mask = a->steps_cap - 1, k = (size_t)step_hash(link, var, path) & mask;
    for (; a->steps[k].serial == a->serial; k = (k + 1) & mask)
        if (a->steps[k].link == link && a->steps[k].var == var && a->steps[k].path == path)
            return &a->steps[k];
    a->nsteps_used++;
    return &a->steps[k];
}

/* A chain frame's stamp in this stack: the stack's serial and the frame
 * (chains are far shorter than 2^20 frames; a deeper one only misses). */
static uint64_t step_stamp(const struct attr *a, size_t link)
{
    return a->serial << 20 | (link & 0xfffff);
}

/* What variable var (path under it) of chain frame up's callee func is in
 * up's function, through the memo; NULL when out of memory. */
static const struct binding_memo *bind(struct attr *a, const struct frame_blame *up,
                                       struct fstate *cs, int32_t func, const struct fstate *s,
                                       uint32_t var, const char *path)
{
    struct binding_memo *m = memo_find(a, up->call, var, path, 0);
    if (!m)
        return NULL;
    if (m->call)
        return m;
    struct binding_memo found = {up->call, var, path, -1, NULL, 0};
    bind_one(a, &a->graph->funcs[up->func], cs, &a->graph->funcs[func], s, up->call, var, path,
             &found);
    /* the table may have grown while interning: find the entry again */
    if (!(m = memo_find(a, up->call, var, path, 0)))
        return NULL;
    if (!m->call) {
        *m = found;
        a->nmemo++;
    }
    return m;
}

struct slot *ppw_attr_datum(struct attr *a, size_t link, uint32_t var, size_t *where)
{
    int32_t func = a->done[link].func;
    struct fstate *s = ppw_attr_fstate(a, func);
    if (!s)
        return NULL;
    const uint32_t first_var = s->dv[var].copy_of;
    const int32_t first_func = func;
    var = first_var;
    const struct frame_blame *link_fb = &a->done[link];
    if (s->dv[var].root < 0 &&
        (link_fb->up < 0 || a->done[link_fb->up].call->kind != PPW_CALL_TASK)) {
        /* the function's own variable: most entries, no walk */
        if (where)
            *where = link;
        return ppw_attr_slot(a, func, var, "");
    }
    const char *path = a->empty_path ? a->empty_path : (a->empty_path = intern(a, ""));
    /* Up the chain, remembering each step: the steps of one stack resolve
     * to the same datum, and other entries of the stack meet them (a
     * parameter passed down twenty frames is walked once per stack).  A
     * step of a whole variable is remembered in its function's arrays, a
     * step of a path in a table. */
    struct {
        struct fstate *s;
        uint32_t link, var;
        const char *path;
    } steps[256];
    size_t nsteps = 0;
    bool hit = false;
    uint32_t hit_slot = 0, hit_where = 0;
    for (; nsteps < sizeof steps / sizeof steps[0]; nsteps++) {
        if (path == a->empty_path) {
            const struct datum_var *d = &s->dv[var];
            if (d->step_stamp == step_stamp(a, link)) {
                hit = true;
                hit_slot = d->step_slot;
                hit_where = d->step_where;
                break;
            }
        } else {
            const struct stack_step *step = step_find(a, (uint32_t)link, var, path);
            if (!step)
                return NULL;
            if (step->serial == a->serial) {
                hit = true;
                hit_slot = step->slot;
                hit_where = step->where;
                break;
            }
        }
        steps[nsteps].s = s;
        steps[nsteps].link = (uint32_t)link;
        steps[nsteps].var = var;
        steps[nsteps].path = path;
        const struct frame_blame *fb = &a->done[link];
        const struct ppw_static_var *v = &a->graph->funcs[func].vars[var];
        if (fb->up < 0 || v->kind == PPW_VAR_GLOBAL || v->kind == PPW_VAR_STATIC ||
            v->kind == PPW_VAR_RETURN) {
            nsteps++;
            break;
        }
        const struct frame_blame *up = &a->done[fb->up];
        struct fstate *cs = ppw_attr_fstate(a, up->func);
        if (!cs)
            return NULL;
        int32_t caller_var;
        const char *caller_path;
        struct datum_var *d = &s->dv[var];
        if (path == a->empty_path && d->bound_call == up->call) {
            caller_var = d->bound_var;
            caller_path = d->bound_path;
        } else {
            const struct binding_memo *m = bind(a, up, cs, func, s, var, path);
            if (!m)
                return NULL;
            caller_var = m->caller_var;
            caller_path = m->caller_path;
            if (path == a->empty_path) {
                d->bound_call = up->call;
                d->bound_var = caller_var;
                d->bound_path = caller_path;
            }
        }
        if (caller_var < 0) {
            nsteps++;
            break;
        }
        link = (size_t)fb->up;
        func = up->func;
        s = cs;
        var = s->dv[caller_var].copy_of;
        path = caller_path;
    }
    struct slot *slot;
    if (hit) {
        slot = &a->slots[hit_slot];
        link = hit_where;
    } else {
        slot = ppw_attr_slot(a, func, var, path);
        if (!slot)
            return NULL;
        if (path[0]) /* the field's type is the callee's, which names it */
            slot->type = a->graph->funcs[first_func].vars[first_var].type;
    }
    uint32_t slot_index = (uint32_t)(slot - a->slots);
    for (size_t i = 0; i < nsteps; i++) {
        if (steps[i].path == a->empty_path) {
            struct datum_var *d = &steps[i].s->dv[steps[i].var];
            d->step_stamp = step_stamp(a, steps[i].link);
            d->step_slot = slot_index;
            d->step_where = (uint32_t)link;
            continue;
        }
        struct stack_step *step = step_find(a, steps[i].link, steps[i].var, steps[i].path);
        if (!step)
            return NULL;
        *step = (struct stack_step){a->serial, steps[i].link, steps[i].var, steps[i].path,
                                    slot_index, (uint32_t)link};
    }
    if (where)
        *where = link;
    /* most datums are met again and again under the same name */
    struct datum_var *first = &a->fs[first_func].dv[first_var];
    if (first->alias_slot != slot_index + 1) {
        note_alias(slot, first_func, first_var);
        first->alias_slot = slot_index + 1;
    }
    return slot;
}
void ppw_attr_datum_free(struct attr *a)
{
    ppw_strmap_free(&a->paths);
    free(a->memo);
    free(a->steps);
    free(a->call_cache);
}

/* The access view (attribute.h; docs/ppw-blame.md, "Access view"): each
 * sample is charged to the variables its location loads from and stores to
 * (the pass's ACCESS records), split by number of accesses, and a share on
 * a callee's parameter moves to the caller's actual through the call's
 * bindings, by the same rules as blame's transfer.
 *
 * Unlike blame, the shares of one sample add up to one: a share moves up
 * the stack rather than being counted again in every frame, so the view
 * ranks data by the fraction of the time spent touching it. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "attribute_int.h"
#include "ppw/static_format.h"

static int compare_access_line(const void *x, const void *y)
{
    const struct ppw_static_access *a = *(const struct ppw_static_access *const *)x;
    const struct ppw_static_access *b = *(const struct ppw_static_access *const *)y;
    if (a->loc.line != b->loc.line)
        return a->loc.line < b->loc.line ? -1 : 1;
    return (a->loc.col > b->loc.col) - (a->loc.col < b->loc.col);
}

static bool build_index(struct fstate *s, const struct ppw_static_func *f)
{
    s->acc_ready = true;
    if (!f->access_count)
        return true;
    s->acc = malloc(f->access_count * sizeof *s->acc);
    if (!s->acc)
        return false;
    for (size_t i = 0; i < f->access_count; i++)
        s->acc[i] = &f->accesses[i];
    s->nacc = f->access_count;
    qsort(s->acc, s->nacc, sizeof *s->acc, compare_access_line);
    return true;
}

void ppw_attr_access_free(struct fstate *s)
{
    free(s->acc);
}

static bool push_share(struct access_share **list, size_t *count, size_t *cap,
                       struct access_share share)
{
    for (size_t i = 0; i < *count; i++) {
        struct access_share *old = &(*list)[i];
        if (old->func == share.func && old->var == share.var) {
            old->read += share.read;
            old->write += share.write;
            return true;
        }
    }
    if (!ppw_array_reserve(list, cap, *count + 1, sizeof **list))
        return false;
    (*list)[(*count)++] = share;
    return true;
}

/* The accesses of the leaf frame's source line.  Its column is not used:
 * a sample lands on whichever instruction of the statement was executing
 * or stalled (a load's consumer, often arithmetic between the statement's
 * loads, with skid), so the statement's accesses share it, as a statement
 * is a write's exclusive cost in blame. */
static void leaf_shares(struct attr *a, int32_t func, const struct ppw_blame_frame *at)
{
    struct fstate *s = ppw_attr_fstate(a, func);
    const struct ppw_static_func *f = &a->graph->funcs[func];
    if (!s || (!s->acc_ready && !build_index(s, f))) {
        a->oom = true;
        return;
    }
    size_t lo = 0, hi = s->nacc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->acc[mid]->loc.line < at->line)
            lo = mid + 1;
        else
            hi = mid;
    }
    double total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = lo; i < s->nacc && s->acc[i]->loc.line == at->line; i++) {
            const struct ppw_static_access *access = s->acc[i];
            if (!ppw_attr_same_file(access->loc.file, at->file))
                continue;
            for (size_t k = 0; k < access->entry_count; k++) {
                const struct ppw_static_access_entry *e = &access->entries[k];
                if (pass == 0) {
                    total += (double)e->reads + e->writes;
                    continue;
                }
                struct access_share share = {func, e->var, e->reads / total, e->writes / total};
                if (!push_share(&a->shares, &a->nshares, &a->shares_cap, share))
                    a->oom = true;
            }
        }
        if (total == 0)
            return;
    }
}

/* The caller variables a callee variable's share moves to at call c: those
 * bound to its parameter at its path, else the caller's field of that path
 * under the actual, else the actual itself.  Returns how many were written
 * to vars (at most max). */
static size_t actuals(const struct ppw_static_func *caller, const struct ppw_static_func *callee,
                      const struct fstate *cs, uint32_t var, const struct ppw_static_call *c,
                      int32_t *vars, size_t max)
{
    const struct ppw_static_var *v = &callee->vars[var];
    const char *path = "";
    int32_t formal = -1;
    size_t n = 0;
    if (v->kind == PPW_VAR_GLOBAL || v->kind == PPW_VAR_STATIC || v->kind == PPW_VAR_RETURN)
        return 0; /* program-level: charged where it is */
    if (c->kind == PPW_CALL_TASK) {
        path = v->name; /* a task's shareds bind by name */
    } else {
        int32_t root = cs->root[var];
        size_t len = root >= 0 ? strlen(callee->vars[root].name) : 0;
        if (root < 0 || strncmp(v->name, callee->vars[root].name, len) != 0)
            return 0; /* a local of the callee */
        formal = callee->vars[root].param_index;
        path = v->name + len;
    }
    for (int round = 0; round < 3 && !n; round++) {
        for (size_t i = 0; i < c->binding_count && n < max; i++) {
            const struct ppw_static_binding *b = &c->bindings[i];
            if (b->var < 0 || (b->mode != PPW_BIND_REF && b->mode != PPW_BIND_VALUE) ||
                (c->kind != PPW_CALL_TASK && b->formal != formal))
                continue;
            if (round == 0 && strcmp(b->callee_path, path) == 0) {
                vars[n++] = b->var;
            } else if (round == 1 && path[0] && !b->callee_path[0] && c->kind != PPW_CALL_TASK) {
                /* p->cells[].energy for p, g.cells[].energy for &g */
                const char *name = caller->vars[b->var].name;
                bool deref = b->mode == PPW_BIND_REF && strncmp(path, "->", 2) == 0;
                const char *tail = deref ? path + 2 : path;
                size_t len = strlen(name);
                for (size_t k = 0; k < caller->var_count && n < max; k++) {
                    const char *field = caller->vars[k].name;
                    if (caller->vars[k].kind == PPW_VAR_FIELD && strncmp(field, name, len) == 0 &&
                        (deref ? field[len] == '.' && strcmp(field + len + 1, tail) == 0
                               : strcmp(field + len, tail) == 0))
                        vars[n++] = (int32_t)k;
                }
            } else if (round == 2 && !b->callee_path[0] && c->kind != PPW_CALL_TASK) {
                vars[n++] = b->var;
            }
        }
    }
    return n;
}

static void charge_share(struct attr *a, const struct ppw_blame_stack *st,
                         const struct access_share *share)
{
    struct slot *slot = ppw_attr_slot(a, share->func, share->var);
    if (!slot)
        return;
    slot->acc_read += share->read * (double)st->samples;
    slot->acc_write += share->write * (double)st->samples;
    slot->acc_read_w += share->read * st->weight;
    slot->acc_write_w += share->write * st->weight;
}

/* At caller frame j (function caller_func), each share moves through the
 * call that names its function to the variables bound to it.  A share no
 * call of this frame names, or that the call binds to nothing, waits: a
 * frame further up may name its function (an OpenMP task body is named by
 * the TASK call two frames up, its runtime entry in between). */
static void move_shares(struct attr *a, int32_t caller_func, const struct ppw_blame_frame *at)
{
    const struct ppw_static_func *caller = &a->graph->funcs[caller_func];
    if (!ppw_attr_fstate(a, caller_func))
        return;
    int32_t vars[16];
    int32_t callee_func = -1; /* the shares mostly lie in one or two functions */
    const struct ppw_static_call *c = NULL;
    a->nmoved = 0;
    for (size_t i = 0; i < a->nshares && !a->oom; i++) {
        const struct access_share *share = &a->shares[i];
        const struct ppw_static_func *callee = &a->graph->funcs[share->func];
        if (share->func != callee_func) {
            callee_func = share->func;
            c = ppw_attr_find_call(caller, at, callee->linkage_name, callee->name, 0);
        }
        size_t n = c ? actuals(caller, callee, &a->fs[share->func], share->var, c, vars, 16) : 0;
        if (!n && !push_share(&a->moved, &a->nmoved, &a->moved_cap, *share))
            a->oom = true;
        for (size_t k = 0; k < n; k++) {
            struct access_share moved = {caller_func, (uint32_t)vars[k], share->read / (double)n,
                                         share->write / (double)n};
            if (!push_share(&a->moved, &a->nmoved, &a->moved_cap, moved))
                a->oom = true;
        }
    }
    struct access_share *list = a->shares;
    size_t cap = a->shares_cap;
    a->shares = a->moved, a->shares_cap = a->moved_cap, a->nshares = a->nmoved;
    a->moved = list, a->moved_cap = cap, a->nmoved = 0;
}

void ppw_attr_access_stack(struct attr *a, const struct ppw_blame_stack *st, size_t u)
{
    a->nshares = 0;
    leaf_shares(a, a->func_of[u], &st->frames[u]);
    if (!a->nshares)
        return;
    for (size_t i = 0; i < a->nshares; i++) {
        a->access_samples += (a->shares[i].read + a->shares[i].write) * (double)st->samples;
        a->access_weight += (a->shares[i].read + a->shares[i].write) * st->weight;
    }
    for (size_t i = u, j; !a->oom && !ppw_attr_stops(a, a->func_of[i]); i = j) {
        for (j = i + 1; j < st->nframes && a->func_of[j] < 0;)
            j++;
        if (j == st->nframes)
            break;
        move_shares(a, a->func_of[j], &st->frames[j]);
    }
    for (size_t k = 0; k < a->nshares && !a->oom; k++)
        charge_share(a, st, &a->shares[k]);
}

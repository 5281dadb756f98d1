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
#include "names.h"
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
            if (!ppw_names_same_file(access->loc.file, at->file))
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

void ppw_attr_access_stack(struct attr *a, const struct ppw_blame_stack *st, size_t u,
                           enum ppw_blame_cause why)
{
    if (u == st->nframes) { /* no frame of user code */
        a->unaccessed[why] += (double)st->samples;
        return;
    }
    double before = a->access_samples;
    a->nshares = 0;
    leaf_shares(a, a->func_of[u], &st->frames[u]);
    for (size_t i = 0; i < a->nshares && !a->oom; i++) {
        const struct access_share *share = &a->shares[i];
        a->access_samples += (share->read + share->write) * (double)st->samples;
        a->access_weight += (share->read + share->write) * st->weight;
        /* the datum: a parameter's share is the caller's actual's, up the
         * chain of the stack's calls, with its field path */
        size_t where = 0;
        struct slot *slot = ppw_attr_datum(a, 0, share->var, &where);
        if (!slot)
            continue;
        slot->outermost |= where >= a->outer_run;
        slot->acc_read += share->read * (double)st->samples;
        slot->acc_write += share->write * (double)st->samples;
        slot->acc_read_w += share->read * st->weight;
        slot->acc_write_w += share->write * st->weight;
    }
    double left = 1.0 - (a->access_samples - before) / (double)(st->samples ? st->samples : 1);
    if (left > 1e-9)
        a->unaccessed[why] += left * (double)st->samples;
}

void ppw_attr_access_view_free(struct attr *a)
{
    free(a->shares);
}

#include "stacks.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "ppw/static_format.h"
#include "strmap.h"

struct ppw_stack_set {
    struct ppw_blame_stack *stacks;
    size_t count, cap;
    uint64_t *hashes; /* of each stack's frames */
    size_t *table;    /* open addressing: 1 + stack index, 0 empty */
    size_t table_cap; /* a power of two, at least twice count */
    uint64_t samples;
    double weight;
    bool split_threads; /* the thread is part of a stack's identity */
    struct ppw_strmap strings;
    struct ppw_arena *arena;        /* frames */
    struct ppw_blame_frame *copied; /* ppw_stack_set_add_copy's frames, re-interned */
    size_t copied_cap;
};

static int no_memory(struct ppw_err *err)
{
    return ppw_err_set(err, PPW_ENOMEM, "out of memory collecting stacks");
}

int ppw_stack_set_new(struct ppw_stack_set **out, struct ppw_err *err)
{
    struct ppw_stack_set *set = calloc(1, sizeof *set);
    if (!set || !(set->arena = ppw_arena_new())) {
        free(set);
        return no_memory(err);
    }
    *out = set;
    return 0;
}

void ppw_stack_set_free(struct ppw_stack_set *set)
{
    if (!set)
        return;
    free(set->stacks);
    free(set->hashes);
    free(set->table);
    free(set->copied);
    ppw_strmap_free(&set->strings);
    ppw_arena_free(set->arena);
    free(set);
}

const char *ppw_stack_set_intern(struct ppw_stack_set *set, const char *s)
{
    bool added;
    if (!s)
        return NULL;
    struct ppw_strmap_entry *e = ppw_strmap_put(&set->strings, s, 0, &added);
    return e ? e->key : NULL;
}

/* Interned strings compare by pointer. */
static uint64_t hash_frames(const struct ppw_blame_frame *frames, size_t n, uint32_t thread)
{
    uint64_t h = ppw_fnv1a64(&thread, sizeof thread, PPW_FNV1A64_INIT);
    for (size_t i = 0; i < n; i++) {
        uintptr_t words[3] = {(uintptr_t)frames[i].function, (uintptr_t)frames[i].file,
                              (uintptr_t)frames[i].module};
        uint32_t where[3] = {frames[i].line, frames[i].col, frames[i].origin};
        h = ppw_fnv1a64(words, sizeof words, h);
        h = ppw_fnv1a64(where, sizeof where, h);
    }
    return h;
}

static bool same_frames(const struct ppw_blame_stack *s, const struct ppw_blame_frame *frames,
                        size_t n, const uint32_t *thread)
{
    if (s->nframes != n || (thread && s->thread != *thread))
        return false;
    for (size_t i = 0; i < n; i++) {
        const struct ppw_blame_frame *a = &s->frames[i], *b = &frames[i];
        if (a->function != b->function || a->file != b->file || a->line != b->line ||
            a->col != b->col || a->module != b->module || a->origin != b->origin)
            return false;
    }
    return true;
}

static size_t *table_slot(const struct ppw_stack_set *set, uint64_t hash,
                          const struct ppw_blame_frame *frames, size_t n, uint32_t thread)
{
    size_t mask = set->table_cap - 1;
    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        size_t k = set->table[i];
        if (!k || (set->hashes[k - 1] == hash && same_frames(&set->stacks[k - 1], frames, n,
                                                             set->split_threads ? &thread : NULL)))
            return &set->table[i];
    }
}

static bool grow(struct ppw_stack_set *set)
{
    if (set->count + 1 > set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 256;
        struct ppw_blame_stack *stacks = realloc(set->stacks, cap * sizeof *stacks);
        if (!stacks)
            return false;
        set->stacks = stacks;
        uint64_t *hashes = realloc(set->hashes, cap * sizeof *hashes);
        if (!hashes)
            return false;
        set->hashes = hashes;
        set->cap = cap;
    }
    if ((set->count + 1) * 2 <= set->table_cap)
        return true;
    size_t cap = set->table_cap ? set->table_cap * 2 : 512;
    size_t *table = calloc(cap, sizeof *table);
    if (!table)
        return false;
    free(set->table);
    set->table = table;
    set->table_cap = cap;
    for (size_t k = 0; k < set->count; k++) {
        const struct ppw_blame_stack *s = &set->stacks[k];
        *table_slot(set, set->hashes[k], s->frames, s->nframes,
                    set->split_threads ? s->thread : 0) = k + 1;
    }
    return true;
}

int ppw_stack_set_add(struct ppw_stack_set *set, const struct ppw_blame_frame *frames, size_t n,
                      uint64_t samples, double weight, uint32_t thread, struct ppw_err *err)
{
    if (!grow(set))
        return no_memory(err);
    set->samples += samples;
    set->weight += weight;
    /* Without split threads, every stack is keyed as thread 0 and keeps
     * UINT32_MAX once merged from several. */
    uint32_t key = set->split_threads ? thread : 0;
    uint64_t hash = hash_frames(frames, n, key);
    size_t *slot = table_slot(set, hash, frames, n, key);
    if (*slot) {
        struct ppw_blame_stack *s = &set->stacks[*slot - 1];
        s->samples += samples;
        s->weight += weight;
        if (s->thread != thread)
            s->thread = UINT32_MAX;
        return 0;
    }
    struct ppw_blame_frame *copy = NULL;
    if (n && !(copy = ppw_arena_calloc(set->arena, n, sizeof *copy)))
        return no_memory(err);
    if (n)
        memcpy(copy, frames, n * sizeof *copy);
    set->stacks[set->count] = (struct ppw_blame_stack){copy, n, samples, weight, thread};
    set->hashes[set->count] = hash;
    *slot = ++set->count;
    return 0;
}

int ppw_stack_set_add_copy(struct ppw_stack_set *set, const struct ppw_blame_stack *stack,
                           uint32_t thread, struct ppw_err *err)
{
    size_t n = stack->nframes;
    if (!ppw_array_reserve(&set->copied, &set->copied_cap, n, sizeof *set->copied))
        return no_memory(err);
    for (size_t i = 0; i < n; i++) {
        const struct ppw_blame_frame *from = &stack->frames[i];
        struct ppw_blame_frame *to = &set->copied[i];
        *to = *from;
        to->function = ppw_stack_set_intern(set, from->function);
        to->file = ppw_stack_set_intern(set, from->file);
        to->module = ppw_stack_set_intern(set, from->module);
        if ((from->function && !to->function) || (from->file && !to->file) ||
            (from->module && !to->module))
            return no_memory(err);
    }
    return ppw_stack_set_add(set, set->copied, n, stack->samples, stack->weight, thread, err);
}

void ppw_stack_set_split_threads(struct ppw_stack_set *set)
{
    set->split_threads = true;
}

const struct ppw_blame_stack *ppw_stack_set_stacks(const struct ppw_stack_set *set,
                                                   size_t *count)
{
    *count = set->count;
    return set->stacks;
}

uint64_t ppw_stack_set_samples(const struct ppw_stack_set *set)
{
    return set->samples;
}

double ppw_stack_set_weight(const struct ppw_stack_set *set)
{
    return set->weight;
}

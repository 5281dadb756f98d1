#include "strmap.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "ppw/static_format.h"

uint64_t ppw_strmap_hash(const char *s)
{
    return ppw_fnv1a64(s, strlen(s), PPW_FNV1A64_INIT);
}

static struct ppw_strmap_entry *slot_of(const struct ppw_strmap *map, const char *key,
                                        uint64_t hash)
{
    size_t mask = map->cap - 1;
    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        struct ppw_strmap_entry *e = &map->slots[i];
        if (!e->key || (e->hash == hash && strcmp(e->key, key) == 0))
            return e;
    }
}

struct ppw_strmap_entry *ppw_strmap_find(const struct ppw_strmap *map, const char *key)
{
    if (!map->cap)
        return NULL;
    struct ppw_strmap_entry *e = slot_of(map, key, ppw_strmap_hash(key));
    return e->key ? e : NULL;
}

/* Doubles the table (load factor at most 1/2). */
static bool grow(struct ppw_strmap *map)
{
    size_t cap = map->cap ? map->cap * 2 : 64;
    struct ppw_strmap_entry *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    struct ppw_strmap old = *map;
    map->slots = slots;
    map->cap = cap;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].key)
            *slot_of(map, old.slots[i].key, old.slots[i].hash) = old.slots[i];
    free(old.slots);
    return true;
}

struct ppw_strmap_entry *ppw_strmap_put(struct ppw_strmap *map, const char *key, size_t value,
                                        bool *added)
{
    *added = false;
    if ((map->count + 1) * 2 > map->cap && !grow(map))
        return NULL;
    if (!map->arena && !(map->arena = ppw_arena_new()))
        return NULL;
    uint64_t hash = ppw_strmap_hash(key);
    struct ppw_strmap_entry *e = slot_of(map, key, hash);
    if (e->key)
        return e;
    size_t len = strlen(key) + 1;
    char *copy = ppw_arena_alloc(map->arena, len);
    if (!copy)
        return NULL;
    memcpy(copy, key, len);
    *e = (struct ppw_strmap_entry){copy, hash, value};
    map->count++;
    *added = true;
    return e;
}

void ppw_strmap_free(struct ppw_strmap *map)
{
    free(map->slots);
    ppw_arena_free(map->arena);
    *map = (struct ppw_strmap){0};
}

bool ppw_strmultimap_add(struct ppw_strmultimap *m, const char *key, uint64_t item)
{
    bool added;
    if (!key[0])
        return true;
    struct ppw_strmap_entry *e = ppw_strmap_put(&m->keys, key, m->count, &added);
    if (!e)
        return false;
    if (added) {
        if (!ppw_array_reserve(&m->lists, &m->cap, m->count + 1, sizeof *m->lists))
            return false;
        m->lists[m->count++] = (struct ppw_strmultimap_list){0};
    }
    struct ppw_strmultimap_list *l = &m->lists[e->value];
    if (l->count && l->items[l->count - 1] == item)
        return true;
    if (!ppw_array_reserve(&l->items, &l->cap, l->count + 1, sizeof *l->items))
        return false;
    l->items[l->count++] = item;
    return true;
}

const struct ppw_strmultimap_list *ppw_strmultimap_find(const struct ppw_strmultimap *m,
                                                        const char *key)
{
    const struct ppw_strmap_entry *e = key ? ppw_strmap_find(&m->keys, key) : NULL;
    return e ? &m->lists[e->value] : NULL;
}

void ppw_strmultimap_free(struct ppw_strmultimap *m)
{
    for (size_t i = 0; i < m->count; i++)
        free(m->lists[i].items);
    free(m->lists);
    ppw_strmap_free(&m->keys);
    *m = (struct ppw_strmultimap){0};
}

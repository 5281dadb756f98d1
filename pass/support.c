#include "support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(void)
{
    fputs("ppw: fatal: out of memory in the blame analysis\n", stderr);
    abort();
}

void *ppw_xcalloc(size_t count, size_t size)
{
    void *pointer = calloc(count ? count : 1, size ? size : 1);
    if (!pointer)
        out_of_memory();
    return pointer;
}

void *ppw_xrealloc(void *pointer, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        out_of_memory();
    size_t bytes = count * size;
    void *grown = realloc(pointer, bytes ? bytes : 1);
    if (!grown)
        out_of_memory();
    return grown;
}

void *ppw_grow(void *items, size_t *capacity, size_t needed, size_t item_size, size_t initial)
{
    if (needed <= *capacity)
        return items;
    size_t grown = *capacity ? *capacity : initial;
    while (grown < needed)
        grown *= 2;
    *capacity = grown;
    return ppw_xrealloc(items, grown, item_size);
}

void ppw_intvec_push(struct ppw_intvec *vec, int value)
{
    vec->items = ppw_grow(vec->items, &vec->capacity, vec->count + 1, sizeof *vec->items, 4);
    vec->items[vec->count++] = value;
}

int ppw_intvec_contains(const struct ppw_intvec *vec, int value)
{
    for (size_t i = 0; i < vec->count; i++)
        if (vec->items[i] == value)
            return 1;
    return 0;
}

int ppw_intvec_add_unique(struct ppw_intvec *vec, int value)
{
    if (ppw_intvec_contains(vec, value))
        return 0;
    ppw_intvec_push(vec, value);
    return 1;
}

void ppw_intvec_free(struct ppw_intvec *vec)
{
    free(vec->items);
    vec->items = NULL;
    vec->count = vec->capacity = 0;
}

static size_t hash_pointer(const void *key, size_t capacity)
{
    uint64_t bits = (uint64_t)(uintptr_t)key;
    bits ^= bits >> 33;
    bits *= 0xff51afd7ed558ccdull;
    bits ^= bits >> 33;
    return (size_t)(bits & (capacity - 1));
}

static void ptrmap_grow(struct ppw_ptrmap *map)
{
    struct ppw_ptrmap bigger = {0};
    bigger.capacity = map->capacity ? map->capacity * 2 : 64;
    bigger.keys = ppw_xcalloc(bigger.capacity, sizeof *bigger.keys);
    bigger.values = ppw_xcalloc(bigger.capacity, sizeof *bigger.values);
    for (size_t i = 0; i < map->capacity; i++)
        if (map->keys[i])
            ppw_ptrmap_put(&bigger, map->keys[i], map->values[i]);
    ppw_ptrmap_free(map);
    *map = bigger;
}

void ppw_ptrmap_put(struct ppw_ptrmap *map, const void *key, int value)
{
    if ((map->count + 1) * 2 > map->capacity)
        ptrmap_grow(map);
    size_t slot = hash_pointer(key, map->capacity);
    while (map->keys[slot] && map->keys[slot] != key)
        slot = (slot + 1) & (map->capacity - 1);
    if (!map->keys[slot])
        map->count++;
    map->keys[slot] = key;
    map->values[slot] = value;
}

int ppw_ptrmap_get(const struct ppw_ptrmap *map, const void *key, int missing)
{
    if (!map->capacity || !key)
        return missing;
    size_t slot = hash_pointer(key, map->capacity);
    while (map->keys[slot]) {
        if (map->keys[slot] == key)
            return map->values[slot];
        slot = (slot + 1) & (map->capacity - 1);
    }
    return missing;
}

void ppw_ptrmap_free(struct ppw_ptrmap *map)
{
    free(map->keys);
    free(map->values);
    memset(map, 0, sizeof *map);
}

struct ppw_arena_block {
    struct ppw_arena_block *next;
    size_t used, size;
    char data[];
};

static char *arena_alloc(struct ppw_arena *arena, size_t size)
{
    struct ppw_arena_block *block = arena->blocks;
    if (!block || block->size - block->used < size) {
        size_t want = size > 60000 ? size : 60000;
        block = ppw_xcalloc(1, sizeof *block + want);
        block->size = want;
        block->next = arena->blocks;
        arena->blocks = block;
    }
    char *out = block->data + block->used;
    block->used += size;
    return out;
}

char *ppw_arena_strdup(struct ppw_arena *arena, const char *text)
{
    size_t length = strlen(text ? text : "");
    char *copy = arena_alloc(arena, length + 1);
    memcpy(copy, text ? text : "", length + 1);
    return copy;
}

char *ppw_arena_printf(struct ppw_arena *arena, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int length = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (length < 0)
        return ppw_arena_strdup(arena, "");
    char *out = arena_alloc(arena, (size_t)length + 1);
    va_start(args, format);
    vsnprintf(out, (size_t)length + 1, format, args);
    va_end(args);
    return out;
}

void ppw_arena_free(struct ppw_arena *arena)
{
    struct ppw_arena_block *block = arena->blocks;
    while (block) {
        struct ppw_arena_block *next = block->next;
        free(block);
        block = next;
    }
    arena->blocks = NULL;
}

#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
    struct arena_block *next;
    size_t used, size;
    unsigned char data[];
};

struct ppw_arena {
    struct arena_block *head;
};

enum { ARENA_BLOCK_SIZE = 64 * 1024, ARENA_ALIGN = alignof(max_align_t) };

struct ppw_arena *ppw_arena_new(void)
{
    return calloc(1, sizeof(struct ppw_arena));
}

static void *block_take(struct arena_block *block, size_t size)
{
    uintptr_t at = (uintptr_t)(block->data + block->used);
    size_t pad = (size_t)(-at & (ARENA_ALIGN - 1));
    size_t room = block->size - block->used;
    if (pad > room || size > room - pad)
        return NULL;
    block->used += pad + size;
    return (void *)(at + pad);
}

void *ppw_arena_alloc(struct ppw_arena *arena, size_t size)
{
    void *mem = arena->head ? block_take(arena->head, size) : NULL;
    if (mem)
        return mem;
    if (size > SIZE_MAX - sizeof(struct arena_block) - ARENA_ALIGN)
        return NULL;
    size_t cap = size + ARENA_ALIGN > ARENA_BLOCK_SIZE ? size + ARENA_ALIGN : ARENA_BLOCK_SIZE;
    struct arena_block *block = malloc(sizeof *block + cap);
    if (!block)
        return NULL;
    block->next = arena->head;
    block->used = 0;
    block->size = cap;
    arena->head = block;
    return block_take(block, size);
}

void *ppw_arena_calloc(struct ppw_arena *arena, size_t count, size_t size)
{
    if (count == 0 || count > SIZE_MAX / size)
        return NULL;
    void *mem = ppw_arena_alloc(arena, count * size);
    if (mem)
        memset(mem, 0, count * size);
    return mem;
}

void ppw_arena_free(struct ppw_arena *arena)
{
    if (!arena)
        return;
    struct arena_block *block = arena->head;
    while (block) {
        struct arena_block *next = block->next;
        free(block);
        block = next;
    }
    free(arena);
}

bool ppw_array_reserve(void *items, size_t *cap, size_t need, size_t item_size)
{
    if (need <= *cap)
        return true;
    size_t cap2 = *cap ? *cap : 16;
    while (cap2 < need) {
        if (cap2 > SIZE_MAX / 2 / item_size)
            return false;
        cap2 *= 2;
    }
    void *grown = realloc(*(void **)items, cap2 * item_size);
    if (!grown)
        return false;
    *(void **)items = grown;
    *cap = cap2;
    return true;
}

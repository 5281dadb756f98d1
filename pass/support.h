/* Containers the pass modules share: growable int vectors, a pointer-keyed
 * hash map and a string arena.  Allocation failure aborts the compile with a
 * message, as LLVM itself does; the pass never returns half-built graphs. */
#ifndef PPW_PASS_SUPPORT_H
#define PPW_PASS_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

struct ppw_intvec {
    int *items;
    size_t count, capacity;
};

void ppw_intvec_push(struct ppw_intvec *vec, int value);
/* Appends value unless already present (linear: for short sets). */
int ppw_intvec_add_unique(struct ppw_intvec *vec, int value);
int ppw_intvec_contains(const struct ppw_intvec *vec, int value);
void ppw_intvec_free(struct ppw_intvec *vec);

/* Open-addressing map from non-NULL pointers to ints. */
struct ppw_ptrmap {
    const void **keys;
    int *values;
    size_t capacity, count;
};

void ppw_ptrmap_put(struct ppw_ptrmap *map, const void *key, int value);
/* Returns the value, or `missing` when the key is absent. */
int ppw_ptrmap_get(const struct ppw_ptrmap *map, const void *key, int missing);
void ppw_ptrmap_free(struct ppw_ptrmap *map);

/* Bump allocator for strings that live as long as one module's analysis. */
struct ppw_arena {
    struct ppw_arena_block *blocks;
};

char *ppw_arena_strdup(struct ppw_arena *arena, const char *text);
char *ppw_arena_printf(struct ppw_arena *arena, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void ppw_arena_free(struct ppw_arena *arena);

void *ppw_xcalloc(size_t count, size_t size);
/* Returns `items` with room for at least `needed` items, doubling
 * *capacity (from `initial`) when it must grow. */
void *ppw_grow(void *items, size_t *capacity, size_t needed, size_t item_size, size_t initial);
void *ppw_xrealloc(void *pointer, size_t count, size_t size);

#endif

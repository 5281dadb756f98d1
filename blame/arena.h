/* A bump allocator: a loaded graph or profile lives in one arena and is
 * freed at once, so readers never track individual strings and arrays.
 * And the growth of malloc'ed arrays. */
#ifndef PPW_BLAME_ARENA_H
#define PPW_BLAME_ARENA_H

#include <stdbool.h>
#include <stddef.h>

struct ppw_arena;

/* NULL when out of memory. */
struct ppw_arena *ppw_arena_new(void);

/* Memory aligned for any type, or NULL when out of memory. */
void *ppw_arena_alloc(struct ppw_arena *arena, size_t size);

/* count * size zeroed bytes; NULL when count is 0, on overflow or when out
 * of memory. */
void *ppw_arena_calloc(struct ppw_arena *arena, size_t count, size_t size);

void ppw_arena_free(struct ppw_arena *arena);

/* Grows the malloc'ed array *items (of item_size bytes each, *cap of them)
 * to hold at least need items, doubling; false when out of memory (the
 * array is left as it was). */
bool ppw_array_reserve(void *items, size_t *cap, size_t need, size_t item_size);

#endif

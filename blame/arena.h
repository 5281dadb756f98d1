/* A bump allocator: a loaded graph or profile lives in one arena and is
 * freed at once, so readers never track individual strings and arrays. */
#ifndef PPW_BLAME_ARENA_H
#define PPW_BLAME_ARENA_H

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

#endif

/* A string-keyed hash table (open addressing) mapping strings to a size_t.
 * Keys are copied into the table's arena, so a key's stored copy doubles as
 * an interned string: equal strings put into one table share one pointer. */
#ifndef PPW_BLAME_STRMAP_H
#define PPW_BLAME_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ppw_arena;

struct ppw_strmap_entry {
    const char *key; /* the table's copy; NULL: an empty slot */
    uint64_t hash;
    size_t value;
};

struct ppw_strmap {
    struct ppw_strmap_entry *slots;
    size_t cap, count;       /* cap is 0 or a power of two */
    struct ppw_arena *arena; /* owns the keys; created on first put */
};

/* The entry of key, or NULL. */
struct ppw_strmap_entry *ppw_strmap_find(const struct ppw_strmap *map, const char *key);

/* The entry of key, inserted with value when absent (*added says which);
 * NULL when out of memory. */
struct ppw_strmap_entry *ppw_strmap_put(struct ppw_strmap *map, const char *key, size_t value,
                                        bool *added);

/* Frees the slots and the keys; the map is empty again. */
void ppw_strmap_free(struct ppw_strmap *map);

uint64_t ppw_strmap_hash(const char *s);

/* Items (function indices, calls as func << 32 | call) under string keys:
 * a function's source and linkage names, a callee's calls. */
struct ppw_strmultimap_list {
    uint64_t *items;
    size_t count, cap;
};

struct ppw_strmultimap {
    struct ppw_strmap keys; /* key -> index into lists */
    struct ppw_strmultimap_list *lists;
    size_t count, cap;
};

/* Adds item under key ("" adds nothing; an item equal to the key's last,
 * as a name equal to the linkage name, is not added again).  False when
 * out of memory. */
bool ppw_strmultimap_add(struct ppw_strmultimap *m, const char *key, uint64_t item);
/* The items under key (NULL: none), or NULL. */
const struct ppw_strmultimap_list *ppw_strmultimap_find(const struct ppw_strmultimap *m,
                                                        const char *key);
void ppw_strmultimap_free(struct ppw_strmultimap *m);

#endif

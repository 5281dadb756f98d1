/* Open-addressing hash tables with linear probing whose entries their
 * modules define (attribution's memos and indexes): one way to grow them.
 * A table's capacity is 0 or a power of two; its entries are placed at
 * place(entry) & (capacity - 1), or the next free one after it. */
#ifndef PPW_BLAME_OPEN_TABLE_H
#define PPW_BLAME_OPEN_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where an entry goes (its hash), and whether an entry is in use; ctx is
 * the table's owner, for entries that are ids of items kept elsewhere. */
typedef uint64_t ppw_open_table_place_fn(const void *entry, const void *ctx);
typedef bool ppw_open_table_used_fn(const void *entry, const void *ctx);

struct ppw_open_table_kind {
    size_t entry_size;
    size_t first_cap; /* a power of two */
    ppw_open_table_place_fn *place;
    ppw_open_table_used_fn *used;
};

/* Makes room for one entry more than count in *table (*cap entries): when
 * that would fill more than half of it, a table twice as large (zeroed,
 * which must read as unused) takes every used entry at its place.  False
 * when out of memory; the table is then unchanged. */
bool ppw_open_table_grow(void **table, size_t *cap, size_t count,
                         const struct ppw_open_table_kind *kind, const void *ctx);
static inline bool ppw_open_table_reserve(void **table, size_t *cap, size_t count,
                                          const struct ppw_open_table_kind *kind, const void *ctx)
{
    return (count + 1) * 2 <= *cap || ppw_open_table_grow(table, cap, count, kind, ctx);
}

#endif

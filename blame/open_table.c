/* Growing open-addressing tables (open_table.h). */
#include "open_table.h"

#include <stdlib.h>
#include <string.h>

bool ppw_open_table_grow(void **table, size_t *cap, size_t count,
                         const struct ppw_open_table_kind *kind, const void *ctx)
{
    if ((count + 1) * 2 <= *cap)
        return true;
    size_t new_cap = *cap ? *cap * 2 : kind->first_cap, mask = new_cap - 1;
    char *fresh = calloc(new_cap, kind->entry_size);
    if (!fresh)
        return false;
    const char *old = *table;
    for (size_t i = 0; i < *cap; i++) {
        const void *entry = old + i * kind->entry_size;
        if (!kind->used(entry, ctx))
            continue;
        size_t k = (size_t)kind->place(entry, ctx) & mask;
        while (kind->used(fresh + k * kind->entry_size, ctx))
            k = (k + 1) & mask;
        memcpy(fresh + k * kind->entry_size, entry, kind->entry_size);
    }
    free(*table);
    *table = fresh;
    *cap = new_cap;
    return true;
}

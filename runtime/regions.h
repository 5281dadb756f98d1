/* The process-wide region registry and what each GASP tag means.
 *
 * A region is what a profile timer and a trace record name: a function
 * (GASP_C_FUNC, keyed by its funcsig pointer), a library operation at one
 * call site (a PPW_GASP_CALLS tag, keyed by tag, file pointer, line and
 * column), a user event (gasp_create_event), or an unknown tag (keyed by
 * the tag alone, named "tag <n>").  Region ids are 1-based and
 * process-wide; each new region gets one PPW_RUN_REGION record in run.ppw.
 *
 * Interning takes a mutex: callers keep a per-thread cache in front of it
 * (measure.c).  User events and tag information are read without a lock.
 * Not used in signal context. */
#ifndef PPW_RUNTIME_REGIONS_H
#define PPW_RUNTIME_REGIONS_H

#include <stdint.h>

/* What identifies a region.  ptr is the funcsig for functions, the file
 * for call sites and NULL for unknown tags; line and col are 0 except for
 * call sites. */
struct ppw_region_key {
    const void *ptr;
    uint32_t tag;
    int32_t line;
    int32_t col;
};

static inline uint64_t ppw_regions_key_hash(const struct ppw_region_key *k)
{
    uint64_t h = (uint64_t)(uintptr_t)k->ptr * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)k->tag << 32 | (uint32_t)k->line) * 0xc2b2ae3d27d4eb4full;
    h ^= (uint64_t)(uint32_t)k->col * 0x165667b19e3779f9ull;
    return h ^ (h >> 29);
}

static inline int ppw_regions_key_equal(const struct ppw_region_key *a,
                                        const struct ppw_region_key *b)
{
    return a->ptr == b->ptr && a->tag == b->tag && a->line == b->line && a->col == b->col;
}

/* A tag of the PPW_GASP_CALLS table (GASP_C_FUNC excluded). */
struct ppw_tag_info {
    const char *name;    /* symbolic name, "GASP_C_MALLOC" */
    uint32_t op;         /* enum ppw_op */
    uint8_t nargs_start; /* START's 64-bit varargs: max ppw_gasp_row_varargs over its rows */
    uint8_t nargs_end;   /* of END: that + has_result */
};

/* Builds the tag tables; idempotent.  ppw_measure_init calls it. */
void ppw_regions_init(void);

/* The table entry of a library-operation tag, or NULL for GASP_C_FUNC,
 * user events and tags ppw does not know. */
const struct ppw_tag_info *ppw_regions_tag(unsigned tag);

/* The region of key, registered (with its PPW_RUN_REGION record) on first
 * sight; file/line/col are those of the first event.  0 when the registry
 * is full. */
uint32_t ppw_regions_intern(const struct ppw_region_key *key, const char *file, int line, int col);

/* A user event's region and description (NULL when none); 0 when tag is
 * not an event gasp_create_event returned.  Lock-free. */
uint32_t ppw_regions_user(unsigned tag, const char **desc);
/* A user event id in [GASP_PPW_USEREVT_START, GASP_PPW_USEREVT_END], or 0
 * when they are exhausted.  The same (name, desc) gets the same id. */
unsigned ppw_regions_create_user(const char *name, const char *desc);

/* The region's name ("" for an unknown id). */
const char *ppw_regions_name(uint32_t id);
/* 1 the first time it is called for id in this process, else 0: for
 * once-per-region notes. */
int ppw_regions_claim_note(uint32_t id);
/* Regions registered so far. */
uint32_t ppw_regions_count(void);

/* fork(): prepare/parent hold the registry mutex across the fork, child
 * releases it in the child. */
void ppw_regions_fork_prepare(void);
void ppw_regions_fork_parent(void);
void ppw_regions_fork_child(void);
/* Writes every PPW_RUN_REGION record again (a fork()ed child's run file). */
void ppw_regions_rewrite(void);

#endif

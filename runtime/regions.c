/* The region registry: see regions.h. */
#include "regions.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "ppw/gasp.h"
#include "ppw/gasp_events.h"
#include "ppw/run_format.h"
#include "runfile.h"

/* ---- tags --------------------------------------------------------------- */

/* ppw's library tags all lie in [TAG_BASE, TAG_BASE + TAG_RANGE). */
#define TAG_BASE 1000u
#define TAG_RANGE 512u
#define TAG_IN_RANGE(tag, name, op)                                                                \
    _Static_assert((tag) >= TAG_BASE && (tag) < TAG_BASE + TAG_RANGE, name " out of range");
PPW_GASP_TAGS(TAG_IN_RANGE)
#undef TAG_IN_RANGE

static struct ppw_tag_info tags[TAG_RANGE]; /* name NULL: not a library tag */
static pthread_once_t tags_once = PTHREAD_ONCE_INIT;

static void build_tags(void)
{
#define TAG_ROW(tag, text, opv)                                                                    \
    if ((tag) != GASP_C_FUNC && (tag) != GASP_C_FUNC_GATED) {                                      \
        tags[(tag)-TAG_BASE].name = (text);                                                        \
        tags[(tag)-TAG_BASE].op = (opv);                                                           \
    }
    PPW_GASP_TAGS(TAG_ROW)
#undef TAG_ROW
    /* Rows sharing a tag agree on their varargs (test/runtime checks it);
     * the maximum is taken anyway, so that no forwarded operand is lost
     * should a row ever differ. */
#define CALL_ROW(tag, callee, opv, mask, has_result)                                               \
    {                                                                                              \
        struct ppw_tag_info *ti = &tags[(tag)-TAG_BASE];                                           \
        unsigned n = ppw_gasp_row_varargs(mask);                                           \
        if (n > ti->nargs_start)                                                                   \
            ti->nargs_start = (uint8_t)n;                                                          \
        if (n + (has_result) > ti->nargs_end)                                                      \
            ti->nargs_end = (uint8_t)(n + (has_result));                                           \
    }
    PPW_GASP_CALLS(CALL_ROW)
#undef CALL_ROW
}

void ppw_regions_init(void)
{
    pthread_once(&tags_once, build_tags);
}

const struct ppw_tag_info *ppw_regions_tag(unsigned tag)
{
    if (tag - TAG_BASE >= TAG_RANGE || !tags[tag - TAG_BASE].name)
        return NULL;
    return &tags[tag - TAG_BASE];
}

/* ---- storage ------------------------------------------------------------ */

/* Regions live in fixed chunks that never move, so a reader holding an id
 * (obtained under the mutex, or through the user-event table's release
 * store) can read its entry without the lock. */
#define CHUNK_BITS 10
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 1024u /* 1M regions */

struct region {
    uint32_t kind, tag, op, line, col;
    atomic_int noted;
    const char *name;
    const char *file;
};

struct entry {
    struct ppw_region_key key;
    uint32_t id; /* 0: empty */
};

struct user_event {
    _Atomic uint32_t region; /* 0 until created */
    const char *name;
    const char *desc;
};

#define NUSER (GASP_PPW_USEREVT_END - GASP_PPW_USEREVT_START + 1)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct region *chunks[MAX_CHUNKS];
static _Atomic uint32_t nregions;
static struct entry *table; /* open addressing, under lock */
static uint32_t table_mask, table_used;
static struct user_event users[NUSER];
static uint32_t nusers;
static char *arena, *arena_end; /* string copies, under lock */

static void *map_anon(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static const char *arena_copy(const char *s)
{
    size_t n = strlen(s) + 1;
    if (n > (size_t)(arena_end - arena)) {
        size_t size = n > 65536 ? n : 65536;
        char *a = map_anon(size);
        if (!a)
            return "";
        arena = a;
        arena_end = a + size;
    }
    char *copy = memcpy(arena, s, n);
    arena += n;
    return copy;
}

static struct entry *table_find(const struct ppw_region_key *k)
{
    for (uint64_t i = ppw_regions_key_hash(k) & table_mask;; i = (i + 1) & table_mask)
        if (!table[i].id || ppw_regions_key_equal(&table[i].key, k))
            return &table[i];
}

/* Keeps the table at most half full.  0, or -1 without memory. */
static int table_reserve(void)
{
    if (table && (table_used + 1) * 2 <= table_mask + 1)
        return 0;
    uint32_t cap = table ? (table_mask + 1) * 2 : 1024;
    struct entry *old = table, *fresh = map_anon(cap * sizeof *fresh);
    uint32_t old_cap = table ? table_mask + 1 : 0;
    if (!fresh)
        return -1;
    table = fresh;
    table_mask = cap - 1;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].id)
            *table_find(&old[i].key) = old[i];
    if (old)
        munmap(old, old_cap * sizeof *old);
    return 0;
}

static struct region *region_at(uint32_t id)
{
    return &chunks[(id - 1) >> CHUNK_BITS][(id - 1) & (CHUNK_SIZE - 1)];
}

static void write_record(uint32_t id)
{
    const struct region *r = region_at(id);
    struct ppw_rec_region rec = {
        .id = id, .kind = r->kind, .tag = r->tag, .op = r->op, .line = r->line, .col = r->col};
    const char *strings[2] = {r->name, r->file};
    ppw_runfile_append(PPW_RUN_REGION, &rec, sizeof rec, 2, strings);
}

/* A new region (under lock); 0 when the registry is full. */
static uint32_t region_new(uint32_t kind, uint32_t tag, uint32_t op, const char *name,
                           const char *file, int line, int col)
{
    uint32_t id = atomic_load_explicit(&nregions, memory_order_relaxed) + 1;
    uint32_t chunk = (id - 1) >> CHUNK_BITS;
    if (chunk >= MAX_CHUNKS)
        return 0;
    if (!chunks[chunk] && !(chunks[chunk] = map_anon(CHUNK_SIZE * sizeof(struct region))))
        return 0;
    struct region *r = region_at(id);
    /* Copies: a function's name and file are strings of the object that
     * sent the event, which dlclose may unmap while the region lives on
     * (a fork()ed child writes every region again). */
    *r = (struct region){.kind = kind,
                         .tag = tag,
                         .op = op,
                         .name = kind == PPW_REGION_FUNCTION ? arena_copy(name) : name,
                         .file = file && *file ? arena_copy(file) : "",
                         .line = line > 0 ? (uint32_t)line : 0,
                         .col = col > 0 ? (uint32_t)col : 0};
    atomic_store_explicit(&nregions, id, memory_order_release);
    write_record(id);
    return id;
}

/* ---- the registry ------------------------------------------------------- */

static uint32_t intern_locked(const struct ppw_region_key *key, const char *file, int line, int col)
{
    if (table_reserve() < 0)
        return 0;
    struct entry *e = table_find(key);
    if (e->id)
        return e->id;
    const struct ppw_tag_info *ti = ppw_regions_tag(key->tag);
    uint32_t id;
    if (key->tag == GASP_C_FUNC) {
        const char *name = key->ptr ? (const char *)key->ptr : "<unknown function>";
        id = region_new(PPW_REGION_FUNCTION, key->tag, PPW_OP_FUNCTION, name, file, line, col);
    } else if (ti) {
        id = region_new(PPW_REGION_CALLSITE, key->tag, ti->op, ti->name, file, line, col);
    } else {
        /* GASP: a tool must tolerate events it does not know. */
        char name[32];
        snprintf(name, sizeof name, "tag %u", key->tag);
        id = region_new(PPW_REGION_CALLSITE, key->tag, PPW_OP_USER_REGION, arena_copy(name), file,
                        line, col);
    }
    if (id) {
        e->key = *key;
        e->id = id;
        table_used++;
    }
    return id;
}

uint32_t ppw_regions_intern(const struct ppw_region_key *key, const char *file, int line, int col)
{
    pthread_mutex_lock(&lock);
    uint32_t id = intern_locked(key, file, line, col);
    pthread_mutex_unlock(&lock);
    return id;
}

uint32_t ppw_regions_user(unsigned tag, const char **desc)
{
    unsigned i = tag - GASP_PPW_USEREVT_START;
    if (i >= NUSER)
        return 0;
    uint32_t region = atomic_load_explicit(&users[i].region, memory_order_acquire);
    if (region)
        *desc = users[i].desc;
    return region;
}

static unsigned create_user_locked(const char *name, const char *desc)
{
    for (uint32_t i = 0; i < nusers; i++) {
        const struct user_event *u = &users[i];
        if (strcmp(u->name, name) == 0 && (u->desc ? desc && strcmp(u->desc, desc) == 0 : !desc))
            return GASP_PPW_USEREVT_START + i;
    }
    if (nusers == NUSER)
        return 0;
    unsigned tag = GASP_PPW_USEREVT_START + nusers;
    struct user_event *u = &users[nusers];
    u->name = arena_copy(name);
    u->desc = desc ? arena_copy(desc) : NULL;
    uint32_t region = region_new(PPW_REGION_USER, tag, PPW_OP_USER_REGION, u->name, "", 0, 0);
    if (!region)
        return 0;
    nusers++;
    atomic_store_explicit(&u->region, region, memory_order_release);
    return tag;
}

unsigned ppw_regions_create_user(const char *name, const char *desc)
{
    pthread_mutex_lock(&lock);
    unsigned tag = create_user_locked(name ? name : "", desc);
    pthread_mutex_unlock(&lock);
    return tag;
}

const char *ppw_regions_name(uint32_t id)
{
    if (id == 0 || id > atomic_load_explicit(&nregions, memory_order_acquire))
        return "";
    return region_at(id)->name;
}

int ppw_regions_claim_note(uint32_t id)
{
    if (id == 0 || id > atomic_load_explicit(&nregions, memory_order_acquire))
        return 0;
    return atomic_exchange(&region_at(id)->noted, 1) == 0;
}

uint32_t ppw_regions_count(void)
{
    return atomic_load_explicit(&nregions, memory_order_acquire);
}

void ppw_regions_fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

void ppw_regions_fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

void ppw_regions_fork_child(void)
{
    /* The forking thread took the lock in prepare and is the child's only thread. */
    pthread_mutex_unlock(&lock);
}

void ppw_regions_rewrite(void)
{
    pthread_mutex_lock(&lock);
    uint32_t n = atomic_load_explicit(&nregions, memory_order_relaxed);
    for (uint32_t id = 1; id <= n; id++)
        write_record(id);
    pthread_mutex_unlock(&lock);
}

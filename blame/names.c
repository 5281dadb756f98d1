/* Source names (names.h; docs/ppw-blame.md, "Names"). */
#include "names.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "ppw/static_format.h"
#include "read_graph.h"
#include "strmap.h"

enum { NO_FUNC = -1 };

struct func_name {
    const char *source; /* the source function: a string of the graph */
    const char *shown;  /* interned in names->strings */
    bool construct;     /* a piece of an OpenMP construct */
    uint8_t state;      /* 0: not named yet, 1: being named, 2: named */
};

/* A frame's function, looked up once per (function, file) pointer pair:
 * the stack set interns both. */
struct frame_slot {
    const char *function, *file; /* function NULL: empty */
    int64_t func;
};

struct ppw_names {
    const struct ppw_static_graph *graph;
    struct func_name *funcs;
    struct ppw_strmultimap by_name; /* source and linkage names -> functions */
    struct ppw_strmultimap callers; /* callee -> its FORK, TASK and direct calls */
    struct ppw_strmap strings; /* every name shown, interned; value 1: a function with a graph */
    struct frame_slot *cache;
    size_t cache_cap, cache_count;
    bool oom;
};

/* ---- small helpers ---- */

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static const char *plain_name(const struct ppw_static_func *f)
{
    return f->name[0] ? f->name : f->linkage_name;
}

bool ppw_names_same_file(const char *a, const char *b)
{
    if (!a || !b || a == b)
        return true;
    size_t la = strlen(a), lb = strlen(b);
    if (la < lb) {
        const char *t = a;
        a = b, b = t;
        size_t tl = la;
        la = lb, lb = tl;
    }
    return strcmp(a + la - lb, b) == 0 && (la == lb || a[la - lb - 1] == '/');
}

static const char *intern(struct ppw_names *nm, const char *s, bool has_graph)
{
    bool added;
    struct ppw_strmap_entry *e = ppw_strmap_put(&nm->strings, s, has_graph, &added);
    if (!e) {
        nm->oom = true;
        return NULL;
    }
    e->value |= has_graph;
    return e->key;
}

/* ---- the functions of the graph ---- */

/* Code the compiler made: an OpenMP outlined body, wrapper, task entry or
 * helper.  No C identifier has a '.'. */
bool ppw_names_compiler_made(const struct ppw_static_func *f)
{
    return (f->flags & PPW_FUNC_OUTLINED) || f->parent[0] || strstr(f->linkage_name, ".omp") ||
           strstr(f->name, ".omp") || starts(f->linkage_name, "__omp_offloading");
}

/* The function named name, in unit when there is one there. */
static int64_t find_in_unit(const struct ppw_names *nm, const char *name, size_t unit)
{
    const struct ppw_strmultimap_list *l = ppw_strmultimap_find(&nm->by_name, name);
    if (!l)
        return NO_FUNC;
    for (size_t i = 0; i < l->count; i++)
        if (nm->graph->funcs[l->items[i]].unit == unit)
            return (int64_t)l->items[i];
    return (int64_t)l->items[0];
}

static const struct ppw_static_call *call_of(const struct ppw_names *nm, uint64_t ref)
{
    return &nm->graph->funcs[ref >> 32].calls[ref & UINT32_MAX];
}

/* The first call of kind (0: FORK or TASK) naming f, in f's unit. */
static bool find_caller(const struct ppw_names *nm, size_t fi, uint32_t kind, uint64_t *ref)
{
    const struct ppw_static_func *f = &nm->graph->funcs[fi];
    const char *names[2] = {f->linkage_name, f->name};
    for (size_t k = 0; k < 2; k++) {
        const struct ppw_strmultimap_list *l = ppw_strmultimap_find(&nm->callers, names[k]);
        for (size_t i = 0; l && i < l->count; i++) {
            const struct ppw_static_call *c = call_of(nm, l->items[i]);
            const struct ppw_static_func *caller = &nm->graph->funcs[l->items[i] >> 32];
            bool wanted =
                kind ? c->kind == kind : c->kind == PPW_CALL_FORK || c->kind == PPW_CALL_TASK;
            if (wanted && caller->unit == f->unit &&
                (kind != PPW_CALL_DIRECT || ppw_names_compiler_made(caller))) {
                *ref = l->items[i];
                return true;
            }
        }
    }
    return false;
}

static bool calls_at(const struct ppw_static_func *f, const char *prefix, uint32_t line,
                     uint32_t or_line)
{
    for (size_t i = 0; i < f->call_count; i++)
        if (starts(f->calls[i].callee, prefix) &&
            (f->calls[i].line == line || f->calls[i].line == or_line))
            return true;
    return false;
}

/* A worksharing loop set up at line (a combined "parallel for"), in f or in
 * the outlined twin it calls; or at the first line of that code (the loop
 * of a collapse clause starts there). */
static bool loop_at(const struct ppw_names *nm, const struct ppw_static_func *f, uint32_t line,
                    int depth)
{
    static const char *const init[] = {"__kmpc_for_static_init", "__kmpc_dispatch_init",
                                       "__kmpc_dist_for_static_init"};
    for (size_t i = 0; i < sizeof init / sizeof init[0]; i++)
        if (calls_at(f, init[i], line, f->line))
            return true;
    for (size_t i = 0; i < f->call_count && depth == 0; i++) {
        int64_t b = f->calls[i].kind == PPW_CALL_DIRECT
                        ? find_in_unit(nm, f->calls[i].callee, f->unit)
                        : NO_FUNC;
        if (b != NO_FUNC && ppw_names_compiler_made(&nm->graph->funcs[b]) &&
            loop_at(nm, &nm->graph->funcs[b], line, depth + 1))
            return true;
    }
    return false;
}

static void name_func(struct ppw_names *nm, size_t fi);

static const char *source_of(struct ppw_names *nm, size_t fi)
{
    name_func(nm, fi);
    return nm->funcs[fi].source;
}

static void set_construct(struct ppw_names *nm, size_t fi, const char *source,
                          const char *construct, const char *file, uint32_t line)
{
    char shown[1024];
    if (file && file[0] && line)
        snprintf(shown, sizeof shown, "%s [%s, %s:%" PRIu32 "]", source, construct, base_name(file),
                 line);
    else
        snprintf(shown, sizeof shown, "%s [%s]", source, construct);
    nm->funcs[fi] = (struct func_name){source, intern(nm, shown, true), true, 2};
}

/* Named by the FORK or TASK call ref, which starts its construct. */
static void name_by_call(struct ppw_names *nm, size_t fi, uint64_t ref)
{
    size_t gi = ref >> 32;
    const struct ppw_static_func *f = &nm->graph->funcs[fi], *g = &nm->graph->funcs[gi];
    const struct ppw_static_call *c = call_of(nm, ref);
    const char *construct;
    if (c->kind == PPW_CALL_FORK)
        construct = loop_at(nm, f, c->line, 0) ? "omp parallel for" : "omp parallel";
    else
        construct = calls_at(g, "__kmpc_taskloop", c->line, c->line) ? "omp taskloop" : "omp task";
    set_construct(nm, fi, source_of(nm, gi), construct, g->file, c->line);
}

/* The source function around line of file: the last one starting before it. */
static int64_t enclosing(const struct ppw_names *nm, const struct ppw_static_func *f)
{
    int64_t best = NO_FUNC;
    for (size_t i = 0; i < nm->graph->func_count; i++) {
        const struct ppw_static_func *g = &nm->graph->funcs[i];
        if (g->unit == f->unit && strcmp(g->file, f->file) == 0 && !ppw_names_compiler_made(g) &&
            g->line && g->line <= f->line &&
            (best == NO_FUNC || g->line > nm->graph->funcs[best].line))
            best = (int64_t)i;
    }
    return best;
}

/* Code the compiler made that no FORK or TASK call names, directly or
 * through a neighbour: named by the function it came from, else by a
 * construct starting on its line, else by the function around it. */
static void name_helper(struct ppw_names *nm, size_t fi)
{
    const struct ppw_static_func *f = &nm->graph->funcs[fi];
    const char *construct = strstr(f->linkage_name, ".omp.reduction.") ? "omp reduction"
                            : strstr(f->linkage_name, "omp_outlined") && f->parent[0]
                                ? "omp parallel"
                                : "omp";
    int64_t parent = f->parent[0] ? find_in_unit(nm, f->parent, f->unit) : NO_FUNC;
    if (parent != NO_FUNC) {
        set_construct(nm, fi, source_of(nm, (size_t)parent), construct, f->file, f->line);
        return;
    }
    for (size_t gi = 0; gi < nm->graph->func_count; gi++) {
        const struct ppw_static_func *g = &nm->graph->funcs[gi];
        for (size_t k = 0; g->unit == f->unit && strcmp(g->file, f->file) == 0 && k < g->call_count;
             k++)
            if ((g->calls[k].kind == PPW_CALL_FORK || g->calls[k].kind == PPW_CALL_TASK) &&
                g->calls[k].line == f->line && f->line) {
                name_by_call(nm, fi, (uint64_t)gi << 32 | k);
                return;
            }
    }
    int64_t around = enclosing(nm, f);
    if (around != NO_FUNC)
        set_construct(nm, fi, source_of(nm, (size_t)around), construct, f->file, f->line);
    else
        set_construct(nm, fi, f->parent[0] ? f->parent : "?", construct, f->file, f->line);
}

/* Fills nm->funcs[fi] once. */
static void name_func(struct ppw_names *nm, size_t fi)
{
    struct func_name *n = &nm->funcs[fi];
    const struct ppw_static_func *f = &nm->graph->funcs[fi];
    if (n->state)
        return;
    n->source = plain_name(f); /* also what a loop of references gets */
    n->state = 1;
    if (!ppw_names_compiler_made(f)) {
        *n = (struct func_name){n->source, intern(nm, n->source, true), false, 2};
        return;
    }
    uint64_t ref;
    if (find_caller(nm, fi, 0, &ref)) {
        name_by_call(nm, fi, ref);
        return;
    }
    /* the _debug__ twin a wrapper calls: the wrapper's name */
    if (find_caller(nm, fi, PPW_CALL_DIRECT, &ref)) {
        size_t gi = ref >> 32;
        name_func(nm, gi);
        if (nm->funcs[gi].state == 2 && nm->funcs[gi].construct) {
            nm->funcs[fi] = nm->funcs[gi];
            return;
        }
    }
    /* a task entry: the name of the task body it calls */
    for (size_t i = 0; i < f->call_count; i++) {
        int64_t b = f->calls[i].kind == PPW_CALL_DIRECT
                        ? find_in_unit(nm, f->calls[i].callee, f->unit)
                        : NO_FUNC;
        if (b != NO_FUNC && ppw_names_compiler_made(&nm->graph->funcs[b]) &&
            find_caller(nm, (size_t)b, 0, &ref)) {
            name_func(nm, (size_t)b);
            if (nm->funcs[b].state == 2) {
                nm->funcs[fi] = nm->funcs[b];
                return;
            }
        }
    }
    name_helper(nm, fi);
}

int ppw_names_new(const struct ppw_static_graph *graph, struct ppw_names **out, struct ppw_err *err)
{
    struct ppw_names *nm = calloc(1, sizeof *nm);
    *out = NULL;
    if (!nm || !(nm->funcs = calloc(graph->func_count + 1, sizeof *nm->funcs)))
        goto oom;
    nm->graph = graph;
    for (size_t i = 0; i < graph->func_count; i++) {
        const struct ppw_static_func *f = &graph->funcs[i];
        if (!ppw_strmultimap_add(&nm->by_name, f->name, i) ||
            !ppw_strmultimap_add(&nm->by_name, f->linkage_name, i))
            goto oom;
        for (size_t k = 0; k < f->call_count; k++) {
            uint32_t kind = f->calls[k].kind;
            if ((kind == PPW_CALL_FORK || kind == PPW_CALL_TASK || kind == PPW_CALL_DIRECT) &&
                !ppw_strmultimap_add(&nm->callers, f->calls[k].callee, (uint64_t)i << 32 | k))
                goto oom;
        }
    }
    for (size_t i = 0; i < graph->func_count; i++)
        name_func(nm, i);
    if (nm->oom)
        goto oom;
    *out = nm;
    return 0;
oom:
    ppw_names_free(nm);
    return ppw_err_set(err, PPW_ENOMEM, "out of memory naming functions");
}

void ppw_names_free(struct ppw_names *nm)
{
    if (!nm)
        return;
    free(nm->funcs);
    ppw_strmultimap_free(&nm->by_name);
    ppw_strmultimap_free(&nm->callers);
    ppw_strmap_free(&nm->strings);
    free(nm->cache);
    free(nm);
}

const char *ppw_names_function(const struct ppw_names *nm, size_t func)
{
    return nm->funcs[func].shown;
}

const char *ppw_names_source(const struct ppw_names *nm, size_t func)
{
    return nm->funcs[func].source;
}

bool ppw_names_same_frame(const struct ppw_names *nm, size_t outer, size_t inner)
{
    return nm->funcs[outer].construct && nm->funcs[inner].construct &&
           nm->funcs[outer].shown == nm->funcs[inner].shown;
}

const struct ppw_static_graph *ppw_names_graph(const struct ppw_names *nm)
{
    return nm->graph;
}

bool ppw_names_construct(const struct ppw_names *nm, size_t func)
{
    return nm->funcs[func].construct;
}

const char *ppw_names_intern(struct ppw_names *nm, const char *s)
{
    return intern(nm, s, false);
}

bool ppw_names_has_graph(const struct ppw_names *nm, const char *shown)
{
    const struct ppw_strmap_entry *e = shown ? ppw_strmap_find(&nm->strings, shown) : NULL;
    return e && e->value;
}

/* ---- frames ---- */

/* The function of the graph a frame is in: among several of that name
 * (static functions of different units), the one in the frame's file. */
static int64_t frame_func(const struct ppw_names *nm, const struct ppw_blame_frame *frame)
{
    const struct ppw_strmultimap_list *l = ppw_strmultimap_find(&nm->by_name, frame->function);
    if (!l)
        return NO_FUNC;
    for (size_t i = 0; i < l->count && l->count > 1; i++)
        if (frame->file && ppw_names_same_file(nm->graph->funcs[l->items[i]].file, frame->file))
            return (int64_t)l->items[i];
    return (int64_t)l->items[0];
}

static uint64_t mix(const void *a, const void *b)
{
    uint64_t k = (uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)b;
    k *= 0xff51afd7ed558ccdull;
    return k ^ (k >> 29);
}

int64_t ppw_names_find(struct ppw_names *nm, const struct ppw_blame_frame *frame)
{
    if (!frame->function)
        return NO_FUNC;
    if ((nm->cache_count + 1) * 2 > nm->cache_cap) {
        struct ppw_names old = *nm;
        nm->cache_cap = old.cache_cap ? old.cache_cap * 2 : 1024;
        if (!(nm->cache = calloc(nm->cache_cap, sizeof *nm->cache))) {
            nm->cache = old.cache;
            nm->cache_cap = old.cache_cap;
            return frame_func(nm, frame);
        }
        nm->cache_count = 0;
        for (size_t i = 0; i < old.cache_cap; i++)
            if (old.cache[i].function) {
                size_t j = (size_t)mix(old.cache[i].function, old.cache[i].file);
                while (nm->cache[j &= nm->cache_cap - 1].function)
                    j++;
                nm->cache[j] = old.cache[i];
                nm->cache_count++;
            }
        free(old.cache);
    }
    size_t j = (size_t)mix(frame->function, frame->file);
    for (;; j++) {
        struct frame_slot *s = &nm->cache[j &= nm->cache_cap - 1];
        if (!s->function) {
            *s = (struct frame_slot){frame->function, frame->file, frame_func(nm, frame)};
            nm->cache_count++;
            return s->func;
        }
        if (s->function == frame->function && s->file == frame->file)
            return s->func;
    }
}

const char *ppw_names_frame(const struct ppw_names *nm, const struct ppw_blame_frame *frame)
{
    int64_t f = frame->function ? frame_func(nm, frame) : NO_FUNC;
    return f == NO_FUNC ? frame->function : nm->funcs[f].shown;
}

const char *ppw_names_region(const struct ppw_names *nm, const char *name, const char *file,
                             uint32_t line, char *buf, size_t size)
{
    const struct ppw_blame_frame frame = {.function = name, .file = file};
    int64_t f = nm && name ? frame_func(nm, &frame) : NO_FUNC;
    if (f != NO_FUNC)
        return nm->funcs[f].shown;
    if (!name || !(strstr(name, ".omp") || starts(name, "__omp_offloading")))
        return name;
    /* clang's names: PARENT.omp_outlined[_debug__][.N], .omp_outlined.[.N]
     * (a task body), .omp_task_entry.[.N], PARENT...omp.reduction... */
    size_t source = strstr(name, ".omp") == name ? 0 : strcspn(name, ".");
    const char *construct = strstr(name, ".omp.reduction")            ? "omp reduction"
                            : source == 0 || strstr(name, "omp_task") ? "omp task"
                            : strstr(name, "omp_outlined")            ? "omp parallel"
                                                                      : "omp";
    char where[300] = "";
    if (file && file[0] && line)
        snprintf(where, sizeof where, ", %s:%" PRIu32, base_name(file), line);
    if (source)
        snprintf(buf, size, "%.*s [%s%s]", (int)source, name, construct, where);
    else
        snprintf(buf, size, "[%s%s]", construct, where);
    return buf;
}

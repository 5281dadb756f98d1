/* User stacks: runtime chains collapsed, libppw left out (user_stacks.h;
 * docs/ppw-blame.md, "Names"). */
#include "user_stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "ppw/run_format.h"
#include "ppw/static_format.h"
#include "read_graph.h"

enum { NO_FUNC = -1 };

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Whether the program has a function named name (it is no runtime's). */
static bool program_function(struct ppw_names *nm, const char *name)
{
    const struct ppw_blame_frame frame = {.function = name};
    return ppw_names_find(nm, &frame) != NO_FUNC;
}

/* ---- modules ---- */

uint32_t ppw_user_stacks_module_origin(const char *path, uint32_t module_flags)
{
    static const char *const runtime[] = {
        /* the C library, its loader, the vDSO */
        "libc.so", "libc-", "libpthread", "libm.so", "libm-", "libdl", "librt", "ld-linux",
        "ld64.so", "libgcc_s", "linux-vdso", "[vdso]",
        /* OpenMP (the run flags the runtimes it knows as parallel) */
        "libomp", "libgomp", "libiomp",
        /* the MPI stack: its libraries, transports and plugins */
        "libmpi", "libopen-pal", "libopen-rte", "libpmix", "libprrte", "libmpich", "libfabric",
        "libucp", "libuct", "libucs", "libucm", "libhwloc", "libevent", "libpsm", "libibverbs",
        "librdmacm", "libmlx", "libnuma", "mca_", "libmca",
        /* OpenSHMEM: Open MPI's, Sandia's (libsma), OSSS's */
        "liboshmem", "libsma", "libshmem", "libpshmem"};
    if (module_flags & PPW_MODULE_PPW)
        return PPW_FRAME_PPW;
    if (module_flags & PPW_MODULE_EXE)
        return PPW_FRAME_PROGRAM;
    if (module_flags & PPW_MODULE_PARALLEL)
        return PPW_FRAME_RUNTIME;
    if (!path)
        return PPW_FRAME_UNKNOWN;
    const char *base = base_name(path);
    for (size_t i = 0; i < sizeof runtime / sizeof runtime[0]; i++)
        if (starts(base, runtime[i]))
            return PPW_FRAME_RUNTIME;
    if (strstr(path, "/openmpi/") || strstr(path, "/mpich/"))
        return PPW_FRAME_RUNTIME;
    return PPW_FRAME_LIBRARY;
}

bool ppw_user_stacks_is_program(struct ppw_names *nm, const struct ppw_blame_frame *frame)
{
    if (frame->origin != PPW_FRAME_UNKNOWN)
        return frame->origin == PPW_FRAME_PROGRAM;
    return frame->function && ppw_names_find(nm, frame) != NO_FUNC;
}

/* ---- runtime chains ---- */

/* What the program called, as shown: "[omp barrier]" for __kmpc_barrier,
 * "[MPI_Send]" for MPI_Send or PMPI_Send (and "[shmem_quiet]" for
 * pshmem_quiet), "[memcpy]" for llvm.memcpy...;
 * NULL for what is not a call into a runtime. */
static const char *called(const char *callee, char *buf, size_t size)
{
    static const struct {
        const char *prefix, *shown;
    } omp[] = {
        /* the OpenMP runtime's entries; the first prefix that matches wins */
        {"__kmpc_fork_call", "omp parallel"},
        {"__kmpc_serialized_parallel", "omp parallel"},
        {"__kmpc_end_serialized_parallel", "omp parallel"},
        {"__kmp_fork_call", "omp parallel"},
        {"__kmpc_fork_teams", "omp teams"},
        {"__kmpc_barrier", "omp barrier"},
        {"__kmpc_for_static_", "omp for"},
        {"__kmpc_dispatch_", "omp for"},
        {"__kmpc_dist_", "omp for"},
        {"__kmpc_reduce", "omp reduction"},
        {"__kmpc_end_reduce", "omp reduction"},
        {"__kmpc_critical", "omp critical"},
        {"__kmpc_end_critical", "omp critical"},
        {"__kmpc_single", "omp single"},
        {"__kmpc_end_single", "omp single"},
        {"__kmpc_copyprivate", "omp single"},
        {"__kmpc_master", "omp master"},
        {"__kmpc_end_master", "omp master"},
        {"__kmpc_masked", "omp masked"},
        {"__kmpc_end_masked", "omp masked"},
        {"__kmpc_ordered", "omp ordered"},
        {"__kmpc_end_ordered", "omp ordered"},
        {"__kmpc_omp_taskwait", "omp taskwait"},
        {"__kmpc_omp_taskyield", "omp taskyield"},
        {"__kmpc_omp_task", "omp task"},
        {"__kmpc_taskloop", "omp taskloop"},
        {"__kmpc_taskgroup", "omp taskgroup"},
        {"__kmpc_end_taskgroup", "omp taskgroup"},
        {"__kmpc_atomic", "omp atomic"},
        {"__kmpc_flush", "omp flush"},
        {"__kmpc_", "libomp"},
        {"__kmp_", "libomp"},
    };
    static const char *const intrinsics[] = {"memcpy", "memmove", "memset"};
    if (!callee || !callee[0])
        return NULL;
    for (size_t i = 0; i < sizeof omp / sizeof omp[0]; i++)
        if (starts(callee, omp[i].prefix)) {
            snprintf(buf, size, "[%s]", omp[i].shown);
            return buf;
        }
    if (starts(callee, "llvm.")) {
        for (size_t i = 0; i < sizeof intrinsics / sizeof intrinsics[0]; i++)
            if (starts(callee + 5, intrinsics[i])) {
                snprintf(buf, size, "[%s]", intrinsics[i]);
                return buf;
            }
        return NULL; /* an instruction, not a call */
    }
    snprintf(buf, size, "[%s]",
             starts(callee, "PMPI_") || starts(callee, "pshmem_") ? callee + 1 : callee);
    return buf;
}

/* The name of a chain's entry when it is one a program calls: not a
 * thread's or process's root, not internal (a leading '_'), but for the
 * OpenMP runtime's entries and the string functions' CPU variants
 * (__memset_avx2_unaligned is memset). */
static const char *entry_called(const char *name, char *buf, size_t size)
{
    static const char *const roots[] = {
        "start_thread", "clone", "clone3", "_start", "__libc_start_main", "__libc_start_call_main"};
    static const char *const variants[] = {"_avx", "_sse", "_evex", "_erms"};
    if (!name || name[0] == '[')
        return NULL;
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
        if (strcmp(name, roots[i]) == 0)
            return NULL;
    if (starts(name, "__kmp"))
        return called(name, buf, size);
    if (name[0] != '_')
        return called(name, buf, size);
    const char *cut = NULL;
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        const char *v = strstr(name, variants[i]);
        if (v && (!cut || v < cut))
            cut = v;
    }
    while (*name == '_')
        name++;
    if (!cut || cut <= name)
        return NULL;
    snprintf(buf, size, "[%.*s]", (int)(cut - name), name);
    return buf;
}

/* "[libomp]" for a frame of libomp.so.5 (its module, or a name such as
 * "[libomp.so.5]" for code without a symbol). */
static const char *module_called(const struct ppw_blame_frame *f, char *buf, size_t size)
{
    const char *module = f->module;
    size_t len;
    if (!module && f->function && f->function[0] == '[')
        module = f->function + 1;
    if (!module)
        return NULL;
    module = base_name(module);
    const char *so = strstr(module, ".so");
    len = so ? (size_t)(so - module) : strcspn(module, "]");
    snprintf(buf, size, "[%.*s]", (int)len, module);
    return buf;
}

/* Calls that only look up or set up state for the call next to them (the
 * thread's id, a num_threads clause): never what a chain runs. */
static bool bookkeeping(const char *callee)
{
    static const char *const calls[] = {"__kmpc_global_thread_num", "__kmpc_push_num_threads",
                                        "__kmpc_push_proc_bind", "omp_get_thread_num",
                                        "omp_get_num_threads"};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (strcmp(callee, calls[i]) == 0)
            return true;
    return false;
}

/* The calls of func at a frame's location that may lead into a runtime:
 * by column when one has the frame's, not into a function of the program,
 * not bookkeeping. */
static const char *callee_at(struct ppw_names *nm, int64_t func, const struct ppw_blame_frame *at,
                             const char *entry, char *buf, size_t size)
{
    if (func == NO_FUNC)
        return NULL;
    const struct ppw_static_func *f = &ppw_names_graph(nm)->funcs[func];
    bool by_col = false;
    for (size_t i = 0; i < f->call_count && at->col; i++)
        by_col |= f->calls[i].line == at->line && f->calls[i].col == at->col;
    const char *only = NULL;
    char shown[256];
    bool several = false;
    for (size_t i = 0; i < f->call_count; i++) {
        const struct ppw_static_call *c = &f->calls[i];
        if (c->line != at->line || (by_col && c->col != at->col))
            continue;
        const char *name;
        if (c->kind == PPW_CALL_FORK)
            name = "[omp parallel]";
        else if (c->kind == PPW_CALL_TASK)
            name = "[omp task]";
        else if (c->kind == PPW_CALL_INDIRECT || c->kind == PPW_CALL_SPAWN ||
                 bookkeeping(c->callee) ||
                 (c->kind == PPW_CALL_DIRECT && program_function(nm, c->callee)))
            continue; /* the program's own code, or unknown */
        else
            name = called(c->callee, shown, sizeof shown);
        if (!name)
            continue;
        if (entry && strcmp(entry, name) == 0)
            return entry; /* the runtime function the chain starts with */
        if (only && strcmp(only, name) != 0)
            several = true;
        if (!only) {
            snprintf(buf, size, "%s", name);
            only = buf;
        }
    }
    return several ? NULL : only;
}

/* The name of a runtime chain from entry (outermost) to inner (innermost),
 * called from outer (NULL: the chain is a stack's root). */
static const char *chain_name(struct ppw_names *nm, const struct ppw_blame_frame *outer,
                              int64_t outer_func, const struct ppw_blame_frame *entry,
                              const struct ppw_blame_frame *inner, char *buf, size_t size)
{
    char entry_buf[256];
    const char *from_entry = entry_called(entry->function, entry_buf, sizeof entry_buf);
    const char *name = outer ? callee_at(nm, outer_func, outer, from_entry, buf, size) : NULL;
    if (name == from_entry && name) {
        snprintf(buf, size, "%s", from_entry);
        return buf;
    }
    if (name)
        return name;
    if (from_entry && outer) {
        snprintf(buf, size, "%s", from_entry);
        return buf;
    }
    if ((name = module_called(outer ? entry : inner, buf, size)))
        return name;
    if (from_entry) {
        snprintf(buf, size, "%s", from_entry);
        return buf;
    }
    snprintf(buf, size, "[runtime]");
    return buf;
}

/* ---- user stacks ---- */

enum frame_kind { KIND_PROGRAM, KIND_CHAIN, KIND_DROP, KIND_KEEP };

static enum frame_kind kind_of(struct ppw_names *nm, const struct ppw_blame_frame *f, int64_t *func)
{
    *func = ppw_names_find(nm, f);
    switch (f->origin) {
    case PPW_FRAME_PROGRAM: return KIND_PROGRAM;
    case PPW_FRAME_RUNTIME: return KIND_CHAIN;
    case PPW_FRAME_LIBRARY: return KIND_KEEP;
    case PPW_FRAME_PPW: return KIND_DROP;
    default: break;
    }
    if (*func != NO_FUNC)
        return KIND_PROGRAM;
    if (!f->function)
        return KIND_KEEP;
    /* no modules: libppw by its unnamed code and its API's prefixes */
    return starts(f->function, "[libppw") || starts(f->function, "gasp_") ||
                   starts(f->function, "ppw_")
               ? KIND_DROP
               : KIND_CHAIN;
}

/* A frame of a user stack being built, outermost first. */
struct user_frame {
    struct ppw_blame_frame frame; /* as shown */
    struct ppw_blame_frame raw;   /* where it is, for the calls made there */
    int64_t func;                 /* its function in the graph, NO_FUNC none */
    bool chain;
};

struct builder {
    struct user_frame *frames;
    size_t count, cap;
};

static bool push(struct builder *b, struct user_frame uf)
{
    if (!ppw_array_reserve(&b->frames, &b->cap, b->count + 1, sizeof *b->frames))
        return false;
    b->frames[b->count++] = uf;
    return true;
}

/* Whether a libppw frame called from last is a wrapper of what the program
 * called there (its MPI_Send, pthread_create): the runtime frames under it
 * do the program's work.  Any other frame of libppw (a probe, a callback of
 * the OpenMP runtime) measures, and so does everything it calls. */
static bool is_wrapper(const struct ppw_names *nm, const struct user_frame *last,
                       const struct ppw_blame_frame *f)
{
    if (!f->function || !last || last->chain)
        return false;
    if (last->func == NO_FUNC)
        return starts(f->function, "MPI_");
    const struct ppw_static_func *caller = &ppw_names_graph(nm)->funcs[last->func];
    for (size_t i = 0; i < caller->call_count; i++)
        if (caller->calls[i].line == last->raw.line &&
            strcmp(caller->calls[i].callee, f->function) == 0)
            return true;
    return false;
}

/* Appends a frame of the program or of another library (kind) to b,
 * merged with the frame before it when both are one construct. */
static bool push_shown(struct ppw_names *nm, struct builder *b, const struct ppw_blame_frame *f,
                       enum frame_kind kind, int64_t func)
{
    struct user_frame *last = b->count ? &b->frames[b->count - 1] : NULL;
    if (kind == KIND_KEEP)
        func = NO_FUNC; /* another library's: its own name */
    /* interned here too, so that equal names are equal pointers */
    const char *shown = func != NO_FUNC ? ppw_names_function(nm, (size_t)func)
                        : f->function   ? ppw_names_intern(nm, f->function)
                                        : NULL;
    if (f->function && !shown)
        return false;
    if (last && !last->chain && last->func != NO_FUNC && func != NO_FUNC &&
        ppw_names_same_frame(nm, (size_t)last->func, (size_t)func)) {
        last->frame.file = f->file, last->frame.line = f->line, last->frame.col = f->col;
        last->raw = *f;
        last->func = func;
        return true;
    }
    struct ppw_blame_frame shown_frame = *f;
    shown_frame.function = shown;
    return push(b, (struct user_frame){shown_frame, *f, func, false});
}

/* Appends the frames of st, outermost first, to b. */
static bool build_user_stack(struct ppw_names *nm, const struct ppw_blame_stack *st,
                             struct builder *b)
{
    b->count = 0;
    for (size_t i = st->nframes; i-- > 0;) {
        const struct ppw_blame_frame *f = &st->frames[i];
        int64_t func;
        enum frame_kind kind = kind_of(nm, f, &func);
        struct user_frame *last = b->count ? &b->frames[b->count - 1] : NULL;
        if (kind == KIND_DROP && is_wrapper(nm, last, f))
            continue;
        if (kind == KIND_DROP)
            return true; /* measurement, and what it calls */
        if (kind == KIND_PROGRAM || kind == KIND_KEEP) {
            if (!push_shown(nm, b, f, kind, func))
                return false;
            continue;
        }
        /* A runtime chain: frames i down to j + 1. */
        const struct ppw_blame_frame *entry = f, *inner = f;
        size_t j = i;
        enum frame_kind next = KIND_CHAIN;
        while (j-- > 0 && (next = kind_of(nm, &st->frames[j], &func)) == KIND_CHAIN)
            inner = &st->frames[j];
        /* j: the frame the chain calls, SIZE_MAX when the chain is the leaf */
        bool into_construct = j != SIZE_MAX && last && !last->chain && next == KIND_PROGRAM &&
                              func != NO_FUNC && ppw_names_construct(nm, (size_t)func);
        if (!into_construct) {
            char buf[300];
            const struct ppw_blame_frame *from = last && !last->chain ? &last->raw : NULL;
            const char *name =
                chain_name(nm, from, from ? last->func : NO_FUNC, entry, inner, buf, sizeof buf);
            struct ppw_blame_frame node = {.function = ppw_names_intern(nm, name),
                                           .origin = PPW_FRAME_RUNTIME};
            if (!node.function || !push(b, (struct user_frame){node, node, NO_FUNC, true}))
                return false;
        }
        if (j != SIZE_MAX && next == KIND_DROP)
            return true; /* the runtime called into libppw: measurement */
        i = j + 1;
    }
    return true;
}

int ppw_user_stacks_build(struct ppw_names *nm, const struct ppw_blame_stack *stacks, size_t n,
                          struct ppw_user_stacks *out, struct ppw_err *err)
{
    struct builder b = {0};
    size_t total = 0, at = 0;
    *out = (struct ppw_user_stacks){0};
    for (size_t s = 0; s < n; s++)
        total += stacks[s].nframes;
    if (!(out->stacks = calloc(n ? n : 1, sizeof *out->stacks)) ||
        !(out->frames = calloc(total ? total : 1, sizeof *out->frames)))
        goto oom;
    for (size_t s = 0; s < n; s++) {
        if (!build_user_stack(nm, &stacks[s], &b))
            goto oom;
        out->stacks[s] = stacks[s];
        out->stacks[s].frames = out->frames + at;
        out->stacks[s].nframes = b.count;
        for (size_t k = 0; k < b.count; k++) /* innermost first */
            out->frames[at + k] = b.frames[b.count - 1 - k].frame;
        at += b.count; /* never more than the stack's own frames */
    }
    out->count = n;
    free(b.frames);
    return 0;
oom:
    free(b.frames);
    ppw_user_stacks_free(out);
    return ppw_err_set(err, PPW_ENOMEM, "out of memory naming the frames");
}

void ppw_user_stacks_free(struct ppw_user_stacks *user)
{
    free(user->stacks);
    free(user->frames);
    *user = (struct ppw_user_stacks){0};
}

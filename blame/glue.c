/* Glued, symbolized stacks of a run (glue.h). */
#include "glue.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "lines.h"
#include "user_stacks.h"
#include "read_run.h"
#include "stacks.h"
#include "symbols.h"

enum { MAX_INLINED = 64 };

/* A PC's source frames, symbolized once: frames[first, first + count) of
 * the pool, their strings interned in the stack set. */
struct pc_entry {
    uint64_t key; /* pc << 1 | exact; 0: empty */
    uint32_t first, count;
};

struct glue {
    const struct ppw_run *run;
    struct ppw_symbols *syms;
    struct ppw_lines *lines;
    struct ppw_stack_set *set;
    struct ppw_err *err;
    struct pc_entry *table;
    size_t table_cap, table_count;
    struct ppw_blame_frame *pool; /* every PC's frames */
    size_t pool_count, pool_cap;
    struct ppw_blame_frame *stack; /* the sample being glued, innermost first */
    size_t stack_count, stack_cap;
    const struct ppw_run_spawn **chain;
};

static bool is_runtime(const struct ppw_symbol *sym)
{
    return sym->module && (sym->module->flags & (PPW_MODULE_PPW | PPW_MODULE_PARALLEL));
}

size_t ppw_glue_kept_frames(struct ppw_symbols *syms, const struct ppw_run_sample *sample)
{
    const struct ppw_run_stack *stack = sample->stack;
    struct ppw_symbol sym;
    size_t i = 0;
    if (sample->spawn_tag == 0)
        return stack->nframes;
    for (; i < stack->nframes; i++) {
        ppw_symbols_frame(syms, stack->frames, i, stack->flags, &sym);
        if (!is_runtime(&sym))
            break;
    }
    for (; i < stack->nframes; i++) {
        ppw_symbols_frame(syms, stack->frames, i, stack->flags, &sym);
        if (is_runtime(&sym))
            break;
    }
    return i;
}

static uint64_t mix(uint64_t key)
{
    key *= 0x9e3779b97f4a7c15ull;
    return key ^ (key >> 31);
}

static struct pc_entry *table_slot(const struct glue *g, uint64_t key)
{
    size_t mask = g->table_cap - 1;
    for (size_t i = (size_t)mix(key) & mask;; i = (i + 1) & mask)
        if (g->table[i].key == key || g->table[i].key == 0)
            return &g->table[i];
}

static bool grow_table(struct glue *g)
{
    if ((g->table_count + 1) * 2 <= g->table_cap)
        return true;
    struct glue old = *g;
    g->table_cap = old.table_cap ? old.table_cap * 2 : 4096;
    if (!(g->table = calloc(g->table_cap, sizeof *g->table))) {
        g->table = old.table;
        g->table_cap = old.table_cap;
        return false;
    }
    for (size_t i = 0; i < old.table_cap; i++)
        if (old.table[i].key)
            *table_slot(g, old.table[i].key) = old.table[i];
    free(old.table);
    return true;
}

/* Symbolizes pc into the pool: its source frames, or its function alone. */
static bool symbolize(struct glue *g, uint64_t pc, bool exact, struct pc_entry *e)
{
    struct ppw_source_frame source[MAX_INLINED];
    size_t n = g->lines ? ppw_lines_lookup_near(g->lines, pc, exact, source, MAX_INLINED) : 0;
    if (!ppw_array_reserve(&g->pool, &g->pool_cap, g->pool_count + (n ? n : 1), sizeof *g->pool))
        return false;
    struct ppw_blame_frame *out = g->pool + g->pool_count;
    /* whose code it is: user views leave libppw out and collapse the runtime */
    struct ppw_symbol sym;
    ppw_symbols_lookup(g->syms, pc, exact, &sym);
    const char *module = sym.module ? ppw_stack_set_intern(g->set, sym.module->path) : NULL;
    uint32_t origin = PPW_FRAME_UNKNOWN;
    if (sym.module)
        origin = ppw_user_stacks_module_origin(sym.module->path, sym.module->flags);
    if (sym.module && !module)
        return false;
    if (origin == PPW_FRAME_PPW && sym.function) {
        /* libppw's stand-in for the program's fork call, and the
         * trampoline that runs a region's body between libomp's frames,
         * are not frames of their own: the program called libomp, which
         * called the body. */
        if (strcmp(sym.function, PPW_FORK_WRAPPER_FUNCTION) == 0 ||
            strncmp(sym.function, PPW_FORK_BODY_FUNCTION, sizeof PPW_FORK_BODY_FUNCTION - 1) == 0) {
            e->first = (uint32_t)g->pool_count;
            e->count = 0;
            return true;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const char *function = source[i].function ? source[i].function : source[i].linkage;
        out[i] = (struct ppw_blame_frame){.function = ppw_stack_set_intern(g->set, function),
                                          .file = ppw_stack_set_intern(g->set, source[i].file),
                                          .line = source[i].line,
                                          .col = source[i].col,
                                          .module = module,
                                          .origin = origin};
        if ((function && !out[i].function) || (source[i].file && !out[i].file))
            return false;
    }
    if (!n) { /* no line: the function, or "[module]" for code without a symbol */
        char unnamed[256];
        const char *name = NULL;
        if (sym.function) {
            name = sym.function;
        } else if (sym.module) {
            const char *base = strrchr(sym.module->path, '/');
            snprintf(unnamed, sizeof unnamed, "[%s]", base ? base + 1 : sym.module->path);
            name = unnamed;
        }
        out[0] = (struct ppw_blame_frame){
            .function = ppw_stack_set_intern(g->set, name), .module = module, .origin = origin};
        if (name && !out[0].function)
            return false;
        n = 1;
    }
    e->first = (uint32_t)g->pool_count;
    e->count = (uint32_t)n;
    g->pool_count += n;
    return true;
}

/* Appends frames[i] (a PC) to the stack being glued. */
static bool push_pc(struct glue *g, const uint64_t *frames, size_t i, uint16_t flags)
{
    bool exact = i == 0 && (flags & PPW_STACK_LEAF_PC);
    uint64_t key = frames[i] << 1 | exact;
    if (key == 0)
        key = 2; /* pc 0 as a return address: no function either way */
    if (!grow_table(g))
        return false;
    struct pc_entry *e = table_slot(g, key);
    if (!e->key) {
        if (!symbolize(g, frames[i], exact, e))
            return false;
        e->key = key;
        g->table_count++;
    }
    if (!ppw_array_reserve(&g->stack, &g->stack_cap, g->stack_count + e->count, sizeof *g->stack))
        return false;
    memcpy(g->stack + g->stack_count, g->pool + e->first, e->count * sizeof *g->stack);
    g->stack_count += e->count;
    return true;
}

static bool has_line(const struct glue *g)
{
    for (size_t i = 0; i < g->stack_count; i++)
        if (g->stack[i].line)
            return true;
    return false;
}

/* Whether the glued stack goes down to the program's main: then a stack
 * marked truncated lost only the C library's start-up frames beneath it
 * (the ring sampler's leaf repair stops where the stack copy ends, before
 * them), none of the program's context. */
static bool reaches_main(const struct glue *g)
{
    for (size_t i = g->stack_count; i-- > 0;)
        if (g->stack[i].origin == PPW_FRAME_PROGRAM && g->stack[i].function &&
            strcmp(g->stack[i].function, "main") == 0)
            return true;
    return false;
}

/* Where a sample's own frames give way to its spawn chain: the frames
 * beneath its thread's start routine (start_thread, clone) are not its
 * history, and a sample on the thread that created its context (an OpenMP
 * master in its own parallel region) reaches the spawn's frames again, which
 * the chain gives once. */
static size_t trim(struct glue *g, const struct ppw_run_sample *s, size_t kept,
                   const struct ppw_run_spawn *first, const struct ppw_symbol *start)
{
    const struct ppw_run_stack *stack = s->stack;
    struct ppw_symbol sym;
    for (size_t j = 1; j < kept && first->nframes; j++)
        if (stack->frames[j] == first->frames[0])
            return j;
    for (size_t j = 0; j < kept && start->module && start->function_start; j++) {
        ppw_symbols_frame(g->syms, stack->frames, j, stack->flags, &sym);
        if (sym.module == start->module && sym.function_start == start->function_start)
            return j + 1;
    }
    return kept;
}

/* Whether a sample's own frames, up to frame kept, were called by libppw
 * (a callback of the parallel runtime opening a file): measurement, which
 * user views leave out. */
static bool by_ppw(struct glue *g, const struct ppw_run_sample *s, size_t kept)
{
    struct ppw_symbol sym;
    if (s->spawn_tag == 0)
        return false;
    ppw_symbols_frame(g->syms, s->stack->frames, kept, s->stack->flags, &sym);
    return sym.module && (sym.module->flags & PPW_MODULE_PPW) &&
           !(sym.function &&
             strncmp(sym.function, PPW_FORK_BODY_FUNCTION, sizeof PPW_FORK_BODY_FUNCTION - 1) == 0);
}

static int glue_sample(struct glue *g, const struct ppw_run_thread *t,
                       const struct ppw_run_sample *s, const struct ppw_symbol *start, double scale,
                       struct ppw_glue_stats *stats)
{
    const struct ppw_run_stack *stack = s->stack;
    size_t kept = ppw_glue_kept_frames(g->syms, s), chain_count = 0;
    struct ppw_err chain_err;
    if (ppw_run_spawn_chain(g->run, t->index, s->spawn_tag, g->chain, g->run->spawn_count,
                            &chain_count, &chain_err) != 0)
        stats->glue_errors += s->count;
    if (chain_count)
        kept = trim(g, s, kept, g->chain[0], start);
    /* A region that ran on the thread that met it (an if clause that is
     * false, a nested region on one thread): the sample's own frames
     * already go down to the root the chain ends at, which would repeat. */
    if (chain_count && kept == stack->nframes && stack->nframes) {
        const struct ppw_run_spawn *last = g->chain[chain_count - 1];
        if (last->nframes && stack->frames[stack->nframes - 1] == last->frames[last->nframes - 1])
            chain_count = 0;
    }
    stats->samples += s->count;

    g->stack_count = 0;
    for (size_t i = 0; i < kept; i++)
        if (!push_pc(g, stack->frames, i, stack->flags))
            return PPW_ENOMEM;
    if (kept < stack->nframes && by_ppw(g, s, kept))
        for (size_t i = 0; i < g->stack_count; i++)
            g->stack[i].origin = PPW_FRAME_PPW;
    for (size_t k = 0; k < chain_count; k++)
        for (size_t i = 0; i < g->chain[k]->nframes; i++)
            if (!push_pc(g, g->chain[k]->frames, i, g->chain[k]->flags))
                return PPW_ENOMEM;
    stats->without_lines += has_line(g) ? 0 : s->count;
    stats->truncated += (stack->flags & PPW_STACK_TRUNCATED) && !reaches_main(g) ? s->count : 0;
    return ppw_stack_set_add(g->set, g->stack, g->stack_count, s->count, (double)s->weight * scale,
                             t->index, g->err);
}

int ppw_glue_run(const struct ppw_run *run, struct ppw_symbols *syms, struct ppw_lines *lines,
                 double weight_scale, const struct ppw_glue_progress *progress,
                 struct ppw_stack_set *set, struct ppw_glue_stats *stats, struct ppw_err *err)
{
    struct glue g = {.run = run, .syms = syms, .lines = lines, .set = set, .err = err};
    uint64_t total = 0;
    int rc = 0;
    *stats = (struct ppw_glue_stats){0};
    for (size_t ti = 0; ti < run->thread_count; ti++)
        for (size_t si = 0; si < run->threads[ti].sample_count; si++)
            total += run->threads[ti].samples[si].count;
    if (!(g.chain = calloc(run->spawn_count ? run->spawn_count : 1, sizeof *g.chain)))
        rc = PPW_ENOMEM;
    for (size_t ti = 0; ti < run->thread_count && !rc; ti++) {
        const struct ppw_run_thread *t = &run->threads[ti];
        struct ppw_symbol start = {0};
        if (t->has_begin && t->start_routine)
            ppw_symbols_lookup(syms, t->start_routine, true, &start);
        for (size_t si = 0; si < t->sample_count && !rc; si++) {
            rc = glue_sample(&g, t, &t->samples[si], &start, weight_scale, stats);
            if (progress && si % 4096 == 0)
                progress->report(progress->context, stats->samples, total);
        }
    }
    if (rc == PPW_ENOMEM)
        ppw_err_set(err, PPW_ENOMEM, "out of memory gluing the samples of %s", run->dir);
    free(g.chain);
    free(g.table);
    free(g.pool);
    free(g.stack);
    return rc;
}

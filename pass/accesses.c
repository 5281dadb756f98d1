/* Accesses (the access view, docs/static-analysis.md): which variables each
 * source location loads from and stores to, resolved like blame to the
 * exported variable or field path that holds the memory.
 *
 * A function's own scalar locals and parameters are left out: they live in
 * registers once optimised (mem2reg), so counting their -O0 stack slots
 * would rank loop counters above the data the loop touches, and -O0 would
 * disagree with -O2.  Their arrays, structs and pointees, and all globals,
 * are counted. */
#include "graph.h"

#include "llvm_shim.h"

#include <ppw/static_format.h>
#include <stdlib.h>
#include <string.h>

void ppw_graph_log_access(struct graph *graph, int loc, int node, int is_write)
{
    if (loc < 0 || node < 0)
        return;
    ppw_intvec_push(&graph->access_log, loc);
    ppw_intvec_push(&graph->access_log, node);
    ppw_intvec_push(&graph->access_log, is_write);
}

static int is_aggregate(LLVMMetadataRef type)
{
    type = ppw_dbgvar_strip(type);
    if (!type)
        return 0;
    switch (ppw_di_tag(type)) {
    case 0x01: /* DW_TAG_array_type */
    case 0x02: /* DW_TAG_class_type */
    case 0x13: /* DW_TAG_structure_type */
    case 0x17: /* DW_TAG_union_type */ return 1;
    default: return 0;
    }
}

/* A frame-local scalar's own storage: a register after mem2reg. */
static int register_like(const struct ppw_memory *memory, int node)
{
    const struct ppw_node *record = &memory->nodes[node];
    if (record->parent >= 0 || record->pte_of >= 0 || record->key)
        return 0;
    if (record->kind == PPW_VAR_GLOBAL || record->kind == PPW_VAR_STATIC)
        return 0;
    return !is_aggregate(record->type);
}

static int compare_access(const void *a, const void *b)
{
    const struct ppw_result_access *left = a, *right = b;
    int by_file =
        strcmp(left->loc.file ? left->loc.file : "", right->loc.file ? right->loc.file : "");
    if (by_file)
        return by_file;
    if (left->loc.line != right->loc.line)
        return left->loc.line < right->loc.line ? -1 : 1;
    if (left->loc.col != right->loc.col)
        return left->loc.col < right->loc.col ? -1 : 1;
    return (left->var > right->var) - (left->var < right->var);
}

void ppw_graph_fill_accesses(struct graph *graph, struct ppw_result_func *out)
{
    const struct ppw_intvec *log = &graph->access_log;
    struct ppw_ptrmap index = {0}; /* (loc, var) -> 1 + position in out->accesses */
    size_t capacity = 0;
    for (size_t i = 0; i + 2 < log->count; i += 3) {
        int loc = log->items[i], node = log->items[i + 1], is_write = log->items[i + 2];
        if (register_like(&graph->memory, node))
            continue;
        int var = ppw_graph_export_of(&graph->memory, node);
        if (var < 0)
            continue; /* compiler temporaries */
        /* Packed key, never 0: locations and variables are below 2^31. */
        uint64_t packed = ((uint64_t)(uint32_t)loc << 32 | (uint32_t)var) + 1;
        const void *key = (const void *)(uintptr_t)packed;
        int at = ppw_ptrmap_get(&index, key, 0) - 1;
        if (at < 0) {
            out->accesses = ppw_grow(out->accesses, &capacity, out->access_count + 1,
                                     sizeof *out->accesses, 16);
            at = (int)out->access_count++;
            out->accesses[at] = (struct ppw_result_access){graph->locs[loc], var, 0, 0};
            ppw_ptrmap_put(&index, key, at + 1);
        }
        if (is_write)
            out->accesses[at].writes++;
        else
            out->accesses[at].reads++;
    }
    ppw_ptrmap_free(&index);
    if (out->access_count)
        qsort(out->accesses, out->access_count, sizeof *out->accesses, compare_access);
}

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

void ppw_graph_log_access(struct graph *graph, int loc, int node, int is_write, int indexed,
                          int block)
{
    if (loc < 0 || node < 0)
        return;
    ppw_intvec_push(&graph->access_log, loc);
    ppw_intvec_push(&graph->access_log, node);
    ppw_intvec_push(&graph->access_log, is_write);
    ppw_intvec_push(&graph->access_log, indexed || block);
    if (block) /* a library or memcpy sees its address: it stays in memory */
        graph->memory.nodes[node].block_access = 1;
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

/* Local aggregates up to this size, whose address no call sees, are split
 * into registers by the optimiser (SROA), like scalars. */
enum { REGISTER_AGGREGATE_BITS = 512 };

static int subtree_block_access(const struct ppw_memory *memory, int node, int depth)
{
    const struct ppw_node *record = &memory->nodes[node];
    if (record->block_access)
        return 1;
    for (size_t c = 0; c < record->children.count && depth < 64; c++)
        if (subtree_block_access(memory, record->children.items[c], depth + 1))
            return 1;
    return 0;
}

static int is_outlined(LLVMValueRef function)
{
    size_t length = 0;
    const char *symbol = LLVMGetValueName2(function, &length);
    return strstr(symbol, ".omp_outlined") != NULL;
}

/* Storage that lives in registers once optimised: a frame-local scalar
 * (mem2reg), a small local struct or array whose address no call sees
 * (dr[3] in a force loop: SROA), and, in an OpenMP body, a shared scalar
 * the body only reads (rCut2: the body gets its address, and the load is
 * hoisted out of the loop). */
static int register_like_node(const struct graph *graph, int node)
{
    const struct ppw_memory *memory = &graph->memory;
    const struct ppw_node *record = &memory->nodes[node];
    if (record->pte_of >= 0 && !record->key && record->parent < 0 && !is_aggregate(record->type) &&
        !record->write_locs.count && is_outlined(graph->function)) {
        const struct ppw_node *holder = &memory->nodes[record->pte_of];
        return holder->kind == PPW_VAR_PARAM && holder->var_name;
    }
    if (record->parent >= 0 || record->pte_of >= 0 || record->key)
        return 0;
    if (record->kind == PPW_VAR_GLOBAL || record->kind == PPW_VAR_STATIC)
        return 0;
    if (!is_aggregate(record->type))
        return 1;
    LLVMMetadataRef type = ppw_dbgvar_strip(record->type);
    return record->kind == PPW_VAR_LOCAL && type && !(record->flags & PPW_VAR_PASSED_BY_REF) &&
           !subtree_block_access(memory, node, 0) &&
           LLVMDITypeGetSizeInBits(type) <= REGISTER_AGGREGATE_BITS;
}

/* The node or the aggregate holding it (dr[m] is a part of dr). */
static int register_like(const struct graph *graph, int node)
{
    int top = node;
    for (int depth = 0; graph->memory.nodes[top].parent >= 0 && depth < 64; depth++)
        top = graph->memory.nodes[top].parent;
    if (top != node && register_like_node(graph, top) &&
        graph->memory.nodes[top].kind == PPW_VAR_LOCAL)
        return 1;
    return register_like_node(graph, node);
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

/* How many scalar locals a compute line's operands are followed through. */
enum { OPERAND_HOPS = 4 };

static uint64_t line_key(const struct ppw_loc *loc, struct ppw_ptrmap *files)
{
    /* files: name pointer -> 1 + id; lines below 2^32, ids small */
    int id = ppw_ptrmap_get(files, loc->file ? loc->file : "", 0);
    if (!id) {
        id = (int)files->count + 1;
        ppw_ptrmap_put(files, loc->file ? loc->file : "", id);
    }
    return ((uint64_t)(uint32_t)id << 32 | loc->line) + 1;
}

/* Scratch for operand_memory: per vertex, the walk that reached it and how
 * many scalar locals it passed. */
struct operand_walk {
    int *round, *hops;
    int current;
    struct ppw_intvec work;
};

/* The memory the values computed at starts were loaded from, through data
 * edges and at most OPERAND_HOPS scalar locals (their writes' values), in
 * this function: a counted node's view ends the walk; control does not
 * count.  A call's result is computed from its arguments and the memory
 * its pointer arguments point to, as flows take it (`val %= D` after
 * `val = mrg_get_uint(st)` reads the generator's state). */
static void operand_memory(struct graph *graph, struct operand_walk *w,
                           const struct ppw_intvec *starts, struct ppw_intvec *vars)
{
    w->current++;
    w->work.count = 0;
    for (size_t i = 0; i < starts->count; i++) {
        w->round[starts->items[i]] = w->current;
        w->hops[starts->items[i]] = 0;
        ppw_intvec_push(&w->work, starts->items[i]);
    }
    for (size_t next = 0; next < w->work.count && next < 4096; next++) {
        int v = w->work.items[next], h = w->hops[v];
        const struct vertex *vertex = &graph->vertices[v];
        if (vertex->kind == VERTEX_VIEW && vertex->node >= 0) {
            const struct ppw_node *node = &graph->memory.nodes[vertex->node];
            /* memory, or a scalar parameter the line itself computes with
             * (arithmetic on arguments: d and box in `d > 0.5 * box`): its
             * value is the caller's argument, whose memory ppw-blame finds
             * through the binding.  One reached through locals (the bound
             * n of `upper = n - 1` on a loop's test) is not the line's data. */
            if (!register_like(graph, vertex->node) || (node->kind == PPW_VAR_PARAM && h == 0)) {
                int var = ppw_graph_export_of(&graph->memory, vertex->node);
                if (var >= 0)
                    ppw_intvec_add_unique(vars, var);
                continue;
            }
            if (++h > OPERAND_HOPS)
                continue;
        }
        for (size_t e = 0; e < vertex->edges.count; e++) {
            int edge = vertex->edges.items[e], to = edge / 4;
            if (edge % 4 != EDGE_DATA || w->round[to] == w->current)
                continue;
            w->round[to] = w->current;
            w->hops[to] = h;
            ppw_intvec_push(&w->work, to);
        }
    }
}

/* A value stepped by a constant: `i + 1` of what load_of gives. */
static int is_step_of(LLVMValueRef value, LLVMValueRef slot)
{
    if (!value || !LLVMIsAInstruction(value))
        return 0;
    LLVMOpcode opcode = LLVMGetInstructionOpcode(value);
    if ((opcode != LLVMAdd && opcode != LLVMSub) || !LLVMIsAConstantInt(LLVMGetOperand(value, 1)))
        return 0;
    LLVMValueRef base = LLVMGetOperand(value, 0);
    return base == slot || (LLVMIsALoadInst(base) && LLVMGetOperand(base, 0) == slot);
}

/* An induction variable: an integer local stepped by a constant (the
 * pass runs before mem2reg: `store (load i) + 1, i`), or an integer phi so
 * stepped. */
static int is_induction(LLVMValueRef value)
{
    if (!value)
        return 0;
    if (LLVMIsAAllocaInst(value)) {
        if (LLVMGetTypeKind(LLVMGetAllocatedType(value)) != LLVMIntegerTypeKind)
            return 0;
        int uses = 0;
        for (LLVMUseRef use = LLVMGetFirstUse(value); use && uses < 64;
             use = LLVMGetNextUse(use), uses++) {
            LLVMValueRef user = LLVMGetUser(use);
            if (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 1) == value &&
                is_step_of(LLVMGetOperand(user, 0), value))
                return 1;
        }
        return 0;
    }
    if (!LLVMIsAPHINode(value) || LLVMGetTypeKind(LLVMTypeOf(value)) != LLVMIntegerTypeKind)
        return 0;
    unsigned count = LLVMCountIncoming(value);
    for (unsigned i = 0; i < count; i++)
        if (is_step_of(LLVMGetIncomingValue(value, i), value))
            return 1;
    return 0;
}

/* The induction variable (its alloca or phi) an operand reads. */
static LLVMValueRef induction_of(LLVMValueRef operand)
{
    if (is_induction(operand))
        return operand;
    if (operand && LLVMIsALoadInst(operand) && is_induction(LLVMGetOperand(operand, 0)))
        return LLVMGetOperand(operand, 0);
    return NULL;
}

/* Whether a compare decides a loop's exit: a branch on it leaves a
 * natural loop. */
static int is_exit_test(const struct graph *graph, LLVMValueRef compare)
{
    for (LLVMUseRef use = LLVMGetFirstUse(compare); use; use = LLVMGetNextUse(use)) {
        LLVMValueRef user = LLVMGetUser(use);
        if (!LLVMIsABranchInst(user))
            continue;
        int block = ppw_cfg_index(&graph->cfg, LLVMGetInstructionParent(user));
        if (block >= 0 && graph->cfg.leaves_loop[block])
            return 1;
    }
    return 0;
}

/* The induction variable a loop-control instruction steps or tests: its
 * step (i + 1, and the store of it back), or a loop's exit test on it;
 * not the other reads of it (`temp = i + 3`, `if (i != j)`). */
static LLVMValueRef controlled_induction(const struct graph *graph, LLVMValueRef inst)
{
    if (LLVMIsAPHINode(inst))
        return is_induction(inst) ? inst : NULL;
    LLVMOpcode opcode = LLVMGetInstructionOpcode(inst);
    if (opcode == LLVMStore)
        return is_induction(LLVMGetOperand(inst, 1)) &&
                       is_step_of(LLVMGetOperand(inst, 0), LLVMGetOperand(inst, 1))
                   ? LLVMGetOperand(inst, 1)
                   : NULL;
    if (opcode == LLVMAdd || opcode == LLVMSub) {
        /* the step itself: stored back into the local, or the phi's next */
        LLVMValueRef induction = induction_of(LLVMGetOperand(inst, 0));
        if (!induction || !is_step_of(inst, induction))
            return NULL;
        for (LLVMUseRef use = LLVMGetFirstUse(inst); use; use = LLVMGetNextUse(use)) {
            LLVMValueRef user = LLVMGetUser(use);
            if (user == induction ||
                (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 1) == induction))
                return induction;
        }
        return NULL;
    }
    if (opcode != LLVMICmp || !is_exit_test(graph, inst))
        return NULL;
    for (unsigned k = 0; k < 2; k++) {
        LLVMValueRef operand = LLVMGetOperand(inst, k);
        LLVMValueRef induction = induction_of(operand);
        if (!induction && LLVMIsAInstruction(operand) &&
            LLVMGetInstructionOpcode(operand) == LLVMAdd)
            induction = induction_of(LLVMGetOperand(operand, 0));
        if (induction)
            return induction;
    }
    return NULL;
}

/* Steps from an induction variable to a subscript: casts, arithmetic
 * (acc[i & 7]) and OpenMP's k = lb + .omp.iv * 1 stored into k. */
enum { MAX_INDEX_DEPTH = 6 };

/* The variables whose memory the induction variable subscripts: GEPs
 * taking it as an index, MAX_INDEX_DEPTH steps away at most. */
static void indexed_memory(struct graph *graph, LLVMValueRef value, int depth,
                           struct ppw_intvec *vars)
{
    int uses = 0;
    for (LLVMUseRef use = LLVMGetFirstUse(value); use && uses < 64; use = LLVMGetNextUse(use)) {
        LLVMValueRef user = LLVMGetUser(use);
        uses++;
        if (!LLVMIsAInstruction(user))
            continue;
        LLVMOpcode opcode = LLVMGetInstructionOpcode(user);
        if (LLVMIsAAllocaInst(value)) { /* the induction local: its loads */
            if (opcode == LLVMLoad)
                indexed_memory(graph, user, depth, vars);
            continue;
        }
        if (opcode == LLVMStore && LLVMGetOperand(user, 0) == value && depth < MAX_INDEX_DEPTH &&
            LLVMIsAAllocaInst(LLVMGetOperand(user, 1))) {
            /* an OpenMP loop's variable, set from the runtime's iteration
             * counter (k = .omp.iv + lb): what k subscripts */
            indexed_memory(graph, LLVMGetOperand(user, 1), depth + 1, vars);
            continue;
        }
        if (opcode == LLVMGetElementPtr) {
            if (LLVMGetOperand(user, 0) == value)
                continue; /* the induction variable is the base, not an index */
            const struct ppw_intvec *targets = ppw_memory_targets(&graph->memory, user);
            for (size_t t = 0; targets && t < targets->count; t++) {
                int node = targets->items[t] / 2;
                int var = register_like(graph, node) ? -1
                                                     : ppw_graph_export_of(&graph->memory, node);
                if (var >= 0)
                    ppw_intvec_add_unique(vars, var);
            }
        } else if (depth < MAX_INDEX_DEPTH && (opcode == LLVMSExt || opcode == LLVMZExt ||
                                 opcode == LLVMTrunc || opcode == LLVMAdd ||
                                 opcode == LLVMSub || opcode == LLVMMul || opcode == LLVMShl ||
                                 opcode == LLVMOr || opcode == LLVMAnd)) {
            indexed_memory(graph, user, depth + 1, vars);
        }
    }
}

/* Loop control on a line of its own (`for (j = lo; j < hi; j++)`: the
 * step and the exit test) costs once per iteration: the whole line is
 * charged to the memory the loop subscripts with that variable (`r[j]`),
 * not to the bounds' memory, loaded once before the loop once optimised.
 * Per source line without accesses (at[loc] not empty for its locations),
 * the variables so subscripted: line_vars[lines(line) - 1]. */
static void loop_control(struct graph *graph, const struct ppw_intvec *at,
                         struct ppw_ptrmap *lines, struct ppw_ptrmap *files,
                         struct ppw_intvec *line_vars)
{
    size_t line_count = 0;
    for (LLVMBasicBlockRef block = LLVMGetFirstBasicBlock(graph->function); block;
         block = LLVMGetNextBasicBlock(block))
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst;
             inst = LLVMGetNextInstruction(inst)) {
            int vertex = ppw_ptrmap_get(&graph->inst_vertex, inst, 0) - 1;
            int loc = vertex >= 0 ? graph->vertices[vertex].loc : -1;
            if (loc < 0 || !at[loc].count)
                continue;
            LLVMValueRef induction = controlled_induction(graph, inst);
            if (!induction)
                continue;
            const void *key = (const void *)(uintptr_t)line_key(&graph->locs[loc], files);
            int slot = ppw_ptrmap_get(lines, key, 0) - 1;
            if (slot < 0) {
                slot = (int)line_count++;
                ppw_ptrmap_put(lines, key, slot + 1);
            }
            indexed_memory(graph, induction, 0, &line_vars[slot]);
        }
}

/* A line that loads and stores no memory of its own (arithmetic on values
 * in registers: `r2 += dr * dr`) reads the memory its operands were loaded
 * from (`dr = r[i][m] - r[j][m]`): one read per variable and location. */
static void add_operand_reads(struct graph *graph, struct ppw_result_func *out, size_t capacity)
{
    struct ppw_ptrmap files = {0}, accessed_lines = {0};
    for (size_t i = 0; i < out->access_count; i++)
        ppw_ptrmap_put(&accessed_lines,
                       (const void *)(uintptr_t)line_key(&out->accesses[i].loc, &files), 1);
    /* the instructions of each location that accesses no memory */
    struct ppw_intvec *at_loc = ppw_xcalloc(graph->loc_count + 1, sizeof *at_loc);
    for (size_t v = 0; v < graph->vertex_count; v++) {
        const struct vertex *vertex = &graph->vertices[v];
        if (vertex->loc < 0 || vertex->kind != VERTEX_INSTRUCTION)
            continue;
        const struct ppw_loc *loc = &graph->locs[vertex->loc];
        if (loc->line &&
            !ppw_ptrmap_get(&accessed_lines, (const void *)(uintptr_t)line_key(loc, &files), 0))
            ppw_intvec_push(&at_loc[vertex->loc], (int)v);
    }
    /* at most one line per location */
    struct ppw_ptrmap loop_lines = {0};
    struct ppw_intvec *loop_vars = ppw_xcalloc(graph->loc_count + 1, sizeof *loop_vars);
    loop_control(graph, at_loc, &loop_lines, &files, loop_vars);
    struct operand_walk walk = {ppw_xcalloc(graph->vertex_count + 1, sizeof *walk.round),
                                ppw_xcalloc(graph->vertex_count + 1, sizeof *walk.hops), 0, {0}};
    struct ppw_intvec vars = {0};
    for (size_t l = 0; l < graph->loc_count; l++) {
        if (!at_loc[l].count)
            continue;
        vars.count = 0;
        int line = ppw_ptrmap_get(
                       &loop_lines, (const void *)(uintptr_t)line_key(&graph->locs[l], &files), 0) -
                   1;
        if (line >= 0 && loop_vars[line].count)
            for (size_t k = 0; k < loop_vars[line].count; k++)
                ppw_intvec_push(&vars, loop_vars[line].items[k]);
        else
            operand_memory(graph, &walk, &at_loc[l], &vars);
        for (size_t k = 0; k < vars.count; k++) {
            out->accesses = ppw_grow(out->accesses, &capacity, out->access_count + 1,
                                     sizeof *out->accesses, 16);
            out->accesses[out->access_count++] =
                (struct ppw_result_access){graph->locs[l], vars.items[k], 1, 0};
        }
        ppw_intvec_free(&at_loc[l]);
    }
    free(at_loc);
    for (size_t l = 0; l < graph->loc_count; l++)
        ppw_intvec_free(&loop_vars[l]);
    free(loop_vars);
    ppw_ptrmap_free(&loop_lines);
    free(walk.round);
    free(walk.hops);
    ppw_intvec_free(&walk.work);
    ppw_intvec_free(&vars);
    ppw_ptrmap_free(&files);
    ppw_ptrmap_free(&accessed_lines);
}

void ppw_graph_fill_accesses(struct graph *graph, struct ppw_result_func *out)
{
    const struct ppw_intvec *log = &graph->access_log;
    struct ppw_ptrmap index = {0}; /* (loc, var) -> 1 + position in out->accesses */
    struct ppw_ptrmap files = {0}, indexed_lines = {0};
    size_t capacity = 0;
    /* A line that indexes memory streams it: the pointers and scalar fields
     * it also reads (p, prm->box), loop-invariant in the loop that indexes,
     * stay in registers once optimised, so only the indexed accesses count
     * there (as scalar locals never count). */
    for (size_t i = 0; i + 3 < log->count; i += 4)
        if (log->items[i + 3] && !register_like(graph, log->items[i + 1]))
            ppw_ptrmap_put(&indexed_lines,
                           (const void *)(uintptr_t)line_key(&graph->locs[log->items[i]], &files),
                           1);
    for (size_t i = 0; i + 3 < log->count; i += 4) {
        int loc = log->items[i], node = log->items[i + 1], is_write = log->items[i + 2];
        if (register_like(graph, node))
            continue;
        if (!log->items[i + 3] &&
            ppw_ptrmap_get(&indexed_lines,
                           (const void *)(uintptr_t)line_key(&graph->locs[loc], &files), 0))
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
    ppw_ptrmap_free(&files);
    ppw_ptrmap_free(&indexed_lines);
    add_operand_reads(graph, out, capacity);
    if (out->access_count)
        qsort(out->accesses, out->access_count, sizeof *out->accesses, compare_access);
}

#include "blamegraph.h"

#include "cfg.h"
#include "llvm_shim.h"
#include "memory.h"

#include <ppw/libcalls.h>
#include <ppw/static_format.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The graph: vertices carry at most one source location; an edge a -> b
 * means a's blame set includes b's.  A variable's inclusive blame set is
 * the union of the locations reachable from its export vertex. */
enum vertex_kind {
    VERTEX_INSTRUCTION,
    VERTEX_CALL, /* a call to code outside this function */
    VERTEX_SELF, /* direct writes to a node */
    VERTEX_VIEW, /* what a load of the node reads */
    VERTEX_DOWN, /* the node with every field and pointee below it */
    VERTEX_DOWN_FIELDS, /* the node with its fields, not its pointees */
    VERTEX_CONTROL, /* the branches a block is control dependent on */
    VERTEX_EXPORT,
};
enum { NODE_VERTICES = 4 }; /* SELF, VIEW, DOWN, DOWN_FIELDS, in that order */

enum edge_kind { EDGE_DATA = 0, EDGE_CONTROL = 1, EDGE_ADDRESS = 2 };

/* Above this many words of reachability bitsets a function is exported
 * without blame sets (flag TRUNCATED) rather than exhausting memory. */
enum { MAX_BITSET_WORDS = 1 << 24 };

struct vertex {
    int loc;      /* index into locs, -1 */
    int kind;     /* enum vertex_kind */
    int node;     /* memory node of node vertices, -1 */
    struct ppw_intvec edges; /* target * 4 + edge_kind */
};

struct pending_binding {
    int node;
    int formal;
    unsigned mode;
    const char *path;
};

struct call_site {
    LLVMValueRef inst;
    int vertex;
    unsigned kind;
    const char *callee;
    struct ppw_intvec bindings; /* indices into graph.pending */
};

struct deferred_name {
    LLVMValueRef storage;
    LLVMMetadataRef variable;
    int through_pointer;
};

struct graph {
    const struct ppw_blamegraph_context *context;
    struct ppw_memory memory;
    struct ppw_cfg cfg;
    LLVMValueRef function;
    const char *file;
    struct vertex *vertices;
    size_t vertex_count, vertex_capacity;
    struct ppw_ptrmap inst_vertex;   /* instruction -> 1 + vertex */
    int *block_control;              /* per block: control vertex, -1 */
    struct ppw_ptrmap spill_stores;  /* stores that spill an argument to its slot */
    struct ppw_loc *locs;
    size_t loc_count, loc_capacity;
    struct ppw_ptrmap loc_index;     /* packed location -> 1 + index */
    struct ppw_ptrmap file_ids;      /* file name pointer -> id */
    struct call_site *calls;
    size_t call_count, call_capacity;
    struct pending_binding *pending;
    size_t pending_count, pending_capacity;
    struct deferred_name *deferred;
    size_t deferred_count, deferred_capacity;
    struct ppw_intvec ssa_bindings;  /* pairs: node, value vertex */
    int return_node;
    int *export_vertex;              /* per exported node */
    struct ppw_intvec exported;      /* node ids in export order */
    int truncated;
};

/* ---- locations ---------------------------------------------------------- */

static int intern_loc(struct graph *graph, const char *file, unsigned line, unsigned col)
{
    if (!line)
        return -1;
    if (file && !strcmp(file, graph->file))
        file = NULL;
    int file_id = 0;
    if (file) {
        file_id = ppw_ptrmap_get(&graph->file_ids, file, 0);
        if (!file_id) {
            file_id = (int)graph->file_ids.count + 1;
            ppw_ptrmap_put(&graph->file_ids, file, file_id);
        }
    }
    /* Packed into a pointer-sized key: 20 bits of file id, 28 of line, 16 of
     * column; never 0 because line > 0. */
    uint64_t packed = ((uint64_t)(file_id & 0xfffff) << 44) | ((uint64_t)(line & 0xfffffff) << 16) |
                      (col & 0xffff);
    const void *key = (const void *)(uintptr_t)packed;
    int index = ppw_ptrmap_get(&graph->loc_index, key, 0);
    if (index)
        return index - 1;
    if (graph->loc_count == graph->loc_capacity) {
        graph->loc_capacity = graph->loc_capacity ? graph->loc_capacity * 2 : 64;
        graph->locs = ppw_xrealloc(graph->locs, graph->loc_capacity, sizeof *graph->locs);
    }
    graph->locs[graph->loc_count] = (struct ppw_loc){file, line, col};
    ppw_ptrmap_put(&graph->loc_index, key, (int)++graph->loc_count);
    return (int)graph->loc_count - 1;
}

static int inst_loc(struct graph *graph, LLVMValueRef inst)
{
    unsigned line = LLVMGetDebugLocLine(inst);
    if (!line)
        return -1;
    unsigned length = 0;
    const char *file = LLVMGetDebugLocFilename(inst, &length);
    return intern_loc(graph, file, line, LLVMGetDebugLocColumn(inst));
}

/* ---- vertices and edges ------------------------------------------------- */

static int new_vertex(struct graph *graph, int kind, int loc, int node)
{
    if (graph->vertex_count == graph->vertex_capacity) {
        graph->vertex_capacity = graph->vertex_capacity ? graph->vertex_capacity * 2 : 256;
        graph->vertices =
            ppw_xrealloc(graph->vertices, graph->vertex_capacity, sizeof *graph->vertices);
    }
    struct vertex *vertex = &graph->vertices[graph->vertex_count];
    memset(vertex, 0, sizeof *vertex);
    vertex->kind = kind;
    vertex->loc = loc;
    vertex->node = node;
    return (int)graph->vertex_count++;
}

static void add_edge(struct graph *graph, int from, int to, enum edge_kind kind)
{
    if (from < 0 || to < 0 || from == to)
        return;
    ppw_intvec_add_unique(&graph->vertices[from].edges, to * 4 + (int)kind);
}

static int node_vertex(struct graph *graph, int node, int which)
{
    struct ppw_node *record = &graph->memory.nodes[node];
    if (record->vertex < 0) {
        int first = new_vertex(graph, VERTEX_SELF, -1, node);
        new_vertex(graph, VERTEX_VIEW, -1, node);
        new_vertex(graph, VERTEX_DOWN, -1, node);
        new_vertex(graph, VERTEX_DOWN_FIELDS, -1, node);
        graph->memory.nodes[node].vertex = first;
    }
    return graph->memory.nodes[node].vertex + which;
}

static int self_of(struct graph *graph, int node) { return node_vertex(graph, node, 0); }
static int view_of(struct graph *graph, int node) { return node_vertex(graph, node, 1); }
static int down_of(struct graph *graph, int node) { return node_vertex(graph, node, 2); }
static int fields_of(struct graph *graph, int node) { return node_vertex(graph, node, 3); }

static int inst_vertex(struct graph *graph, LLVMValueRef inst, int kind)
{
    int vertex = ppw_ptrmap_get(&graph->inst_vertex, inst, 0) - 1;
    if (vertex >= 0)
        return vertex;
    vertex = new_vertex(graph, kind, inst_loc(graph, inst), -1);
    ppw_ptrmap_put(&graph->inst_vertex, inst, vertex + 1);
    return vertex;
}

/* The vertex of an operand's value; constants, globals and arguments carry
 * no blame of their own in this function. */
static int operand_vertex(struct graph *graph, LLVMValueRef value)
{
    if (!value || !LLVMIsAInstruction(value) || LLVMIsAAllocaInst(value))
        return -1;
    return inst_vertex(graph, value, VERTEX_INSTRUCTION);
}

static int control_vertex(struct graph *graph, LLVMBasicBlockRef block)
{
    int index = ppw_cfg_index(&graph->cfg, block);
    if (index < 0 || !graph->cfg.controllers[index].count)
        return -1;
    if (graph->block_control[index] < 0) {
        int vertex = new_vertex(graph, VERTEX_CONTROL, -1, -1);
        graph->block_control[index] = vertex;
        const struct ppw_intvec *controllers = &graph->cfg.controllers[index];
        for (size_t i = 0; i < controllers->count; i++) {
            LLVMValueRef branch =
                LLVMGetBasicBlockTerminator(graph->cfg.blocks[controllers->items[i]]);
            if (branch)
                add_edge(graph, vertex, inst_vertex(graph, branch, VERTEX_INSTRUCTION),
                         EDGE_CONTROL);
        }
    }
    return graph->block_control[index];
}

/* ---- writes and exit variables ------------------------------------------ */

static int up(const struct ppw_memory *memory, int node)
{
    const struct ppw_node *record = &memory->nodes[node];
    return record->parent >= 0 ? record->parent : record->pte_of;
}

/* Marks what a write to `node` makes of the variables above it: written
 * through a parameter, or program-level. */
static void mark_write(struct graph *graph, int node)
{
    struct ppw_memory *memory = &graph->memory;
    int through_pointer = 0, root = node;
    for (int at = node; at >= 0; at = up(memory, at)) {
        if (memory->nodes[at].pte_of >= 0)
            through_pointer = 1;
        root = at;
    }
    unsigned flags = PPW_VAR_WRITTEN;
    if (through_pointer && memory->nodes[root].is_param_root)
        flags |= PPW_VAR_EXIT_WRITTEN;
    for (int at = node; at >= 0; at = up(memory, at)) {
        memory->nodes[at].flags |= flags;
        /* Only the written node itself is directly written. */
        flags &= ~(unsigned)PPW_VAR_WRITTEN;
        if (!(flags & PPW_VAR_EXIT_WRITTEN))
            break;
    }
}

static void write_to(struct graph *graph, int node, int writer)
{
    add_edge(graph, self_of(graph, node), writer, EDGE_DATA);
    int loc = graph->vertices[writer].loc;
    if (loc >= 0)
        ppw_intvec_add_unique(&graph->memory.nodes[node].write_locs, loc);
    mark_write(graph, node);
}

/* The nodes an access of `address` touches.  A scalar access at a
 * struct's address touches its first member (bitfields, unions). */
static void accessed_nodes(struct graph *graph, LLVMValueRef address, int scalar,
                           struct ppw_intvec *out)
{
    const struct ppw_intvec *targets = ppw_memory_targets(&graph->memory, address);
    struct ppw_intvec copy = {0};
    for (size_t i = 0; targets && i < targets->count; i++)
        ppw_intvec_push(&copy, targets->items[i] / 2);
    for (size_t i = 0; i < copy.count; i++)
        ppw_intvec_add_unique(out, scalar ? ppw_memory_first_member(&graph->memory, copy.items[i])
                                          : copy.items[i]);
    ppw_intvec_free(&copy);
}

static int is_scalar_access(LLVMValueRef inst)
{
    LLVMTypeRef type = LLVMTypeOf(LLVMGetInstructionOpcode(inst) == LLVMStore
                                      ? LLVMGetOperand(inst, 0)
                                      : inst);
    LLVMTypeKind kind = LLVMGetTypeKind(type);
    return kind != LLVMStructTypeKind && kind != LLVMArrayTypeKind;
}

static void write_targets(struct graph *graph, LLVMValueRef address, int writer, int scalar)
{
    struct ppw_intvec nodes = {0};
    accessed_nodes(graph, address, scalar, &nodes);
    for (size_t i = 0; i < nodes.count; i++)
        write_to(graph, nodes.items[i], writer);
    ppw_intvec_free(&nodes);
}

static void read_targets(struct graph *graph, LLVMValueRef address, int reader, int scalar)
{
    struct ppw_intvec nodes = {0};
    accessed_nodes(graph, address, scalar, &nodes);
    for (size_t i = 0; i < nodes.count; i++)
        add_edge(graph, reader, view_of(graph, nodes.items[i]), EDGE_DATA);
    ppw_intvec_free(&nodes);
}

/* ---- variable discovery ------------------------------------------------- */

static int hidden_variable_name(const char *name, int artificial)
{
    /* OpenMP's .omp.iv, .global_tid., the __context of tasks, unnamed
     * parameters of generated functions. */
    return !name[0] || name[0] == '.' || (artificial && !strncmp(name, "__", 2));
}

static void name_node(struct graph *graph, int node, LLVMMetadataRef variable)
{
    const char *name = ppw_di_name(variable);
    struct ppw_node *record = &graph->memory.nodes[node];
    ppw_ptrmap_put(&graph->memory.variable_node, variable, node);
    if (record->var_name || hidden_variable_name(name, ppw_di_variable_is_artificial(variable)))
        return;
    record->var_name = name;
    record->kind = ppw_di_variable_arg(variable) ? PPW_VAR_PARAM : PPW_VAR_LOCAL;
    record->type = ppw_di_variable_type(variable);
    record->decl_file = ppw_di_file(variable);
    record->decl_line = ppw_di_line(variable);
    ppw_dbgvar_types_add(graph->context->types, record->type);
}

static const char *callee_name(LLVMValueRef call)
{
    LLVMValueRef callee = LLVMGetCalledValue(call);
    while (callee && LLVMIsAConstantExpr(callee) && LLVMGetConstOpcode(callee) == LLVMBitCast)
        callee = LLVMGetOperand(callee, 0);
    if (!callee || !LLVMIsAFunction(callee))
        return NULL;
    size_t length = 0;
    return LLVMGetValueName2(callee, &length);
}

static int is_call(LLVMValueRef inst)
{
    LLVMOpcode opcode = LLVMGetInstructionOpcode(inst);
    return opcode == LLVMCall || opcode == LLVMInvoke;
}

static void defer_name(struct graph *graph, LLVMValueRef storage, LLVMMetadataRef variable,
                       int through_pointer)
{
    if (graph->deferred_count == graph->deferred_capacity) {
        graph->deferred_capacity = graph->deferred_capacity ? graph->deferred_capacity * 2 : 8;
        graph->deferred =
            ppw_xrealloc(graph->deferred, graph->deferred_capacity, sizeof *graph->deferred);
    }
    graph->deferred[graph->deferred_count++] =
        (struct deferred_name){storage, variable, through_pointer};
}

static int variable_root(struct graph *graph, LLVMMetadataRef variable)
{
    int node = ppw_ptrmap_get(&graph->memory.variable_node, variable, -1);
    if (node < 0) {
        node = ppw_memory_new_node(&graph->memory);
        name_node(graph, node, variable);
        graph->memory.nodes[node].flags |= PPW_VAR_SSA;
    }
    return node;
}

static void discover_debug_record(struct graph *graph, LLVMValueRef call, const char *name)
{
    LLVMMetadataRef variable = ppw_dbg_variable(call);
    if (!variable)
        return;
    if (!strcmp(name, "llvm.dbg.value")) {
        LLVMValueRef value = ppw_dbg_value(call);
        int node = variable_root(graph, variable);
        if (value && LLVMIsAArgument(value) &&
            ppw_ptrmap_get(&graph->memory.argument_node, value, -1) < 0) {
            /* SSA form (opt after mem2reg): the argument is the parameter. */
            struct ppw_node *record = &graph->memory.nodes[node];
            record->is_param_root = 1;
            unsigned count = LLVMCountParams(graph->function);
            for (unsigned i = 0; i < count; i++)
                if (LLVMGetParam(graph->function, i) == value)
                    record->param_index = (int)i;
            ppw_ptrmap_put(&graph->memory.argument_node, value, node);
        }
        if (value && LLVMIsAInstruction(value)) {
            ppw_intvec_push(&graph->ssa_bindings, node);
            ppw_intvec_push(&graph->ssa_bindings, operand_vertex(graph, value));
        }
        return;
    }
    int is_assign = !strcmp(name, "llvm.dbg.assign");
    LLVMValueRef storage = is_assign ? ppw_dbg_assign_address(call) : ppw_dbg_value(call);
    int through_pointer = !is_assign && ppw_dbg_expr_derefs(call);
    if (!storage)
        return;
    /* Assignment tracking also links each store to its variable, with the
     * store's address (a field of it); the record at the alloca names it. */
    if (is_assign && !LLVMIsAAllocaInst(storage) && !LLVMIsAArgument(storage))
        return;
    if (!through_pointer && (LLVMIsAAllocaInst(storage) || LLVMIsAArgument(storage)))
        name_node(graph, ppw_memory_storage(&graph->memory, storage), variable);
    else
        defer_name(graph, storage, variable, through_pointer);
}

/* Parameters arrive in registers and clang stores each into its own slot:
 * that store is no source-level write, and the slot is the parameter. */
static void discover_spill(struct graph *graph, LLVMValueRef store)
{
    LLVMValueRef value = LLVMGetOperand(store, 0), slot = LLVMGetOperand(store, 1);
    if (!LLVMIsAArgument(value) || !LLVMIsAAllocaInst(slot))
        return;
    if (ppw_ptrmap_get(&graph->memory.argument_node, value, -1) >= 0)
        return;
    int node = ppw_memory_storage(&graph->memory, slot);
    struct ppw_node *record = &graph->memory.nodes[node];
    record->is_param_root = 1;
    unsigned count = LLVMCountParams(graph->function);
    for (unsigned i = 0; i < count; i++)
        if (LLVMGetParam(graph->function, i) == value)
            record->param_index = (int)i;
    if (record->var_name)
        record->kind = PPW_VAR_PARAM;
    ppw_ptrmap_put(&graph->memory.argument_node, value, node);
    ppw_ptrmap_put(&graph->spill_stores, store, 1);
}

static void discover_variables(struct graph *graph)
{
    for (size_t b = 0; b < graph->cfg.block_count; b++)
        for (LLVMValueRef inst = LLVMGetFirstInstruction(graph->cfg.blocks[b]); inst;
             inst = LLVMGetNextInstruction(inst)) {
            if (is_call(inst)) {
                const char *name = callee_name(inst);
                if (name && !strncmp(name, "llvm.dbg.", 9))
                    discover_debug_record(graph, inst, name);
            }
        }
    /* Spills are recognized after names, so a named slot becomes a parameter. */
    for (size_t b = 0; b < graph->cfg.block_count; b++)
        for (LLVMValueRef inst = LLVMGetFirstInstruction(graph->cfg.blocks[b]); inst;
             inst = LLVMGetNextInstruction(inst))
            if (LLVMGetInstructionOpcode(inst) == LLVMStore)
                discover_spill(graph, inst);
}

/* Storage named through a pointer (OpenMP task shareds, VLAs): resolved
 * once points-to is known. */
static void resolve_deferred_names(struct graph *graph)
{
    for (size_t i = 0; i < graph->deferred_count; i++) {
        const struct deferred_name *deferred = &graph->deferred[i];
        struct ppw_intvec targets = {0};
        const struct ppw_intvec *direct = ppw_memory_targets(&graph->memory, deferred->storage);
        if (deferred->through_pointer) {
            struct ppw_intvec slots = {0};
            for (size_t t = 0; direct && t < direct->count; t++)
                ppw_intvec_add_unique(
                    &slots, ppw_memory_first_member(&graph->memory, direct->items[t] / 2) * 2);
            ppw_memory_load_targets(&graph->memory, &slots, &targets);
            ppw_intvec_free(&slots);
        }
        else if (direct)
            for (size_t t = 0; t < direct->count; t++)
                ppw_intvec_push(&targets, direct->items[t]);
        if (targets.count == 1) {
            int node = targets.items[0] / 2;
            if (!graph->memory.nodes[node].var_name) {
                name_node(graph, node, deferred->variable);
                graph->memory.nodes[node].kind = PPW_VAR_LOCAL;
            }
        }
        ppw_intvec_free(&targets);
    }
}

/* ---- instructions -> edges ---------------------------------------------- */

static int is_pointer_value(LLVMValueRef value)
{
    return LLVMGetTypeKind(LLVMTypeOf(value)) == LLVMPointerTypeKind;
}

static int ignored_intrinsic(const char *name)
{
    static const char *const prefixes[] = {
        "llvm.dbg.",  "llvm.lifetime.", "llvm.experimental.noalias", "llvm.assume",
        "llvm.stacksave", "llvm.stackrestore", "llvm.va_", "llvm.invariant.",
        "llvm.var.annotation", "llvm.donothing", "llvm.prefetch",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

static void add_call_site(struct graph *graph, LLVMValueRef inst, int vertex)
{
    if (graph->call_count == graph->call_capacity) {
        graph->call_capacity = graph->call_capacity ? graph->call_capacity * 2 : 16;
        graph->calls = ppw_xrealloc(graph->calls, graph->call_capacity, sizeof *graph->calls);
    }
    struct call_site *site = &graph->calls[graph->call_count++];
    memset(site, 0, sizeof *site);
    site->inst = inst;
    site->vertex = vertex;
}

static void visit_memory_intrinsic(struct graph *graph, LLVMValueRef call, int is_set,
                                   LLVMBasicBlockRef block)
{
    int writer = inst_vertex(graph, call, VERTEX_INSTRUCTION);
    LLVMValueRef destination = LLVMGetOperand(call, 0), source = LLVMGetOperand(call, 1);
    add_edge(graph, writer, operand_vertex(graph, source), EDGE_DATA);
    add_edge(graph, writer, operand_vertex(graph, LLVMGetOperand(call, 2)), EDGE_DATA);
    add_edge(graph, writer, operand_vertex(graph, destination), EDGE_ADDRESS);
    add_edge(graph, writer, control_vertex(graph, block), EDGE_CONTROL);
    if (!is_set)
        read_targets(graph, source, writer, 0);
    write_targets(graph, destination, writer, 0);
}

/* A library call without IR: the table names the arguments it writes and
 * the ones the written data comes from. */
static void visit_library_effects(struct graph *graph, LLVMValueRef call,
                                  const struct ppw_libcall *library, LLVMBasicBlockRef block)
{
    unsigned count = LLVMGetNumArgOperands(call);
    int writes_any = 0;
    for (unsigned k = 0; k < count; k++)
        writes_any |= ppw_libcall_writes(library, k);
    if (!writes_any)
        return;
    int writer = new_vertex(graph, VERTEX_INSTRUCTION, inst_loc(graph, call), -1);
    add_edge(graph, writer, control_vertex(graph, block), EDGE_CONTROL);
    for (unsigned k = 0; k < count; k++) {
        LLVMValueRef argument = LLVMGetOperand(call, k);
        if (ppw_libcall_reads(library, k)) {
            add_edge(graph, writer, operand_vertex(graph, argument), EDGE_DATA);
            if (is_pointer_value(argument))
                read_targets(graph, argument, writer, 0);
        }
    }
    for (unsigned k = 0; k < count; k++)
        if (ppw_libcall_writes(library, k)) {
            LLVMValueRef argument = LLVMGetOperand(call, k);
            add_edge(graph, writer, operand_vertex(graph, argument), EDGE_ADDRESS);
            write_targets(graph, argument, writer, 0);
        }
}

static void visit_call(struct graph *graph, LLVMValueRef call, LLVMBasicBlockRef block)
{
    const char *name = callee_name(call);
    LLVMValueRef callee = LLVMGetCalledValue(call);
    if (name && callee && LLVMIsAFunction(callee) && LLVMGetIntrinsicID(callee)) {
        if (ignored_intrinsic(name))
            return;
        if (!strncmp(name, "llvm.memcpy", 11) || !strncmp(name, "llvm.memmove", 12)) {
            visit_memory_intrinsic(graph, call, 0, block);
            return;
        }
        if (!strncmp(name, "llvm.memset", 11)) {
            visit_memory_intrinsic(graph, call, 1, block);
            return;
        }
        /* Arithmetic intrinsics (fmuladd, sqrt, ...) compute from their operands. */
        int vertex = inst_vertex(graph, call, VERTEX_INSTRUCTION);
        unsigned count = LLVMGetNumArgOperands(call);
        for (unsigned k = 0; k < count; k++)
            add_edge(graph, vertex, operand_vertex(graph, LLVMGetOperand(call, k)), EDGE_DATA);
        return;
    }
    int vertex = inst_vertex(graph, call, VERTEX_CALL);
    graph->vertices[vertex].kind = VERTEX_CALL;
    unsigned count = LLVMGetNumArgOperands(call);
    for (unsigned k = 0; k < count; k++) {
        LLVMValueRef argument = LLVMGetOperand(call, k);
        add_edge(graph, vertex, operand_vertex(graph, argument), EDGE_DATA);
        if (is_pointer_value(argument))
            read_targets(graph, argument, vertex, 0);
    }
    if (!name)
        add_edge(graph, vertex, operand_vertex(graph, callee), EDGE_DATA);
    const struct ppw_libcall *library = ppw_libcall_find(name);
    if (library)
        visit_library_effects(graph, call, library, block);
    add_call_site(graph, call, vertex);
}

static void visit_branch(struct graph *graph, LLVMValueRef branch, LLVMValueRef condition,
                         LLVMBasicBlockRef block)
{
    int vertex = inst_vertex(graph, branch, VERTEX_INSTRUCTION);
    add_edge(graph, vertex, operand_vertex(graph, condition), EDGE_DATA);
    add_edge(graph, vertex, control_vertex(graph, block), EDGE_CONTROL);
}

static void visit_phi(struct graph *graph, LLVMValueRef phi)
{
    int vertex = inst_vertex(graph, phi, VERTEX_INSTRUCTION);
    unsigned count = LLVMCountIncoming(phi);
    for (unsigned i = 0; i < count; i++) {
        add_edge(graph, vertex, operand_vertex(graph, LLVMGetIncomingValue(phi, i)), EDGE_DATA);
        /* Which value arrives is decided by the incoming block's branch. */
        LLVMValueRef branch = LLVMGetBasicBlockTerminator(LLVMGetIncomingBlock(phi, i));
        if (branch && LLVMGetInstructionOpcode(branch) == LLVMBr && LLVMIsConditional(branch))
            add_edge(graph, vertex, inst_vertex(graph, branch, VERTEX_INSTRUCTION), EDGE_CONTROL);
    }
}

static void visit_store(struct graph *graph, LLVMValueRef store, LLVMBasicBlockRef block)
{
    if (ppw_ptrmap_get(&graph->spill_stores, store, 0))
        return;
    int writer = inst_vertex(graph, store, VERTEX_INSTRUCTION);
    LLVMValueRef address = LLVMGetOperand(store, 1);
    add_edge(graph, writer, operand_vertex(graph, LLVMGetOperand(store, 0)), EDGE_DATA);
    add_edge(graph, writer, operand_vertex(graph, address), EDGE_ADDRESS);
    add_edge(graph, writer, control_vertex(graph, block), EDGE_CONTROL);
    write_targets(graph, address, writer, is_scalar_access(store));
}

static void visit_return(struct graph *graph, LLVMValueRef ret, LLVMBasicBlockRef block)
{
    if (graph->return_node < 0 || LLVMGetNumOperands(ret) < 1)
        return;
    int writer = inst_vertex(graph, ret, VERTEX_INSTRUCTION);
    add_edge(graph, writer, operand_vertex(graph, LLVMGetOperand(ret, 0)), EDGE_DATA);
    add_edge(graph, writer, control_vertex(graph, block), EDGE_CONTROL);
    write_to(graph, graph->return_node, writer);
}

static void visit_generic(struct graph *graph, LLVMValueRef inst)
{
    int vertex = inst_vertex(graph, inst, VERTEX_INSTRUCTION);
    int count = LLVMGetNumOperands(inst);
    for (int i = 0; i < count; i++)
        add_edge(graph, vertex, operand_vertex(graph, LLVMGetOperand(inst, (unsigned)i)),
                 EDGE_DATA);
}

static void visit_instruction(struct graph *graph, LLVMValueRef inst, LLVMBasicBlockRef block)
{
    switch (LLVMGetInstructionOpcode(inst)) {
    case LLVMAlloca:
    case LLVMUnreachable:
        return;
    case LLVMLoad: {
        int vertex = inst_vertex(graph, inst, VERTEX_INSTRUCTION);
        LLVMValueRef address = LLVMGetOperand(inst, 0);
        read_targets(graph, address, vertex, is_scalar_access(inst));
        add_edge(graph, vertex, operand_vertex(graph, address), EDGE_ADDRESS);
        return;
    }
    case LLVMStore:
        visit_store(graph, inst, block);
        return;
    case LLVMCall:
    case LLVMInvoke:
        visit_call(graph, inst, block);
        return;
    case LLVMRet:
        visit_return(graph, inst, block);
        return;
    case LLVMBr:
        if (LLVMIsConditional(inst))
            visit_branch(graph, inst, LLVMGetCondition(inst), block);
        return;
    case LLVMSwitch:
    case LLVMIndirectBr:
        visit_branch(graph, inst, LLVMGetOperand(inst, 0), block);
        return;
    case LLVMPHI:
        visit_phi(graph, inst);
        return;
    default:
        visit_generic(graph, inst);
        return;
    }
}

static void build_edges(struct graph *graph)
{
    for (size_t b = 0; b < graph->cfg.block_count; b++) {
        LLVMBasicBlockRef block = graph->cfg.blocks[b];
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst;
             inst = LLVMGetNextInstruction(inst))
            visit_instruction(graph, inst, block);
    }
    for (size_t i = 0; i + 1 < graph->ssa_bindings.count; i += 2) {
        int node = graph->ssa_bindings.items[i], value = graph->ssa_bindings.items[i + 1];
        add_edge(graph, self_of(graph, node), value, EDGE_DATA);
        if (value >= 0 && graph->vertices[value].loc >= 0)
            ppw_intvec_add_unique(&graph->memory.nodes[node].write_locs,
                                  graph->vertices[value].loc);
        graph->memory.nodes[node].flags |= PPW_VAR_WRITTEN;
    }
}


/* ---- call sites ---------------------------------------------------------- */

static void add_pending(struct graph *graph, struct call_site *site, int node, int formal,
                        unsigned mode, const char *path)
{
    for (size_t i = 0; i < site->bindings.count; i++) {
        const struct pending_binding *old = &graph->pending[site->bindings.items[i]];
        if (old->node == node && old->formal == formal && old->mode == mode &&
            !strcmp(old->path, path))
            return;
    }
    if (graph->pending_count == graph->pending_capacity) {
        graph->pending_capacity = graph->pending_capacity ? graph->pending_capacity * 2 : 32;
        graph->pending =
            ppw_xrealloc(graph->pending, graph->pending_capacity, sizeof *graph->pending);
    }
    graph->pending[graph->pending_count] = (struct pending_binding){node, formal, mode, path};
    graph->memory.nodes[node].touched = 1;
    ppw_intvec_push(&site->bindings, (int)graph->pending_count++);
}

static void bind_pointer(struct graph *graph, struct call_site *site, LLVMValueRef argument,
                         int formal, unsigned mode)
{
    const struct ppw_intvec *targets = ppw_memory_targets(&graph->memory, argument);
    size_t count = targets ? targets->count : 0;
    for (size_t i = 0; i < count; i++) {
        int node = targets->items[i] / 2;
        add_pending(graph, site, node, formal, mode, "");
        if (mode == PPW_BIND_REF)
            graph->memory.nodes[node].flags |= PPW_VAR_PASSED_BY_REF;
    }
}

/* Variables whose values reach `start` by data flow alone, stopping at
 * named memory and at calls (a call's result is its callee's business). */
static void data_sources(struct graph *graph, int start, int stop_at_calls,
                         struct ppw_intvec *nodes, struct ppw_intvec *calls, int *stamp,
                         int stamp_value)
{
    if (start < 0)
        return;
    struct ppw_intvec work = {0};
    ppw_intvec_push(&work, start);
    stamp[start] = stamp_value;
    while (work.count) {
        int vertex = work.items[--work.count];
        const struct vertex *record = &graph->vertices[vertex];
        if (vertex != start) {
            if (record->node >= 0 && ppw_memory_named_root(&graph->memory, record->node) >= 0) {
                if (nodes)
                    ppw_intvec_add_unique(nodes, record->node);
                continue;
            }
            if (record->kind == VERTEX_CALL) {
                if (calls)
                    ppw_intvec_add_unique(calls, vertex);
                if (stop_at_calls)
                    continue;
            }
        }
        for (size_t e = 0; e < record->edges.count; e++) {
            int edge = record->edges.items[e];
            if (edge % 4 != EDGE_DATA || stamp[edge / 4] == stamp_value)
                continue;
            stamp[edge / 4] = stamp_value;
            ppw_intvec_push(&work, edge / 4);
        }
    }
    ppw_intvec_free(&work);
}

static void bind_value(struct graph *graph, struct call_site *site, LLVMValueRef argument,
                       int formal, unsigned mode, int *stamp, int *stamp_value)
{
    struct ppw_intvec nodes = {0};
    data_sources(graph, operand_vertex(graph, argument), 1, &nodes, NULL, stamp, ++*stamp_value);
    for (size_t i = 0; i < nodes.count; i++)
        add_pending(graph, site, nodes.items[i], formal, mode, "");
    ppw_intvec_free(&nodes);
}

static const char *function_operand_name(LLVMValueRef value)
{
    while (value && LLVMIsAConstantExpr(value) && LLVMGetConstOpcode(value) == LLVMBitCast)
        value = LLVMGetOperand(value, 0);
    if (!value || !LLVMIsAFunction(value))
        return "";
    size_t length = 0;
    return LLVMGetValueName2(value, &length);
}

/* pthread_create(thread, attr, start, arg): arg is the start routine's
 * parameter 0, and each field of a struct it points at is that field of
 * the parameter's pointee. */
static void bind_spawn(struct graph *graph, struct call_site *site)
{
    LLVMValueRef argument = LLVMGetOperand(site->inst, 3);
    bind_pointer(graph, site, LLVMGetOperand(site->inst, 0), -1, PPW_BIND_WRITTEN);
    site->bindings.count = 0; /* the handle is the library's output, not the routine's */
    bind_pointer(graph, site, argument, 0, PPW_BIND_REF);
    const struct ppw_intvec *targets = ppw_memory_targets(&graph->memory, argument);
    struct ppw_intvec copy = {0};
    for (size_t i = 0; targets && i < targets->count; i++)
        ppw_intvec_push(&copy, targets->items[i]);
    for (size_t i = 0; i < copy.count; i++) {
        int node = copy.items[i] / 2, indexed = copy.items[i] % 2;
        LLVMMetadataRef record = ppw_dbgvar_strip(ppw_dbgvar_element(graph->memory.nodes[node].type));
        unsigned members = ppw_di_element_count(record);
        for (unsigned m = 0; m < members && m < 64; m++) {
            LLVMMetadataRef member = ppw_di_element(record, m);
            const char *field = ppw_di_name(member);
            if (!field[0] || ppw_di_tag(member) != 0x0d /* DW_TAG_member */)
                continue;
            int child = ppw_memory_field(&graph->memory, node, field, indexed,
                                         ppw_di_base_type(member));
            add_pending(graph, site, child, 0, PPW_BIND_REF,
                        ppw_arena_printf(graph->context->arena, "->%s", field));
        }
    }
    ppw_intvec_free(&copy);
}

/* __kmpc_omp_task_alloc: the parent stores pointers to the shared
 * variables into a captured struct and copies it into the task's shareds.
 * The task body declares each shared under its own name, so the binding
 * names it (callee_path) on the body's shareds parameter. */
/* The task entry unpacks the task and calls the task body, the function
 * that names the shared variables; its last parameter is the shareds. */
static LLVMValueRef task_body(LLVMValueRef entry, int *shareds_formal)
{
    while (entry && LLVMIsAConstantExpr(entry) && LLVMGetConstOpcode(entry) == LLVMBitCast)
        entry = LLVMGetOperand(entry, 0);
    if (!entry || !LLVMIsAFunction(entry) || LLVMIsDeclaration(entry))
        return NULL;
    for (LLVMBasicBlockRef block = LLVMGetFirstBasicBlock(entry); block;
         block = LLVMGetNextBasicBlock(block))
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst;
             inst = LLVMGetNextInstruction(inst)) {
            const char *name = is_call(inst) ? callee_name(inst) : NULL;
            if (name && strstr(name, ".omp_outlined")) {
                LLVMValueRef body = LLVMGetCalledValue(inst);
                *shareds_formal = (int)LLVMCountParams(body) - 1;
                return body;
            }
        }
    return NULL;
}

static void bind_task(struct graph *graph, struct call_site *site, LLVMValueRef entry)
{
    int formal = 1;
    LLVMValueRef body = task_body(entry, &formal);
    site->callee = function_operand_name(body ? body : entry);
    LLVMValueRef copy = NULL;
    for (LLVMValueRef inst = LLVMGetNextInstruction(site->inst); inst && !copy;
         inst = LLVMGetNextInstruction(inst)) {
        const char *name = is_call(inst) ? callee_name(inst) : NULL;
        if (name && !strncmp(name, "llvm.memcpy", 11))
            copy = inst;
        else if (name && !strncmp(name, "__kmpc_omp_task", 15) && strcmp(name, "__kmpc_omp_task_alloc"))
            break;
    }
    if (!copy)
        return;
    const struct ppw_intvec *captured = ppw_memory_targets(&graph->memory, LLVMGetOperand(copy, 1));
    struct ppw_intvec shared = {0};
    for (size_t i = 0; captured && i < captured->count; i++) {
        const struct ppw_node *record = &graph->memory.nodes[captured->items[i] / 2];
        for (size_t t = 0; t < record->contents.count; t++)
            ppw_intvec_add_unique(&shared, record->contents.items[t]);
        for (size_t c = 0; c < record->children.count; c++) {
            const struct ppw_node *field = &graph->memory.nodes[record->children.items[c]];
            for (size_t t = 0; t < field->contents.count; t++)
                ppw_intvec_add_unique(&shared, field->contents.items[t]);
        }
    }
    for (size_t i = 0; i < shared.count; i++) {
        int node = shared.items[i] / 2;
        const char *name = ppw_memory_display_name(&graph->memory, node);
        if (!name)
            continue;
        graph->memory.nodes[node].flags |= PPW_VAR_PASSED_BY_REF;
        add_pending(graph, site, node, formal, PPW_BIND_REF, name);
    }
    ppw_intvec_free(&shared);
}

static void bind_call(struct graph *graph, struct call_site *site, int *stamp, int *stamp_value)
{
    LLVMValueRef call = site->inst;
    const char *name = callee_name(call);
    unsigned count = LLVMGetNumArgOperands(call);
    const struct ppw_libcall *library = ppw_libcall_find(name);
    if (name && (!strcmp(name, "__kmpc_fork_call") || !strcmp(name, "__kmpc_fork_teams")) &&
        count >= 3) {
        site->kind = PPW_CALL_FORK;
        site->callee = function_operand_name(LLVMGetOperand(call, 2));
        for (unsigned k = 3; k < count; k++) /* operand 3+k -> parameter 2+k */
            bind_pointer(graph, site, LLVMGetOperand(call, k), (int)k - 1, PPW_BIND_REF);
        return;
    }
    if (name && !strcmp(name, "__kmpc_omp_task_alloc") && count >= 6) {
        site->kind = PPW_CALL_TASK;
        bind_task(graph, site, LLVMGetOperand(call, 5));
        return;
    }
    if (name && !strcmp(name, "pthread_create") && count >= 4) {
        site->kind = PPW_CALL_SPAWN;
        site->callee = function_operand_name(LLVMGetOperand(call, 2));
        bind_spawn(graph, site);
        return;
    }
    site->kind = library ? PPW_CALL_LIBRARY : name ? PPW_CALL_DIRECT : PPW_CALL_INDIRECT;
    site->callee = name ? name : "";
    for (unsigned k = 0; k < count; k++) {
        LLVMValueRef argument = LLVMGetOperand(call, k);
        unsigned mode = PPW_BIND_REF;
        if (library)
            mode = ppw_libcall_writes(library, k) ? PPW_BIND_WRITTEN
                   : ppw_libcall_reads(library, k) ? PPW_BIND_SOURCE
                                                   : 0;
        if (!mode)
            continue;
        const struct ppw_intvec *targets =
            is_pointer_value(argument) ? ppw_memory_targets(&graph->memory, argument) : NULL;
        if (targets && targets->count)
            bind_pointer(graph, site, argument, (int)k, mode);
        else
            bind_value(graph, site, argument, (int)k,
                       mode == PPW_BIND_REF ? PPW_BIND_VALUE : mode, stamp, stamp_value);
    }
}

/* ---- structure, export and reachability ---------------------------------- */

static void wire_node(struct graph *graph, int node)
{
    struct ppw_memory *memory = &graph->memory;
    int self = self_of(graph, node), view = view_of(graph, node);
    int down = down_of(graph, node), fields = fields_of(graph, node);
    add_edge(graph, view, self, EDGE_DATA);
    add_edge(graph, view, fields, EDGE_DATA);
    add_edge(graph, down, self, EDGE_DATA);
    add_edge(graph, fields, self, EDGE_DATA);
    /* A read of a field also reads writes of the whole enclosing struct. */
    for (int at = memory->nodes[node].parent; at >= 0; at = memory->nodes[at].parent)
        add_edge(graph, view, self_of(graph, at), EDGE_DATA);
    for (size_t c = 0; c < memory->nodes[node].children.count; c++) {
        int child = memory->nodes[node].children.items[c];
        add_edge(graph, down, down_of(graph, child), EDGE_DATA);
        add_edge(graph, fields, fields_of(graph, child), EDGE_DATA);
    }
    if (memory->nodes[node].pte >= 0)
        add_edge(graph, down, down_of(graph, memory->nodes[node].pte), EDGE_DATA);
    if (memory->nodes[node].kind == PPW_VAR_LOCAL && memory->nodes[node].var_name)
        graph->vertices[self].loc = intern_loc(graph, memory->nodes[node].decl_file,
                                               memory->nodes[node].decl_line, 0);
}

static int is_exported(const struct ppw_memory *memory, int node)
{
    const struct ppw_node *record = &memory->nodes[node];
    if (record->var_name)
        return 1;
    if (record->parent < 0 || ppw_memory_named_root(memory, node) < 0)
        return 0;
    return record->touched;
}

static void select_exports(struct graph *graph)
{
    for (size_t n = 0; n < graph->memory.node_count; n++)
        if (is_exported(&graph->memory, (int)n)) {
            graph->memory.nodes[n].export_id = (int)graph->exported.count;
            ppw_intvec_push(&graph->exported, (int)n);
        }
    graph->export_vertex = ppw_xcalloc(graph->exported.count + 1, sizeof *graph->export_vertex);
    for (size_t i = 0; i < graph->exported.count; i++) {
        int node = graph->exported.items[i];
        int vertex = new_vertex(graph, VERTEX_EXPORT, -1, -1);
        add_edge(graph, vertex, down_of(graph, node), EDGE_DATA);
        for (int at = graph->memory.nodes[node].parent; at >= 0; at = graph->memory.nodes[at].parent)
            add_edge(graph, vertex, self_of(graph, at), EDGE_DATA);
        graph->export_vertex[i] = vertex;
    }
}

/* The exported variable a node is reported as: pointees show under their
 * pointer, unreported fields under their nearest reported ancestor. */
static int export_of(const struct ppw_memory *memory, int node)
{
    for (int at = node; at >= 0; at = up(memory, at))
        if (memory->nodes[at].export_id >= 0)
            return memory->nodes[at].export_id;
    return -1;
}

/* Tarjan's strongly connected components, iteratively, then one bitset of
 * locations per component, built sinks first.  Returns NULL when the sets
 * would be too large. */
static uint64_t **reachable_locations(struct graph *graph, int **component_of)
{
    size_t n = graph->vertex_count, words = (graph->loc_count + 63) / 64;
    int *index = ppw_xcalloc(n, sizeof *index), *low = ppw_xcalloc(n, sizeof *low);
    int *on_stack = ppw_xcalloc(n, sizeof *on_stack), *component = ppw_xcalloc(n, sizeof *component);
    int *stack = ppw_xcalloc(n, sizeof *stack), *call_vertex = ppw_xcalloc(n, sizeof *call_vertex);
    size_t *edge_position = ppw_xcalloc(n, sizeof *edge_position);
    uint64_t **sets = NULL;
    size_t set_count = 0, set_capacity = 0, stack_depth = 0, total_words = 0;
    int counter = 0, too_big = 0;
    for (size_t v = 0; v < n; v++)
        index[v] = -1;
    for (size_t root = 0; root < n && !too_big; root++) {
        if (index[root] >= 0)
            continue;
        size_t call_depth = 0;
        call_vertex[call_depth++] = (int)root;
        index[root] = low[root] = counter++;
        stack[stack_depth++] = (int)root;
        on_stack[root] = 1;
        while (call_depth) {
            int v = call_vertex[call_depth - 1];
            const struct ppw_intvec *edges = &graph->vertices[v].edges;
            if (edge_position[v] < edges->count) {
                int w = edges->items[edge_position[v]++] / 4;
                if (index[w] < 0) {
                    index[w] = low[w] = counter++;
                    stack[stack_depth++] = w;
                    on_stack[w] = 1;
                    call_vertex[call_depth++] = w;
                } else if (on_stack[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            call_depth--;
            if (call_depth && low[v] < low[call_vertex[call_depth - 1]])
                low[call_vertex[call_depth - 1]] = low[v];
            if (low[v] != index[v])
                continue;
            /* v roots a component: its successors' components are done. */
            total_words += words;
            if (total_words > MAX_BITSET_WORDS) {
                too_big = 1;
                break;
            }
            if (set_count == set_capacity) {
                set_capacity = set_capacity ? set_capacity * 2 : 64;
                sets = ppw_xrealloc(sets, set_capacity, sizeof *sets);
            }
            uint64_t *bits = ppw_xcalloc(words ? words : 1, sizeof *bits);
            size_t first = stack_depth;
            do {
                first--;
                component[stack[first]] = (int)set_count;
                on_stack[stack[first]] = 0;
            } while (stack[first] != v);
            for (size_t s = first; s < stack_depth; s++) {
                const struct vertex *member = &graph->vertices[stack[s]];
                if (member->loc >= 0)
                    bits[member->loc / 64] |= 1ull << (member->loc % 64);
                for (size_t e = 0; e < member->edges.count; e++) {
                    int target = component[member->edges.items[e] / 4];
                    if (on_stack[member->edges.items[e] / 4] || target == (int)set_count)
                        continue;
                    for (size_t w = 0; w < words; w++)
                        bits[w] |= sets[target][w];
                }
            }
            stack_depth = first;
            sets[set_count++] = bits;
        }
    }
    free(index);
    free(low);
    free(on_stack);
    free(stack);
    free(call_vertex);
    free(edge_position);
    if (too_big) {
        for (size_t i = 0; i < set_count; i++)
            free(sets[i]);
        free(sets);
        free(component);
        return NULL;
    }
    *component_of = component;
    return sets;
}

/* ---- results -------------------------------------------------------------- */

static int compare_locs(const void *a, const void *b)
{
    const struct ppw_loc *left = a, *right = b;
    int by_file = strcmp(left->file ? left->file : "", right->file ? right->file : "");
    if (by_file)
        return by_file;
    if (left->line != right->line)
        return left->line < right->line ? -1 : 1;
    return left->col < right->col ? -1 : left->col > right->col;
}

static struct ppw_loc *locs_from_bits(struct graph *graph, const uint64_t *bits, size_t *count)
{
    size_t total = 0;
    for (size_t i = 0; i < graph->loc_count; i++)
        total += (bits[i / 64] >> (i % 64)) & 1;
    struct ppw_loc *out = ppw_xcalloc(total, sizeof *out);
    size_t used = 0;
    for (size_t i = 0; i < graph->loc_count; i++)
        if ((bits[i / 64] >> (i % 64)) & 1)
            out[used++] = graph->locs[i];
    qsort(out, used, sizeof *out, compare_locs);
    *count = used;
    return out;
}

static void collect_writes(const struct ppw_memory *memory, int node, uint64_t *bits, int depth)
{
    const struct ppw_node *record = &memory->nodes[node];
    for (size_t i = 0; i < record->write_locs.count; i++)
        bits[record->write_locs.items[i] / 64] |= 1ull << (record->write_locs.items[i] % 64);
    if (depth > 64)
        return;
    for (size_t c = 0; c < record->children.count; c++)
        collect_writes(memory, record->children.items[c], bits, depth + 1);
    if (record->pte >= 0)
        collect_writes(memory, record->pte, bits, depth + 1);
}

/* Exclusive blame: the direct writes to the variable, its fields and what
 * it points to, and whole-struct writes of the struct holding it. */
static struct ppw_loc *exclusive_locs(struct graph *graph, int node, size_t *count)
{
    uint64_t *bits = ppw_xcalloc((graph->loc_count + 63) / 64 + 1, sizeof *bits);
    collect_writes(&graph->memory, node, bits, 0);
    for (int at = graph->memory.nodes[node].parent; at >= 0; at = graph->memory.nodes[at].parent)
        for (size_t i = 0; i < graph->memory.nodes[at].write_locs.count; i++) {
            int loc = graph->memory.nodes[at].write_locs.items[i];
            bits[loc / 64] |= 1ull << (loc % 64);
        }
    struct ppw_loc *out = locs_from_bits(graph, bits, count);
    free(bits);
    return out;
}

static unsigned subtree_flags(const struct ppw_memory *memory, int node)
{
    unsigned flags = memory->nodes[node].flags;
    for (int at = memory->nodes[node].pte; at >= 0; at = memory->nodes[at].pte)
        flags |= memory->nodes[at].flags;
    return flags;
}

static const char *variable_key(struct graph *graph, int node, const char *name)
{
    int root = node;
    while (up(&graph->memory, root) >= 0)
        root = up(&graph->memory, root);
    const struct ppw_node *record = &graph->memory.nodes[root];
    if (!record->key)
        return "";
    if (root == node)
        return record->key;
    /* A global's field: the global's identity plus the path below it. */
    size_t skip = strlen(record->var_name ? record->var_name : "");
    return ppw_arena_printf(graph->context->arena, "%s%s", record->key, name + skip);
}

static void fill_variable(struct graph *graph, size_t index, const uint64_t *inclusive,
                          struct ppw_result_var *out)
{
    struct ppw_memory *memory = &graph->memory;
    int node = graph->exported.items[index];
    const struct ppw_node *record = &memory->nodes[node];
    int root = ppw_memory_named_root(memory, node);
    const struct ppw_node *named = &memory->nodes[root >= 0 ? root : node];
    out->name = ppw_memory_display_name(memory, node);
    out->kind = record->var_name ? record->kind : PPW_VAR_FIELD;
    out->type = ppw_dbgvar_type_name(graph->context->arena, record->type);
    out->decl_file = named->decl_file ? named->decl_file : graph->file;
    out->decl_line = named->decl_line;
    out->parent = up(memory, node) >= 0 ? export_of(memory, up(memory, node)) : -1;
    out->param_index = record->kind == PPW_VAR_PARAM ? record->param_index : -1;
    out->flags = subtree_flags(memory, node) |
                 (memory->nodes[root >= 0 ? root : node].flags & PPW_VAR_EXIT_GLOBAL);
    out->key = variable_key(graph, node, out->name);
    if (inclusive)
        out->inclusive = locs_from_bits(graph, inclusive, &out->inclusive_count);
    out->exclusive = exclusive_locs(graph, node, &out->exclusive_count);
}

static void mark_returned(struct graph *graph, int *stamp, int *stamp_value)
{
    if (graph->return_node < 0)
        return;
    struct ppw_intvec nodes = {0};
    data_sources(graph, self_of(graph, graph->return_node), 1, &nodes, NULL, stamp, ++*stamp_value);
    for (size_t i = 0; i < nodes.count; i++) {
        int exported = export_of(&graph->memory, nodes.items[i]);
        if (exported < 0 || graph->exported.items[exported] == graph->return_node)
            continue;
        /* Parameters are exit variables only when written through: a
         * pointer whose data is merely read into the result is no exit. */
        int node = graph->exported.items[exported], root = node;
        while (up(&graph->memory, root) >= 0)
            root = up(&graph->memory, root);
        if (!graph->memory.nodes[root].is_param_root)
            graph->memory.nodes[node].flags |= PPW_VAR_EXIT_RETURNED;
    }
    ppw_intvec_free(&nodes);
}

/* Receivers: the variables a call's result is stored into. */
static void bind_receivers(struct graph *graph, int *stamp, int *stamp_value)
{
    struct ppw_ptrmap site_of_vertex = {0};
    for (size_t i = 0; i < graph->call_count; i++)
        ppw_ptrmap_put(&site_of_vertex, (const void *)(uintptr_t)(graph->calls[i].vertex + 1),
                       (int)i);
    for (size_t i = 0; i < graph->exported.count; i++) {
        int node = graph->exported.items[i];
        struct ppw_intvec calls = {0};
        data_sources(graph, self_of(graph, node), 1, NULL, &calls, stamp, ++*stamp_value);
        for (size_t c = 0; c < calls.count; c++) {
            int site = ppw_ptrmap_get(&site_of_vertex,
                                      (const void *)(uintptr_t)(calls.items[c] + 1), -1);
            if (site >= 0 && graph->calls[site].kind != PPW_CALL_FORK &&
                graph->calls[site].kind != PPW_CALL_TASK && graph->calls[site].kind != PPW_CALL_SPAWN)
                add_pending(graph, &graph->calls[site], node, -1, PPW_BIND_RETURN, "");
        }
        ppw_intvec_free(&calls);
    }
    ppw_ptrmap_free(&site_of_vertex);
}

static void fill_calls(struct graph *graph, struct ppw_result_func *out)
{
    out->calls = ppw_xcalloc(graph->call_count, sizeof *out->calls);
    for (size_t i = 0; i < graph->call_count; i++) {
        const struct call_site *site = &graph->calls[i];
        struct ppw_result_call *call = &out->calls[out->call_count++];
        call->line = LLVMGetDebugLocLine(site->inst);
        call->col = LLVMGetDebugLocColumn(site->inst);
        call->callee = site->callee ? site->callee : "";
        call->kind = site->kind;
        call->bindings = ppw_xcalloc(site->bindings.count, sizeof *call->bindings);
        for (size_t b = 0; b < site->bindings.count; b++) {
            const struct pending_binding *pending = &graph->pending[site->bindings.items[b]];
            int var = export_of(&graph->memory, pending->node);
            if (var < 0)
                continue; /* temporaries */
            struct ppw_result_binding *binding = &call->bindings[call->binding_count];
            int duplicate = 0;
            for (size_t d = 0; d < call->binding_count; d++)
                duplicate |= call->bindings[d].var == var && call->bindings[d].formal == pending->formal &&
                             call->bindings[d].mode == pending->mode &&
                             !strcmp(call->bindings[d].callee_path, pending->path);
            if (duplicate)
                continue;
            *binding = (struct ppw_result_binding){var, pending->formal, pending->mode, pending->path};
            call->binding_count++;
        }
    }
}

static void describe_function(struct graph *graph, struct ppw_result_func *out)
{
    LLVMMetadataRef subprogram = LLVMGetSubprogram(graph->function);
    size_t length = 0;
    const char *symbol = LLVMGetValueName2(graph->function, &length);
    const char *name = ppw_di_name(subprogram);
    out->linkage_name = symbol;
    out->name = name[0] ? name : symbol;
    out->file = graph->file;
    out->line = ppw_di_line(subprogram);
    out->flags = PPW_FUNC_ANALYSED;
    out->parent = "";
    const char *outlined = strstr(symbol, ".omp_outlined");
    if (outlined || strstr(symbol, ".omp_task_entry.")) {
        out->flags |= PPW_FUNC_OUTLINED;
        if (outlined && outlined != symbol)
            out->parent = ppw_arena_printf(graph->context->arena, "%.*s", (int)(outlined - symbol),
                                           symbol);
    }
}

static void create_return_node(struct graph *graph)
{
    graph->return_node = -1;
    LLVMTypeRef type = LLVMGetReturnType(LLVMGlobalGetValueType(graph->function));
    if (LLVMGetTypeKind(type) == LLVMVoidTypeKind)
        return;
    int node = ppw_memory_new_node(&graph->memory);
    struct ppw_node *record = &graph->memory.nodes[node];
    record->var_name = "<return>";
    record->kind = PPW_VAR_RETURN;
    record->type = ppw_di_subprogram_return_type(LLVMGetSubprogram(graph->function));
    record->decl_file = graph->file;
    record->decl_line = ppw_di_line(LLVMGetSubprogram(graph->function));
    record->flags = PPW_VAR_EXIT_RETURNED;
    graph->return_node = node;
}

static void free_graph(struct graph *graph)
{
    for (size_t i = 0; i < graph->vertex_count; i++)
        ppw_intvec_free(&graph->vertices[i].edges);
    free(graph->vertices);
    for (size_t i = 0; i < graph->call_count; i++)
        ppw_intvec_free(&graph->calls[i].bindings);
    free(graph->calls);
    free(graph->pending);
    free(graph->deferred);
    free(graph->locs);
    free(graph->block_control);
    free(graph->export_vertex);
    ppw_intvec_free(&graph->exported);
    ppw_intvec_free(&graph->ssa_bindings);
    ppw_ptrmap_free(&graph->inst_vertex);
    ppw_ptrmap_free(&graph->spill_stores);
    ppw_ptrmap_free(&graph->loc_index);
    ppw_ptrmap_free(&graph->file_ids);
    ppw_memory_free(&graph->memory);
    ppw_cfg_free(&graph->cfg);
}

void ppw_blamegraph_analyse(const struct ppw_blamegraph_context *context, LLVMValueRef function,
                            struct ppw_result_func *out)
{
    struct graph graph = {0};
    graph.context = context;
    graph.function = function;
    graph.file = ppw_di_file(LLVMGetSubprogram(function));
    memset(out, 0, sizeof *out);
    describe_function(&graph, out);
    ppw_memory_init(&graph.memory, context->arena, context->types, context->layout);
    ppw_cfg_build(&graph.cfg, function);
    graph.block_control = ppw_xcalloc(graph.cfg.block_count + 1, sizeof *graph.block_control);
    for (size_t b = 0; b <= graph.cfg.block_count; b++)
        graph.block_control[b] = -1;
    create_return_node(&graph);
    discover_variables(&graph);
    ppw_memory_solve(&graph.memory, function);
    resolve_deferred_names(&graph);
    build_edges(&graph);

    size_t stamp_capacity = graph.vertex_count * 2 + 1024;
    int *stamp = ppw_xcalloc(stamp_capacity, sizeof *stamp), stamp_value = 0;
    for (size_t i = 0; i < graph.call_count; i++)
        bind_call(&graph, &graph.calls[i], stamp, &stamp_value);
    size_t node_count = graph.memory.node_count;
    for (size_t n = 0; n < node_count; n++) {
        struct ppw_node *record = &graph.memory.nodes[n];
        record->touched |= record->vertex >= 0 || record->flags || record->write_locs.count;
    }
    for (size_t n = 0; n < node_count; n++)
        wire_node(&graph, (int)n);
    select_exports(&graph);
    if (graph.vertex_count > stamp_capacity) {
        free(stamp);
        stamp = ppw_xcalloc(graph.vertex_count, sizeof *stamp);
        stamp_value = 0;
    }
    mark_returned(&graph, stamp, &stamp_value);
    bind_receivers(&graph, stamp, &stamp_value);
    free(stamp);

    int *component = NULL;
    uint64_t **sets = reachable_locations(&graph, &component);
    if (!sets)
        out->flags |= PPW_FUNC_TRUNCATED;
    out->vars = ppw_xcalloc(graph.exported.count, sizeof *out->vars);
    out->var_count = graph.exported.count;
    for (size_t i = 0; i < graph.exported.count; i++)
        fill_variable(&graph, i, sets ? sets[component[graph.export_vertex[i]]] : NULL,
                      &out->vars[i]);
    fill_calls(&graph, out);
    if (sets) {
        size_t components = 0;
        for (size_t v = 0; v < graph.vertex_count; v++)
            if ((size_t)component[v] + 1 > components)
                components = (size_t)component[v] + 1;
        for (size_t i = 0; i < components; i++)
            free(sets[i]);
        free(sets);
        free(component);
    }
    free_graph(&graph);
}

void ppw_blamegraph_free_result(struct ppw_result_func *result)
{
    for (size_t i = 0; i < result->var_count; i++) {
        free(result->vars[i].inclusive);
        free(result->vars[i].exclusive);
    }
    free(result->vars);
    for (size_t i = 0; i < result->call_count; i++)
        free(result->calls[i].bindings);
    free(result->calls);
    memset(result, 0, sizeof *result);
}

#include "graph.h"

#include "llvm_shim.h"

#include <ppw/libcalls.h>
#include <ppw/static_format.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- locations ---------------------------------------------------------- */

int ppw_graph_intern_loc(struct graph *graph, const char *file, unsigned line, unsigned col)
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
    graph->locs =
        ppw_grow(graph->locs, &graph->loc_capacity, graph->loc_count + 1, sizeof *graph->locs, 64);
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
    return ppw_graph_intern_loc(graph, file, line, LLVMGetDebugLocColumn(inst));
}

/* ---- vertices and edges ------------------------------------------------- */

int ppw_graph_new_vertex(struct graph *graph, int kind, int loc, int node)
{
    graph->vertices = ppw_grow(graph->vertices, &graph->vertex_capacity, graph->vertex_count + 1,
                               sizeof *graph->vertices, 256);
    struct vertex *vertex = &graph->vertices[graph->vertex_count];
    memset(vertex, 0, sizeof *vertex);
    vertex->kind = kind;
    vertex->loc = loc;
    vertex->node = node;
    return (int)graph->vertex_count++;
}

void ppw_graph_add_edge(struct graph *graph, int from, int to, enum edge_kind kind)
{
    if (from < 0 || to < 0 || from == to)
        return;
    ppw_intvec_add_unique(&graph->vertices[from].edges, to * 4 + (int)kind);
}

static int node_vertex(struct graph *graph, int node, int which)
{
    struct ppw_node *record = &graph->memory.nodes[node];
    if (record->vertex < 0) {
        int first = ppw_graph_new_vertex(graph, VERTEX_SELF, -1, node);
        ppw_graph_new_vertex(graph, VERTEX_VIEW, -1, node);
        ppw_graph_new_vertex(graph, VERTEX_DOWN, -1, node);
        ppw_graph_new_vertex(graph, VERTEX_DOWN_FIELDS, -1, node);
        graph->memory.nodes[node].vertex = first;
    }
    return graph->memory.nodes[node].vertex + which;
}

int ppw_graph_self(struct graph *graph, int node)
{
    return node_vertex(graph, node, 0);
}
int ppw_graph_view(struct graph *graph, int node)
{
    return node_vertex(graph, node, 1);
}
int ppw_graph_down(struct graph *graph, int node)
{
    return node_vertex(graph, node, 2);
}
int ppw_graph_fields(struct graph *graph, int node)
{
    return node_vertex(graph, node, 3);
}

static int inst_vertex(struct graph *graph, LLVMValueRef inst, int kind)
{
    int vertex = ppw_ptrmap_get(&graph->inst_vertex, inst, 0) - 1;
    if (vertex >= 0)
        return vertex;
    vertex = ppw_graph_new_vertex(graph, kind, inst_loc(graph, inst), -1);
    ppw_ptrmap_put(&graph->inst_vertex, inst, vertex + 1);
    return vertex;
}

/* The vertex of an operand's value; constants, globals and arguments carry
 * no blame of their own in this function. */
int ppw_graph_operand_vertex(struct graph *graph, LLVMValueRef value)
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
        int vertex = ppw_graph_new_vertex(graph, VERTEX_CONTROL, -1, -1);
        graph->block_control[index] = vertex;
        const struct ppw_intvec *controllers = &graph->cfg.controllers[index];
        for (size_t i = 0; i < controllers->count; i++) {
            LLVMValueRef branch =
                LLVMGetBasicBlockTerminator(graph->cfg.blocks[controllers->items[i]]);
            int exit_test = ppw_intvec_contains(&graph->cfg.exit_test_controllers[index],
                                                controllers->items[i]);
            if (branch)
                ppw_graph_add_edge(graph, vertex, inst_vertex(graph, branch, VERTEX_INSTRUCTION),
                                   exit_test ? EDGE_EXIT_TEST : EDGE_CONTROL);
        }
    }
    return graph->block_control[index];
}

/* ---- writes and exit variables ------------------------------------------ */

int ppw_graph_up(const struct ppw_memory *memory, int node)
{
    const struct ppw_node *record = &memory->nodes[node];
    return record->parent >= 0 ? record->parent : record->pte_of;
}

/* Marks what a write to `node` makes of the variables above it: written
 * through a parameter, or program-level.  A variable whose storage is
 * outside the frame (a task's firstprivate pointer) is a parameter too: its
 * own storage is the task's copy, but what it points to is the parent's. */
static void mark_write(struct graph *graph, int node)
{
    struct ppw_memory *memory = &graph->memory;
    int through_pointer = 0, root = node, outside = 0;
    for (int at = node; at >= 0; at = ppw_graph_up(memory, at)) {
        outside |= through_pointer && memory->nodes[at].named_outside;
        if (memory->nodes[at].pte_of >= 0)
            through_pointer = 1;
        root = at;
    }
    unsigned flags = PPW_VAR_WRITTEN;
    if (through_pointer && (memory->nodes[root].is_param_root || outside))
        flags |= PPW_VAR_EXIT_WRITTEN;
    for (int at = node; at >= 0; at = ppw_graph_up(memory, at)) {
        memory->nodes[at].flags |= flags;
        /* Only the written node itself is directly written. */
        flags &= ~(unsigned)PPW_VAR_WRITTEN;
        if (!(flags & PPW_VAR_EXIT_WRITTEN))
            break;
    }
}

static void write_to(struct graph *graph, int node, int writer)
{
    ppw_graph_add_edge(graph, ppw_graph_self(graph, node), writer, EDGE_DATA);
    int loc = graph->vertices[writer].loc;
    if (loc >= 0)
        ppw_intvec_add_unique(&graph->memory.nodes[node].write_locs, loc);
    struct ppw_node *record = &graph->memory.nodes[node];
    ppw_intvec_push(&record->write_blocks, graph->current_block);
    ppw_intvec_push(&record->write_seqs, graph->current_seq);
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
    LLVMTypeRef type =
        LLVMTypeOf(LLVMGetInstructionOpcode(inst) == LLVMStore ? LLVMGetOperand(inst, 0) : inst);
    LLVMTypeKind kind = LLVMGetTypeKind(type);
    return kind != LLVMStructTypeKind && kind != LLVMArrayTypeKind;
}

/* Whether value, a loaded pointer, only locates other memory: every use is
 * an address (of a GEP, load or store, through casts).  Such a load (prm
 * in prm->box, s->atoms in s->atoms->r[i]) reaches the data the line
 * touches and is not counted as an access of its own; a pointer that is
 * stored, passed or compared (p = p->next) is data. */
static int is_handle(LLVMValueRef value, int depth)
{
    if (LLVMGetTypeKind(LLVMTypeOf(value)) != LLVMPointerTypeKind || depth > 8)
        return 0;
    int uses = 0;
    for (LLVMUseRef use = LLVMGetFirstUse(value); use; use = LLVMGetNextUse(use)) {
        LLVMValueRef user = LLVMGetUser(use);
        uses++;
        if (!LLVMIsAInstruction(user))
            return 0;
        switch (LLVMGetInstructionOpcode(user)) {
        case LLVMGetElementPtr:
            if (LLVMGetOperand(user, 0) != value || !is_handle(user, depth + 1))
                return 0;
            break;
        case LLVMLoad: break;
        case LLVMStore:
            if (LLVMGetOperand(user, 0) == value)
                return 0; /* the pointer itself is stored */
            break;
        case LLVMBitCast:
        case LLVMAddrSpaceCast:
            if (!is_handle(user, depth + 1))
                return 0;
            break;
        default: return 0;
        }
    }
    return uses > 0;
}

/* Whether an address is computed with a variable index (a[i], p[i].x,
 * cl->head[c]) rather than only constant offsets from a pointer or a
 * variable (prm->box, the pointer p itself). */
static int is_indexed(LLVMValueRef address)
{
    for (int depth = 0; address && depth < 16; depth++) {
        LLVMOpcode op;
        if (LLVMIsAInstruction(address))
            op = LLVMGetInstructionOpcode(address);
        else if (LLVMIsAConstantExpr(address))
            op = LLVMGetConstOpcode(address);
        else
            return 0;
        if (op == LLVMGetElementPtr) {
            int operands = LLVMGetNumOperands(address);
            for (int k = 1; k < operands; k++)
                if (!LLVMIsAConstant(LLVMGetOperand(address, (unsigned)k)))
                    return 1;
        } else if (op != LLVMBitCast && op != LLVMAddrSpaceCast) {
            return 0;
        }
        address = LLVMGetOperand(address, 0);
    }
    return 0;
}

static void write_targets(struct graph *graph, LLVMValueRef address, int writer, int scalar)
{
    struct ppw_intvec nodes = {0};
    accessed_nodes(graph, address, scalar, &nodes);
    for (size_t i = 0; i < nodes.count; i++) {
        write_to(graph, nodes.items[i], writer);
        ppw_graph_log_access(graph, graph->vertices[writer].loc, nodes.items[i], 1,
                             is_indexed(address), !scalar);
    }
    ppw_intvec_free(&nodes);
}

/* A call's pointer arguments are read by the callee, which accounts for
 * its own accesses (log = 0); loads and memcpy sources read here. */
static void read_targets_logged(struct graph *graph, LLVMValueRef address, int reader, int scalar,
                                int log)
{
    struct ppw_intvec nodes = {0};
    accessed_nodes(graph, address, scalar, &nodes);
    for (size_t i = 0; i < nodes.count; i++) {
        ppw_graph_add_edge(graph, reader, ppw_graph_view(graph, nodes.items[i]), EDGE_DATA);
        if (log)
            ppw_graph_log_access(graph, graph->vertices[reader].loc, nodes.items[i], 0,
                                 is_indexed(address), !scalar);
    }
    ppw_intvec_free(&nodes);
}

static void read_targets(struct graph *graph, LLVMValueRef address, int reader, int scalar)
{
    read_targets_logged(graph, address, reader, scalar, 1);
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

LLVMValueRef ppw_graph_function(LLVMValueRef value)
{
    while (value && LLVMIsAConstantExpr(value) && LLVMGetConstOpcode(value) == LLVMBitCast)
        value = LLVMGetOperand(value, 0);
    return value && LLVMIsAFunction(value) ? value : NULL;
}

const char *ppw_graph_callee_name(LLVMValueRef call)
{
    LLVMValueRef callee = ppw_graph_function(LLVMGetCalledValue(call));
    size_t length = 0;
    return callee ? LLVMGetValueName2(callee, &length) : NULL;
}

int ppw_graph_is_call(LLVMValueRef inst)
{
    LLVMOpcode opcode = LLVMGetInstructionOpcode(inst);
    return opcode == LLVMCall || opcode == LLVMInvoke;
}

static void defer_name(struct graph *graph, LLVMValueRef storage, LLVMMetadataRef variable,
                       int through_pointer, unsigned long long offset)
{
    graph->deferred = ppw_grow(graph->deferred, &graph->deferred_capacity,
                               graph->deferred_count + 1, sizeof *graph->deferred, 8);
    graph->deferred[graph->deferred_count++] =
        (struct deferred_name){storage, variable, through_pointer, offset};
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

/* `node` holds the value of IR argument `argument`. */
static void bind_argument(struct graph *graph, int node, LLVMValueRef argument)
{
    struct ppw_node *record = &graph->memory.nodes[node];
    record->is_param_root = 1;
    unsigned count = LLVMCountParams(graph->function);
    for (unsigned i = 0; i < count; i++)
        if (LLVMGetParam(graph->function, i) == argument)
            record->param_index = (int)i;
    ppw_ptrmap_put(&graph->memory.argument_node, argument, node);
}

static void discover_debug_record(struct graph *graph, LLVMValueRef call, const char *name)
{
    LLVMMetadataRef variable = ppw_dbg_variable(call);
    if (!variable)
        return;
    ppw_memory_note_variable_name(&graph->memory, ppw_di_name(variable));
    if (!strcmp(name, "llvm.dbg.value")) {
        LLVMValueRef value = ppw_dbg_value(call);
        int node = variable_root(graph, variable);
        if (value && LLVMIsAArgument(value) &&
            ppw_ptrmap_get(&graph->memory.argument_node, value, -1) < 0) {
            /* SSA form (opt after mem2reg): the argument is the parameter. */
            bind_argument(graph, node, value);
        }
        if (value && LLVMIsAInstruction(value)) {
            ppw_intvec_push(&graph->ssa_bindings, node);
            ppw_intvec_push(&graph->ssa_bindings, ppw_graph_operand_vertex(graph, value));
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
        defer_name(graph, storage, variable, through_pointer,
                   through_pointer ? ppw_dbg_expr_deref_offset(call) : 0);
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
    bind_argument(graph, node, value);
    if (graph->memory.nodes[node].var_name)
        graph->memory.nodes[node].kind = PPW_VAR_PARAM;
    ppw_ptrmap_put(&graph->spill_stores, store, 1);
}

static void discover_variables(struct graph *graph)
{
    for (size_t b = 0; b < graph->cfg.block_count; b++)
        for (LLVMValueRef inst = LLVMGetFirstInstruction(graph->cfg.blocks[b]); inst;
             inst = LLVMGetNextInstruction(inst)) {
            if (ppw_graph_is_call(inst)) {
                const char *name = ppw_graph_callee_name(inst);
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
                    &slots,
                    ppw_memory_member_at(&graph->memory, direct->items[t] / 2, deferred->offset) *
                        2);
            ppw_memory_load_targets(&graph->memory, &slots, &targets);
            ppw_intvec_free(&slots);
        } else if (direct)
            for (size_t t = 0; t < direct->count; t++)
                ppw_intvec_push(&targets, direct->items[t]);
        if (targets.count == 1) {
            int node = targets.items[0] / 2;
            if (!graph->memory.nodes[node].var_name) {
                name_node(graph, node, deferred->variable);
                graph->memory.nodes[node].kind = PPW_VAR_LOCAL;
                graph->memory.nodes[node].named_outside = deferred->through_pointer;
            }
        }
        ppw_intvec_free(&targets);
    }
}

/* ---- instructions -> edges ---------------------------------------------- */

int ppw_graph_is_pointer(LLVMValueRef value)
{
    return LLVMGetTypeKind(LLVMTypeOf(value)) == LLVMPointerTypeKind;
}

static int ignored_intrinsic(const char *name)
{
    static const char *const prefixes[] = {
        "llvm.dbg.",      "llvm.lifetime.",  "llvm.experimental.noalias",
        "llvm.assume",    "llvm.stacksave",  "llvm.stackrestore",
        "llvm.va_",       "llvm.invariant.", "llvm.var.annotation",
        "llvm.donothing", "llvm.prefetch",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

static void add_call_site(struct graph *graph, LLVMValueRef inst, int vertex)
{
    graph->calls = ppw_grow(graph->calls, &graph->call_capacity, graph->call_count + 1,
                            sizeof *graph->calls, 16);
    struct call_site *site = &graph->calls[graph->call_count++];
    memset(site, 0, sizeof *site);
    site->inst = inst;
    site->vertex = vertex;
    site->seq = graph->current_seq;
}

static void visit_memory_intrinsic(struct graph *graph, LLVMValueRef call, int is_set,
                                   LLVMBasicBlockRef block)
{
    int writer = inst_vertex(graph, call, VERTEX_INSTRUCTION);
    LLVMValueRef destination = LLVMGetOperand(call, 0), source = LLVMGetOperand(call, 1);
    ppw_graph_add_edge(graph, writer, ppw_graph_operand_vertex(graph, source), EDGE_DATA);
    ppw_graph_add_edge(graph, writer, ppw_graph_operand_vertex(graph, LLVMGetOperand(call, 2)),
                       EDGE_DATA);
    ppw_graph_add_edge(graph, writer, ppw_graph_operand_vertex(graph, destination), EDGE_ADDRESS);
    ppw_graph_add_edge(graph, writer, control_vertex(graph, block), EDGE_CONTROL);
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
    int writer = ppw_graph_new_vertex(graph, VERTEX_INSTRUCTION, inst_loc(graph, call), -1);
    ppw_graph_add_edge(graph, writer, control_vertex(graph, block), EDGE_CONTROL);
    for (unsigned k = 0; k < count; k++) {
        LLVMValueRef argument = LLVMGetOperand(call, k);
        if (ppw_libcall_reads(library, k)) {
            ppw_graph_add_edge(graph, writer, ppw_graph_operand_vertex(graph, argument), EDGE_DATA);
            if (ppw_graph_is_pointer(argument))
                read_targets(graph, argument, writer, 0);
        }
    }
    for (unsigned k = 0; k < count; k++)
        if (ppw_libcall_writes(library, k)) {
            LLVMValueRef argument = LLVMGetOperand(call, k);
            ppw_graph_add_edge(graph, writer, ppw_graph_operand_vertex(graph, argument),
                               EDGE_ADDRESS);
            write_targets(graph, argument, writer, 0);
        }
}

static void visit_call(struct graph *graph, LLVMValueRef call, LLVMBasicBlockRef block)
{
    const char *name = ppw_graph_callee_name(call);
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
            ppw_graph_add_edge(graph, vertex,
                               ppw_graph_operand_vertex(graph, LLVMGetOperand(call, k)), EDGE_DATA);
        return;
    }
    int vertex = inst_vertex(graph, call, VERTEX_CALL);
    graph->vertices[vertex].kind = VERTEX_CALL;
    unsigned count = LLVMGetNumArgOperands(call);
    for (unsigned k = 0; k < count; k++) {
        LLVMValueRef argument = LLVMGetOperand(call, k);
        ppw_graph_add_edge(graph, vertex, ppw_graph_operand_vertex(graph, argument), EDGE_DATA);
        if (ppw_graph_is_pointer(argument))
            read_targets_logged(graph, argument, vertex, 0, 0);
    }
    if (!name)
        ppw_graph_add_edge(graph, vertex, ppw_graph_operand_vertex(graph, callee), EDGE_DATA);
    const struct ppw_libcall *library = ppw_libcall_find(name);
    if (library)
        visit_library_effects(graph, call, library, block);
    add_call_site(graph, call, vertex);
}

static void visit_branch(struct graph *graph, LLVMValueRef branch, LLVMValueRef condition,
                         LLVMBasicBlockRef block)
{
    int vertex = inst_vertex(graph, branch, VERTEX_INSTRUCTION);
    ppw_graph_add_edge(graph, vertex, ppw_graph_operand_vertex(graph, condition), EDGE_DATA);
    ppw_graph_add_edge(graph, vertex, control_vertex(graph, block), EDGE_CONTROL);
}

static void visit_phi(struct graph *graph, LLVMValueRef phi)
{
    int vertex = inst_vertex(graph, phi, VERTEX_INSTRUCTION);
    unsigned count = LLVMCountIncoming(phi);
    for (unsigned i = 0; i < count; i++) {
        ppw_graph_add_edge(graph, vertex,
                           ppw_graph_operand_vertex(graph, LLVMGetIncomingValue(phi, i)),
                           EDGE_DATA);
        /* Which value arrives is decided by the incoming block's branch. */
        LLVMValueRef branch = LLVMGetBasicBlockTerminator(LLVMGetIncomingBlock(phi, i));
        if (branch && LLVMGetInstructionOpcode(branch) == LLVMBr && LLVMIsConditional(branch))
            ppw_graph_add_edge(graph, vertex, inst_vertex(graph, branch, VERTEX_INSTRUCTION),
                               EDGE_CONTROL);
    }
}

static void visit_store(struct graph *graph, LLVMValueRef store, LLVMBasicBlockRef block)
{
    if (ppw_ptrmap_get(&graph->spill_stores, store, 0))
        return;
    int writer = inst_vertex(graph, store, VERTEX_INSTRUCTION);
    LLVMValueRef address = LLVMGetOperand(store, 1);
    ppw_graph_add_edge(graph, writer, ppw_graph_operand_vertex(graph, LLVMGetOperand(store, 0)),
                       EDGE_DATA);
    ppw_graph_add_edge(graph, writer, ppw_graph_operand_vertex(graph, address), EDGE_ADDRESS);
    ppw_graph_add_edge(graph, writer, control_vertex(graph, block), EDGE_CONTROL);
    write_targets(graph, address, writer, is_scalar_access(store));
}

static void visit_return(struct graph *graph, LLVMValueRef ret, LLVMBasicBlockRef block)
{
    if (graph->return_node < 0 || LLVMGetNumOperands(ret) < 1)
        return;
    int writer = inst_vertex(graph, ret, VERTEX_INSTRUCTION);
    ppw_graph_add_edge(graph, writer, ppw_graph_operand_vertex(graph, LLVMGetOperand(ret, 0)),
                       EDGE_DATA);
    ppw_graph_add_edge(graph, writer, control_vertex(graph, block), EDGE_CONTROL);
    write_to(graph, graph->return_node, writer);
}

static void visit_generic(struct graph *graph, LLVMValueRef inst)
{
    int vertex = inst_vertex(graph, inst, VERTEX_INSTRUCTION);
    int count = LLVMGetNumOperands(inst);
    /* A pointer compared (if (!blocks), p < end) is used for its address,
     * not its data: what the comparison decides is not computed from the
     * memory it points to (main's exit status from `if (!blocks) return
     * 1;`), though it is from its value. */
    int compares = LLVMGetInstructionOpcode(inst) == LLVMICmp;
    for (int i = 0; i < count; i++) {
        LLVMValueRef operand = LLVMGetOperand(inst, (unsigned)i);
        ppw_graph_add_edge(graph, vertex, ppw_graph_operand_vertex(graph, operand),
                           compares && ppw_graph_is_pointer(operand) ? EDGE_ADDRESS : EDGE_DATA);
    }
}

static void visit_instruction(struct graph *graph, LLVMValueRef inst, LLVMBasicBlockRef block)
{
    switch (LLVMGetInstructionOpcode(inst)) {
    case LLVMAlloca:
    case LLVMUnreachable: return;
    case LLVMLoad: {
        int vertex = inst_vertex(graph, inst, VERTEX_INSTRUCTION);
        LLVMValueRef address = LLVMGetOperand(inst, 0);
        read_targets_logged(graph, address, vertex, is_scalar_access(inst), !is_handle(inst, 0));
        ppw_graph_add_edge(graph, vertex, ppw_graph_operand_vertex(graph, address), EDGE_ADDRESS);
        return;
    }
    case LLVMStore: visit_store(graph, inst, block); return;
    case LLVMCall:
    case LLVMInvoke: visit_call(graph, inst, block); return;
    case LLVMRet: visit_return(graph, inst, block); return;
    case LLVMBr:
        if (LLVMIsConditional(inst))
            visit_branch(graph, inst, LLVMGetCondition(inst), block);
        return;
    case LLVMSwitch:
    case LLVMIndirectBr: visit_branch(graph, inst, LLVMGetOperand(inst, 0), block); return;
    case LLVMPHI: visit_phi(graph, inst); return;
    default: visit_generic(graph, inst); return;
    }
}

static void build_edges(struct graph *graph)
{
    for (size_t b = 0; b < graph->cfg.block_count; b++) {
        LLVMBasicBlockRef block = graph->cfg.blocks[b];
        graph->current_block = (int)b;
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst;
             inst = LLVMGetNextInstruction(inst)) {
            graph->current_seq++;
            visit_instruction(graph, inst, block);
        }
    }
    graph->current_block = -1;
    for (size_t i = 0; i + 1 < graph->ssa_bindings.count; i += 2) {
        int node = graph->ssa_bindings.items[i], value = graph->ssa_bindings.items[i + 1];
        ppw_graph_add_edge(graph, ppw_graph_self(graph, node), value, EDGE_DATA);
        if (value >= 0 && graph->vertices[value].loc >= 0)
            ppw_intvec_add_unique(&graph->memory.nodes[node].write_locs,
                                  graph->vertices[value].loc);
        ppw_intvec_push(&graph->memory.nodes[node].write_blocks, -1);
        ppw_intvec_push(&graph->memory.nodes[node].write_seqs, -1);
        graph->memory.nodes[node].flags |= PPW_VAR_WRITTEN;
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
            out->parent =
                ppw_arena_printf(graph->context->arena, "%.*s", (int)(outlined - symbol), symbol);
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
    free(graph->visit_marks);
    ppw_intvec_free(&graph->exported);
    ppw_intvec_free(&graph->ssa_bindings);
    ppw_intvec_free(&graph->access_log);
    ppw_ptrmap_free(&graph->inst_vertex);
    ppw_ptrmap_free(&graph->spill_stores);
    ppw_ptrmap_free(&graph->loc_index);
    ppw_ptrmap_free(&graph->file_ids);
    ppw_memory_free(&graph->memory);
    ppw_cfg_free(&graph->cfg);
}

static void begin_graph(struct graph *graph, const struct ppw_blamegraph_context *context,
                        LLVMValueRef function)
{
    memset(graph, 0, sizeof *graph);
    graph->context = context;
    graph->function = function;
    graph->current_block = -1;
    graph->file = ppw_di_file(LLVMGetSubprogram(function));
}

/* The function's memory nodes and points-to, its CFG and its variables:
 * what both the analysis and the window search start from. */
static void solve_memory(struct graph *graph, const struct ppw_windows *windows)
{
    const struct ppw_blamegraph_context *context = graph->context;
    ppw_memory_init(&graph->memory, context->arena, context->types, context->layout);
    graph->memory.sources = context->sources;
    graph->memory.windows = windows;
    ppw_cfg_build(&graph->cfg, graph->function);
    graph->block_control = ppw_xcalloc(graph->cfg.block_count + 1, sizeof *graph->block_control);
    for (size_t b = 0; b <= graph->cfg.block_count; b++)
        graph->block_control[b] = -1;
    create_return_node(graph);
    discover_variables(graph);
    ppw_memory_solve(&graph->memory, graph->function);
}

void ppw_blamegraph_analyse(const struct ppw_blamegraph_context *context, LLVMValueRef function,
                            struct ppw_result_func *out)
{
    struct graph graph;
    begin_graph(&graph, context, function);
    memset(out, 0, sizeof *out);
    describe_function(&graph, out);
    solve_memory(&graph, context->windows);
    resolve_deferred_names(&graph);
    build_edges(&graph);

    for (size_t i = 0; i < graph.call_count; i++)
        ppw_graph_bind_call(&graph, &graph.calls[i]);
    size_t node_count = graph.memory.node_count;
    for (size_t n = 0; n < node_count; n++) {
        struct ppw_node *record = &graph.memory.nodes[n];
        record->touched |= record->vertex >= 0 || record->flags || record->write_locs.count;
    }
    for (size_t n = 0; n < node_count; n++)
        ppw_graph_wire_node(&graph, (int)n);
    ppw_graph_select_exports(&graph);
    ppw_graph_mark_returned(&graph);
    ppw_graph_bind_receivers(&graph);

    int *component = NULL;
    size_t components = 0;
    uint64_t **sets = ppw_graph_reachable_locations(&graph, &component, &components);
    if (!sets)
        out->flags |= PPW_FUNC_TRUNCATED;
    out->vars = ppw_xcalloc(graph.exported.count, sizeof *out->vars);
    out->var_count = graph.exported.count;
    for (size_t i = 0; i < graph.exported.count; i++)
        ppw_graph_fill_variable(&graph, i, sets ? sets[component[graph.export_vertex[i]]] : NULL,
                                &out->vars[i]);
    ppw_graph_fill_calls(&graph, out);
    ppw_graph_fill_accesses(&graph, out);
    struct ppw_flow_sets by_value = {0}, by_content = {0};
    if (sets) {
        /* Transferred blame follows the values computed from the receivers,
         * explicitly or under a branch that tests one, but not every
         * statement of a loop whose exit test reads one (a solver's timers). */
        unsigned values = 1u << EDGE_DATA | 1u << EDGE_CONTROL | 1u << EDGE_ADDRESS,
                 contents = 1u << EDGE_DATA | 1u << EDGE_CONTROL;
        by_value.sets =
            ppw_graph_reachable_variables(&graph, values, &by_value.component, &by_value.count);
        by_content.sets =
            ppw_graph_reachable_variables(&graph, contents, &by_content.component, &by_content.count);
    }
    ppw_graph_fill_flows(&graph, &by_value, &by_content, out);
    for (int pass = 0; pass < 2; pass++) {
        struct ppw_flow_sets *f = pass ? &by_content : &by_value;
        for (size_t i = 0; i < f->count; i++)
            free(f->sets[i]);
        free(f->sets);
        free(f->component);
    }
    ppw_graph_fill_written_after(&graph, out);
    for (size_t i = 0; i < components; i++)
        free(sets[i]);
    free(sets);
    free(component);
    free_graph(&graph);
}

/* ---- MPI windows ------------------------------------------------------- */

static int is_storage(LLVMValueRef value)
{
    return LLVMIsAAllocaInst(value) || LLVMIsAGlobalVariable(value);
}

/* The single field node a pointer operand reaches, or -1. */
static int single_field(struct graph *graph, LLVMValueRef pointer)
{
    const struct ppw_intvec *targets = ppw_memory_targets(&graph->memory, pointer);
    if (!targets || targets->count != 1)
        return -1;
    int node = targets->items[0] / 2;
    const struct ppw_node *field = &graph->memory.nodes[node];
    return field->parent >= 0 && field->step ? node : -1;
}

/* One window creation: MPI_Win_allocate(size, disp, info, comm, &base, &win)
 * or MPI_Win_create(base, size, disp, info, comm, &win).  The handle and
 * the memory must be kept alike: both in variables, or both in fields of
 * one struct. */
static int window_rule(struct graph *graph, LLVMValueRef call, int allocate,
                       struct ppw_window_rule *rule)
{
    LLVMValueRef handle = LLVMGetOperand(call, 5), base = LLVMGetOperand(call, allocate ? 4 : 0);
    memset(rule, 0, sizeof *rule);
    /* MPI_Win_allocate writes the memory's address into *base; an
     * MPI_Win_create buffer loaded from a pointer is what that points to. */
    rule->pointee = allocate;
    if (!allocate && LLVMIsALoadInst(base)) {
        base = LLVMGetOperand(base, 0);
        rule->pointee = 1;
    }
    if (is_storage(handle)) {
        if (!is_storage(base))
            return 0;
        rule->handle_storage = handle;
        rule->memory_storage = base;
        return 1;
    }
    int handle_field = single_field(graph, handle), memory_field = single_field(graph, base);
    if (handle_field < 0 || memory_field < 0)
        return 0;
    const struct ppw_node *h = &graph->memory.nodes[handle_field];
    const struct ppw_node *m = &graph->memory.nodes[memory_field];
    if (h->parent != m->parent || !graph->memory.nodes[h->parent].type)
        return 0;
    rule->parent_type = ppw_dbgvar_strip(graph->memory.nodes[h->parent].type);
    rule->handle_step = h->step;
    rule->memory_step = m->step;
    rule->memory_type = m->type;
    return rule->parent_type != NULL;
}

static int creates_window(LLVMValueRef inst, int *allocate)
{
    if (!ppw_graph_is_call(inst) || LLVMGetNumArgOperands(inst) != 6)
        return 0;
    const char *name = ppw_graph_callee_name(inst);
    if (!name)
        return 0;
    *allocate = !strcmp(name, "MPI_Win_allocate") || !strcmp(name, "MPI_Win_allocate_shared");
    return *allocate || !strcmp(name, "MPI_Win_create");
}

void ppw_blamegraph_find_windows(const struct ppw_blamegraph_context *context,
                                 LLVMModuleRef module, struct ppw_windows *out)
{
    for (LLVMValueRef function = LLVMGetFirstFunction(module); function;
         function = LLVMGetNextFunction(function)) {
        if (LLVMIsDeclaration(function) || !LLVMGetSubprogram(function))
            continue;
        int any = 0, allocate = 0;
        for (LLVMBasicBlockRef block = LLVMGetFirstBasicBlock(function); block && !any;
             block = LLVMGetNextBasicBlock(block))
            for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst && !any;
                 inst = LLVMGetNextInstruction(inst))
                any = creates_window(inst, &allocate);
        if (!any)
            continue;
        /* The memory model of the function, as the analysis builds it
         * (without windows: these are what it looks for). */
        struct graph graph;
        begin_graph(&graph, context, function);
        solve_memory(&graph, NULL);
        for (size_t b = 0; b < graph.cfg.block_count; b++)
            for (LLVMValueRef inst = LLVMGetFirstInstruction(graph.cfg.blocks[b]); inst;
                 inst = LLVMGetNextInstruction(inst)) {
                struct ppw_window_rule rule;
                if (!creates_window(inst, &allocate) || !window_rule(&graph, inst, allocate, &rule))
                    continue;
                out->rules = ppw_grow(out->rules, &out->capacity, out->count + 1,
                                      sizeof *out->rules, 4);
                out->rules[out->count++] = rule;
            }
        free_graph(&graph);
    }
}

void ppw_blamegraph_free_result(struct ppw_result_func *result)
{
    for (size_t i = 0; i < result->var_count; i++) {
        free(result->vars[i].inclusive);
        free(result->vars[i].exclusive);
    }
    free(result->vars);
    for (size_t i = 0; i < result->call_count; i++) {
        free(result->calls[i].bindings);
        free(result->calls[i].written_after);
    }
    free(result->calls);
    free(result->accesses);
    for (size_t i = 0; i < result->flow_count; i++)
        free(result->flows[i].targets);
    free(result->flows);
    memset(result, 0, sizeof *result);
}

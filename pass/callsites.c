/* Call sites: which caller variables bind to the callee's parameters and
 * receive its result, including outlined OpenMP code and thread start
 * routines; and which variables flow into the return value. */
#include "graph.h"

#include "llvm_shim.h"

#include <ppw/libcalls.h>
#include <ppw/static_format.h>
#include <stdlib.h>
#include <string.h>

/* ---- call sites ---------------------------------------------------------- */

void ppw_graph_add_pending(struct graph *graph, struct call_site *site, int node, int formal,
                           unsigned mode, const char *path)
{
    for (size_t i = 0; i < site->bindings.count; i++) {
        const struct pending_binding *old = &graph->pending[site->bindings.items[i]];
        if (old->node == node && old->formal == formal && old->mode == mode &&
            !strcmp(old->path, path))
            return;
    }
    graph->pending = ppw_grow(graph->pending, &graph->pending_capacity, graph->pending_count + 1,
                              sizeof *graph->pending, 32);
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
        ppw_graph_add_pending(graph, site, node, formal, mode, "");
        if (mode == PPW_BIND_REF)
            graph->memory.nodes[node].flags |= PPW_VAR_PASSED_BY_REF;
    }
}

/* Variables whose values reach `start` by data flow alone, stopping at
 * named memory and at calls (a call's result is its callee's business);
 * with `calls`, the calls whose results reach it, through the arguments of
 * calls too: a result passed straight into another call (log(uniform(r))
 * stored into x) is computed into whatever that call's result is. */
static void data_sources(struct graph *graph, int start, struct ppw_intvec *nodes,
                         struct ppw_intvec *calls)
{
    if (start < 0)
        return;
    /* Marks from earlier walks hold older round numbers: no clearing. */
    size_t old_capacity = graph->visit_capacity;
    graph->visit_marks = ppw_grow(graph->visit_marks, &graph->visit_capacity, graph->vertex_count,
                                  sizeof *graph->visit_marks, 1024);
    memset(graph->visit_marks + old_capacity, 0,
           (graph->visit_capacity - old_capacity) * sizeof *graph->visit_marks);
    int *marks = graph->visit_marks, round = ++graph->visit_round;
    struct ppw_intvec work = {0};
    ppw_intvec_push(&work, start);
    marks[start] = round;
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
                if (!calls)
                    continue;
                ppw_intvec_add_unique(calls, vertex);
            }
        }
        for (size_t e = 0; e < record->edges.count; e++) {
            int edge = record->edges.items[e];
            if (edge % 4 != EDGE_DATA || marks[edge / 4] == round)
                continue;
            marks[edge / 4] = round;
            ppw_intvec_push(&work, edge / 4);
        }
    }
    ppw_intvec_free(&work);
}

static void bind_value(struct graph *graph, struct call_site *site, LLVMValueRef argument,
                       int formal, unsigned mode)
{
    struct ppw_intvec nodes = {0};
    data_sources(graph, ppw_graph_operand_vertex(graph, argument), &nodes, NULL);
    for (size_t i = 0; i < nodes.count; i++)
        ppw_graph_add_pending(graph, site, nodes.items[i], formal, mode, "");
    ppw_intvec_free(&nodes);
}

static const char *function_operand_name(LLVMValueRef value)
{
    LLVMValueRef function = ppw_graph_function(value);
    size_t length = 0;
    return function ? LLVMGetValueName2(function, &length) : "";
}

/* pthread_create(thread, attr, start, arg): arg is the start routine's
 * parameter 0, and each field of a struct it points at is that field of
 * the parameter's pointee. */
static void bind_spawn(struct graph *graph, struct call_site *site)
{
    /* The handle (argument 0) is the library's output, not the routine's:
     * the library table already records that write. */
    LLVMValueRef argument = LLVMGetOperand(site->inst, 3);
    bind_pointer(graph, site, argument, 0, PPW_BIND_REF);
    const struct ppw_intvec *targets = ppw_memory_targets(&graph->memory, argument);
    struct ppw_intvec copy = {0};
    for (size_t i = 0; targets && i < targets->count; i++)
        ppw_intvec_push(&copy, targets->items[i]);
    for (size_t i = 0; i < copy.count; i++) {
        int node = copy.items[i] / 2, indexed = copy.items[i] % 2;
        LLVMMetadataRef record =
            ppw_dbgvar_strip(ppw_dbgvar_element(graph->memory.nodes[node].type));
        unsigned members = ppw_di_element_count(record);
        for (unsigned m = 0; m < members && m < 64; m++) {
            LLVMMetadataRef member = ppw_di_element(record, m);
            const char *field = ppw_di_name(member);
            if (!field[0] || ppw_di_tag(member) != 0x0d /* DW_TAG_member */)
                continue;
            int child =
                ppw_memory_field(&graph->memory, node, field, indexed, ppw_di_base_type(member));
            ppw_graph_add_pending(graph, site, child, 0, PPW_BIND_REF,
                                  ppw_arena_printf(graph->context->arena, "->%s", field));
        }
    }
    ppw_intvec_free(&copy);
}

/* The task entry unpacks the task and calls the task body, the function
 * that names the shared variables; its last parameter is the shareds. */
static LLVMValueRef task_body(LLVMValueRef entry, int *shareds_formal)
{
    entry = ppw_graph_function(entry);
    if (!entry || LLVMIsDeclaration(entry))
        return NULL;
    for (LLVMBasicBlockRef block = LLVMGetFirstBasicBlock(entry); block;
         block = LLVMGetNextBasicBlock(block))
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst;
             inst = LLVMGetNextInstruction(inst)) {
            const char *name = ppw_graph_is_call(inst) ? ppw_graph_callee_name(inst) : NULL;
            if (name && strstr(name, ".omp_outlined")) {
                LLVMValueRef body = ppw_graph_function(LLVMGetCalledValue(inst));
                *shareds_formal = (int)LLVMCountParams(body) - 1;
                return body;
            }
        }
    return NULL;
}

static int task_launch(const char *name)
{
    return name &&
           ((!strncmp(name, "__kmpc_omp_task", 15) && strcmp(name, "__kmpc_omp_task_alloc")) ||
            !strcmp(name, "__kmpc_taskloop") || !strcmp(name, "__kmpc_taskloop_5"));
}

/* Whether `address` is `base` or a field or element of it. */
static int derived_from(LLVMValueRef address, LLVMValueRef base)
{
    while (address && address != base && LLVMIsAGetElementPtrInst(address))
        address = LLVMGetOperand(address, 0);
    return address == base;
}

/* Firstprivates: the parent stores their values into the task's privates,
 * part of the allocated task, before launching it.  A pointer copied there
 * still points at the parent's data, so what the task writes through it
 * blames the parent's variable the pointer came from: it binds by value to
 * the body's copy, which has the same name.  Scalars are the task's own. */
static void bind_firstprivates(struct graph *graph, struct call_site *site, int formal)
{
    for (LLVMValueRef inst = LLVMGetNextInstruction(site->inst); inst;
         inst = LLVMGetNextInstruction(inst)) {
        if (ppw_graph_is_call(inst) && task_launch(ppw_graph_callee_name(inst)))
            break;
        if (LLVMGetInstructionOpcode(inst) != LLVMStore ||
            !ppw_graph_is_pointer(LLVMGetOperand(inst, 0)) ||
            !derived_from(LLVMGetOperand(inst, 1), site->inst))
            continue;
        struct ppw_intvec nodes = {0};
        data_sources(graph, ppw_graph_operand_vertex(graph, LLVMGetOperand(inst, 0)), &nodes, NULL);
        for (size_t i = 0; i < nodes.count; i++) {
            const char *name = ppw_memory_display_name(&graph->memory, nodes.items[i]);
            if (name)
                ppw_graph_add_pending(graph, site, nodes.items[i], formal, PPW_BIND_VALUE, name);
        }
        ppw_intvec_free(&nodes);
    }
}

/* __kmpc_omp_task_alloc: the parent stores pointers to the shared
 * variables into a captured struct and copies it into the task's shareds.
 * The task body declares each shared under its own name, so the binding
 * names it (callee_path) on the body's shareds parameter. */
static void bind_task(struct graph *graph, struct call_site *site, LLVMValueRef entry)
{
    int formal = 1;
    LLVMValueRef body = task_body(entry, &formal);
    site->callee = function_operand_name(body ? body : entry);
    bind_firstprivates(graph, site, formal);
    LLVMValueRef copy = NULL;
    for (LLVMValueRef inst = LLVMGetNextInstruction(site->inst); inst && !copy;
         inst = LLVMGetNextInstruction(inst)) {
        const char *name = ppw_graph_is_call(inst) ? ppw_graph_callee_name(inst) : NULL;
        if (name && !strncmp(name, "llvm.memcpy", 11))
            copy = inst;
        else if (task_launch(name))
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
        ppw_graph_add_pending(graph, site, node, formal, PPW_BIND_REF, name);
    }
    ppw_intvec_free(&shared);
}

void ppw_graph_bind_call(struct graph *graph, struct call_site *site)
{
    LLVMValueRef call = site->inst;
    const char *name = ppw_graph_callee_name(call);
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
            mode = ppw_libcall_writes(library, k)  ? PPW_BIND_WRITTEN
                   : ppw_libcall_reads(library, k) ? PPW_BIND_SOURCE
                                                   : 0;
        if (!mode)
            continue;
        const struct ppw_intvec *targets =
            ppw_graph_is_pointer(argument) ? ppw_memory_targets(&graph->memory, argument) : NULL;
        if (targets && targets->count)
            bind_pointer(graph, site, argument, (int)k, mode);
        else
            bind_value(graph, site, argument, (int)k, mode == PPW_BIND_REF ? PPW_BIND_VALUE : mode);
    }
}

void ppw_graph_mark_returned(struct graph *graph)
{
    if (graph->return_node < 0)
        return;
    struct ppw_intvec nodes = {0};
    data_sources(graph, ppw_graph_self(graph, graph->return_node), &nodes, NULL);
    for (size_t i = 0; i < nodes.count; i++) {
        int exported = ppw_graph_export_of(&graph->memory, nodes.items[i]);
        if (exported < 0 || graph->exported.items[exported] == graph->return_node)
            continue;
        /* Parameters are exit variables only when written through: a
         * pointer whose data is merely read into the result is no exit. */
        int node = graph->exported.items[exported], root = node;
        while (ppw_graph_up(&graph->memory, root) >= 0)
            root = ppw_graph_up(&graph->memory, root);
        if (!graph->memory.nodes[root].is_param_root)
            graph->memory.nodes[node].flags |= PPW_VAR_EXIT_RETURNED;
    }
    ppw_intvec_free(&nodes);
}

/* Receivers: the variables a call's result is stored into. */
void ppw_graph_bind_receivers(struct graph *graph)
{
    struct ppw_ptrmap site_of_vertex = {0};
    for (size_t i = 0; i < graph->call_count; i++)
        ppw_ptrmap_put(&site_of_vertex, (const void *)(uintptr_t)(graph->calls[i].vertex + 1),
                       (int)i);
    /* Every written node shown as a variable, not only exported ones: a
     * result stored through a pointer parameter (tmp[k] = work(k)) lands in
     * the pointee, which is shown under the parameter. */
    for (size_t n = 0; n < graph->memory.node_count; n++) {
        int node = (int)n;
        if (!graph->memory.nodes[n].write_locs.count ||
            ppw_graph_export_of(&graph->memory, node) < 0)
            continue;
        struct ppw_intvec calls = {0};
        data_sources(graph, ppw_graph_self(graph, node), NULL, &calls);
        for (size_t c = 0; c < calls.count; c++) {
            int site =
                ppw_ptrmap_get(&site_of_vertex, (const void *)(uintptr_t)(calls.items[c] + 1), -1);
            if (site >= 0 && graph->calls[site].kind != PPW_CALL_FORK &&
                graph->calls[site].kind != PPW_CALL_TASK &&
                graph->calls[site].kind != PPW_CALL_SPAWN)
                ppw_graph_add_pending(graph, &graph->calls[site], node, -1, PPW_BIND_RETURN, "");
        }
        ppw_intvec_free(&calls);
    }
    ppw_ptrmap_free(&site_of_vertex);
}

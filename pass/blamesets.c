/* Blame sets: the structure edges between a node, its fields and its
 * pointee, the variables exported, their inclusive sets by reachability
 * and their exclusive sets from direct writes, and the results. */
#include "graph.h"
#include "dbgvar.h"

#include "llvm_shim.h"

#include <ppw/libcalls.h>
#include <ppw/static_format.h>
#include <stdlib.h>
#include <string.h>

/* ---- structure, export and reachability ---------------------------------- */

void ppw_graph_wire_node(struct graph *graph, int node)
{
    struct ppw_memory *memory = &graph->memory;
    int self = ppw_graph_self(graph, node), view = ppw_graph_view(graph, node);
    int down = ppw_graph_down(graph, node), fields = ppw_graph_fields(graph, node);
    ppw_graph_add_edge(graph, view, self, EDGE_DATA);
    ppw_graph_add_edge(graph, view, fields, EDGE_DATA);
    ppw_graph_add_edge(graph, down, self, EDGE_DATA);
    ppw_graph_add_edge(graph, fields, self, EDGE_DATA);
    /* A read of a field also reads writes of the whole enclosing struct. */
    for (int at = memory->nodes[node].parent; at >= 0; at = memory->nodes[at].parent)
        ppw_graph_add_edge(graph, view, ppw_graph_self(graph, at), EDGE_DATA);
    for (size_t c = 0; c < memory->nodes[node].children.count; c++) {
        int child = memory->nodes[node].children.items[c];
        ppw_graph_add_edge(graph, down, ppw_graph_down(graph, child), EDGE_DATA);
        ppw_graph_add_edge(graph, fields, ppw_graph_fields(graph, child), EDGE_DATA);
    }
    if (memory->nodes[node].pte >= 0)
        ppw_graph_add_edge(graph, down, ppw_graph_down(graph, memory->nodes[node].pte), EDGE_DATA);
    if (memory->nodes[node].kind == PPW_VAR_LOCAL && memory->nodes[node].var_name)
        graph->vertices[self].loc = ppw_graph_intern_loc(graph, memory->nodes[node].decl_file,
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

void ppw_graph_select_exports(struct graph *graph)
{
    for (size_t n = 0; n < graph->memory.node_count; n++)
        if (is_exported(&graph->memory, (int)n)) {
            graph->memory.nodes[n].export_id = (int)graph->exported.count;
            ppw_intvec_push(&graph->exported, (int)n);
        }
    graph->export_vertex = ppw_xcalloc(graph->exported.count + 1, sizeof *graph->export_vertex);
    for (size_t i = 0; i < graph->exported.count; i++) {
        int node = graph->exported.items[i];
        int vertex = ppw_graph_new_vertex(graph, VERTEX_EXPORT, -1, -1);
        ppw_graph_add_edge(graph, vertex, ppw_graph_down(graph, node), EDGE_DATA);
        for (int at = graph->memory.nodes[node].parent; at >= 0;
             at = graph->memory.nodes[at].parent)
            ppw_graph_add_edge(graph, vertex, ppw_graph_self(graph, at), EDGE_DATA);
        graph->export_vertex[i] = vertex;
    }
}

/* The exported variable a node is reported as: pointees show under their
 * pointer, unreported fields under their nearest reported ancestor. */
int ppw_graph_export_of(const struct ppw_memory *memory, int node)
{
    for (int at = node; at >= 0; at = ppw_graph_up(memory, at))
        if (memory->nodes[at].export_id >= 0)
            return memory->nodes[at].export_id;
    return -1;
}

/* The exported variable a read of vertex v reads (what a load of a node
 * reads is its VIEW vertex), or -1. */
static int read_variable(const struct graph *graph, int v)
{
    const struct vertex *vertex = &graph->vertices[v];
    if (vertex->kind != VERTEX_VIEW || vertex->node < 0)
        return -1;
    return ppw_graph_export_of(&graph->memory, vertex->node);
}

static int location_bit(const struct graph *graph, int v)
{
    return graph->vertices[v].loc;
}

/* Tarjan's strongly connected components, iteratively, then one bitset per
 * component, built sinks first, of the bits (bit_of) of the vertices
 * reachable over the edges whose kinds are in edge_kinds (a mask of
 * 1 << enum edge_kind).  Returns NULL when the sets would be too large. */
static uint64_t **reachable_bits(struct graph *graph, unsigned edge_kinds, size_t words,
                                 int (*bit_of)(const struct graph *, int), int **component_of,
                                 size_t *component_count)
{
    size_t n = graph->vertex_count;
    int *index = ppw_xcalloc(n, sizeof *index), *low = ppw_xcalloc(n, sizeof *low);
    int *on_stack = ppw_xcalloc(n, sizeof *on_stack),
        *component = ppw_xcalloc(n, sizeof *component);
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
                int edge = edges->items[edge_position[v]++], w = edge / 4;
                if (!(edge_kinds >> (edge % 4) & 1))
                    continue;
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
            sets = ppw_grow(sets, &set_capacity, set_count + 1, sizeof *sets, 64);
            uint64_t *bits = ppw_xcalloc(words ? words : 1, sizeof *bits);
            size_t first = stack_depth;
            do {
                first--;
                component[stack[first]] = (int)set_count;
                on_stack[stack[first]] = 0;
            } while (stack[first] != v);
            for (size_t s = first; s < stack_depth; s++) {
                const struct vertex *member = &graph->vertices[stack[s]];
                int bit = bit_of(graph, stack[s]);
                if (bit >= 0)
                    bits[bit / 64] |= 1ull << (bit % 64);
                for (size_t e = 0; e < member->edges.count; e++) {
                    if (!(edge_kinds >> (member->edges.items[e] % 4) & 1))
                        continue;
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
    *component_count = set_count;
    return sets;
}

/* The locations reachable from each vertex's component: blame sets. */
uint64_t **ppw_graph_reachable_locations(struct graph *graph, int **component_of,
                                         size_t *component_count)
{
    return reachable_bits(graph, EDGE_KINDS_ALL, (graph->loc_count + 63) / 64, location_bit,
                          component_of,
                          component_count);
}

/* The exported variables whose memory a vertex's value is computed from
 * (their views reachable), over the edges of the kinds in edge_kinds:
 * without address edges, a variable used only as an address (the pointer
 * s in s->n) is not what is computed from. */
uint64_t **ppw_graph_reachable_variables(struct graph *graph, unsigned edge_kinds,
                                         int **component_of, size_t *component_count)
{
    return reachable_bits(graph, edge_kinds, (graph->exported.count + 63) / 64, read_variable,
                          component_of, component_count);
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
    while (ppw_graph_up(&graph->memory, root) >= 0)
        root = ppw_graph_up(&graph->memory, root);
    const struct ppw_node *record = &graph->memory.nodes[root];
    if (!record->key)
        return "";
    if (root == node)
        return record->key;
    /* A global's field: the global's identity plus the path below it. */
    size_t skip = strlen(record->var_name ? record->var_name : "");
    return ppw_arena_printf(graph->context->arena, "%s%s", record->key, name + skip);
}

void ppw_graph_fill_variable(struct graph *graph, size_t index, const uint64_t *inclusive,
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
    out->parent = ppw_graph_up(memory, node) >= 0
                      ? ppw_graph_export_of(memory, ppw_graph_up(memory, node))
                      : -1;
    out->param_index = record->kind == PPW_VAR_PARAM ? record->param_index : -1;
    out->flags = subtree_flags(memory, node) |
                 (memory->nodes[root >= 0 ? root : node].flags & PPW_VAR_EXIT_GLOBAL);
    if (ppw_dbgvar_is_scalar(record->type))
        out->flags |= PPW_VAR_SCALAR;
    out->key = variable_key(graph, node, out->name);
    if (inclusive)
        out->inclusive = locs_from_bits(graph, inclusive, &out->inclusive_count);
    out->exclusive = exclusive_locs(graph, node, &out->exclusive_count);
}

void ppw_graph_fill_calls(struct graph *graph, struct ppw_result_func *out)
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
            int var = ppw_graph_export_of(&graph->memory, pending->node);
            if (var < 0)
                continue; /* temporaries */
            struct ppw_result_binding *binding = &call->bindings[call->binding_count];
            int duplicate = 0;
            for (size_t d = 0; d < call->binding_count; d++)
                duplicate |= call->bindings[d].var == var &&
                             call->bindings[d].formal == pending->formal &&
                             call->bindings[d].mode == pending->mode &&
                             !strcmp(call->bindings[d].callee_path, pending->path);
            if (duplicate)
                continue;
            *binding =
                (struct ppw_result_binding){var, pending->formal, pending->mode, pending->path};
            call->binding_count++;
        }
    }
}

/* One variable above the other in the field and pointee hierarchy: their
 * relation is the hierarchy's (a field blames its parent), not data flow. */
static int related(const struct ppw_result_func *out, int a, int b)
{
    for (int at = out->vars[a].parent, depth = 0; at >= 0 && depth < 64;
         at = out->vars[at].parent, depth++)
        if (at == b)
            return 1;
    for (int at = out->vars[b].parent, depth = 0; at >= 0 && depth < 64;
         at = out->vars[at].parent, depth++)
        if (at == a)
            return 1;
    return 0;
}

static int is_pointer_node(const struct ppw_memory *memory, int node)
{
    LLVMMetadataRef type = ppw_dbgvar_strip(memory->nodes[node].type);
    return type && ppw_di_tag(type) == 0x0f; /* DW_TAG_pointer_type */
}

void ppw_graph_fill_flows(struct graph *graph, const struct ppw_flow_sets *by_value,
                          const struct ppw_flow_sets *by_content, struct ppw_result_func *out)
{
    size_t count = graph->exported.count;
    if (!by_value->sets || !by_content->sets || !count)
        return;
    /* A pointer's receivers got their blame through what it points to:
     * what is computed from that memory, not what is reached through the
     * pointer's value (sim in sim->nSteps).  Other variables' values count
     * as indices too (idx in row[idx].energy). */
    char *pointer = ppw_xcalloc(count, 1);
    for (size_t r = 0; r < count; r++)
        pointer[r] = (char)is_pointer_node(&graph->memory, graph->exported.items[r]);
    struct ppw_intvec *into = ppw_xcalloc(count, sizeof *into);
    for (size_t w = 0; w < count; w++) {
        int vertex = graph->export_vertex[w];
        const uint64_t *value = by_value->sets[by_value->component[vertex]];
        const uint64_t *content = by_content->sets[by_content->component[vertex]];
        for (size_t r = 0; r < count; r++) {
            const uint64_t *bits = pointer[r] ? content : value;
            if (r != w && ((bits[r / 64] >> (r % 64)) & 1) && !related(out, (int)r, (int)w))
                ppw_intvec_push(&into[r], (int)w);
        }
    }
    for (size_t r = 0; r < count; r++)
        out->flow_count += into[r].count > 0;
    out->flows = ppw_xcalloc(out->flow_count + 1, sizeof *out->flows);
    size_t k = 0;
    for (size_t r = 0; r < count; r++) {
        if (!into[r].count)
            continue;
        out->flows[k++] = (struct ppw_result_flow){(int)r, into[r].items, into[r].count};
    }
    free(into);
    free(pointer);
}

/* Whether node (or what is below it) is written in a block control reaches
 * after the call at position seq of block start: later in that block, or
 * in a block reachable from it (the block itself only through a loop). */
static int written_after(const struct ppw_memory *memory, int node, const char *reachable,
                         int start, int seq, int depth)
{
    const struct ppw_node *record = &memory->nodes[node];
    for (size_t i = 0; i < record->write_blocks.count; i++) {
        int block = record->write_blocks.items[i];
        if (block < 0 || reachable[block] || (block == start && record->write_seqs.items[i] > seq))
            return 1;
    }
    if (depth > 64)
        return 0;
    for (size_t c = 0; c < record->children.count; c++)
        if (written_after(memory, record->children.items[c], reachable, start, seq, depth + 1))
            return 1;
    return record->pte >= 0 && written_after(memory, record->pte, reachable, start, seq, depth + 1);
}

void ppw_graph_fill_written_after(struct graph *graph, struct ppw_result_func *out)
{
    size_t blocks = graph->cfg.block_count;
    char *reachable = ppw_xcalloc(blocks + 1, 1);
    int *work = ppw_xcalloc(blocks + 1, sizeof *work);
    struct ppw_intvec vars = {0};
    for (size_t i = 0; i < graph->call_count && i < out->call_count; i++) {
        int start = ppw_cfg_index(&graph->cfg, LLVMGetInstructionParent(graph->calls[i].inst));
        if (start < 0)
            continue;
        /* every block reachable from the call's block's successors, loops
         * back to it included */
        memset(reachable, 0, blocks);
        size_t top = 0;
        work[top++] = start;
        while (top) {
            int b = work[--top];
            for (size_t s = 0; s < graph->cfg.successors[b].count; s++) {
                int next = graph->cfg.successors[b].items[s];
                if (next >= 0 && (size_t)next < blocks && !reachable[next]) {
                    reachable[next] = 1;
                    work[top++] = next;
                }
            }
        }
        vars.count = 0;
        for (size_t v = 0; v < graph->exported.count; v++)
            if (written_after(&graph->memory, graph->exported.items[v], reachable, start,
                              graph->calls[i].seq, 0))
                ppw_intvec_push(&vars, (int)v);
        if (!vars.count)
            continue;
        out->calls[i].written_after = ppw_xcalloc(vars.count, sizeof *vars.items);
        memcpy(out->calls[i].written_after, vars.items, vars.count * sizeof *vars.items);
        out->calls[i].written_after_count = vars.count;
    }
    ppw_intvec_free(&vars);
    free(work);
    free(reachable);
}

#include "cfg.h"

#include <stdlib.h>
#include <string.h>

int ppw_cfg_index(const struct ppw_cfg *cfg, LLVMBasicBlockRef block)
{
    return ppw_ptrmap_get(&cfg->block_index, block, -1);
}

static void collect_blocks(struct ppw_cfg *cfg, LLVMValueRef function)
{
    cfg->block_count = LLVMCountBasicBlocks(function);
    cfg->blocks = ppw_xcalloc(cfg->block_count, sizeof *cfg->blocks);
    LLVMGetBasicBlocks(function, cfg->blocks);
    for (size_t i = 0; i < cfg->block_count; i++)
        ppw_ptrmap_put(&cfg->block_index, cfg->blocks[i], (int)i);
    cfg->successors = ppw_xcalloc(cfg->block_count + 1, sizeof *cfg->successors);
    for (size_t i = 0; i < cfg->block_count; i++) {
        LLVMValueRef terminator = LLVMGetBasicBlockTerminator(cfg->blocks[i]);
        unsigned count = terminator ? LLVMGetNumSuccessors(terminator) : 0;
        for (unsigned s = 0; s < count; s++) {
            int target = ppw_cfg_index(cfg, LLVMGetSuccessor(terminator, s));
            if (target >= 0)
                ppw_intvec_add_unique(&cfg->successors[i], target);
        }
    }
}

/* A graph walked for dominators, and its depth-first order: the CFG
 * itself, or the reverse CFG, where the exit node (index n) leads to every
 * exit block and each block to its CFG predecessors. */
struct walk_graph {
    struct ppw_intvec *next; /* n + 1 entries */
    int *postorder_number;
    int *order; /* reverse postorder */
    size_t order_count;
};

static void depth_first(struct walk_graph *reverse, size_t node_count, int start, int *visited,
                        int *counter)
{
    /* Iterative: functions with thousands of blocks must not overflow the stack. */
    int *stack = ppw_xcalloc(node_count + 1, sizeof *stack);
    size_t *position = ppw_xcalloc(node_count + 1, sizeof *position);
    size_t depth = 0;
    stack[depth++] = start;
    visited[start] = 1;
    while (depth) {
        int node = stack[depth - 1];
        if (position[node] < reverse->next[node].count) {
            int next = reverse->next[node].items[position[node]++];
            if (!visited[next]) {
                visited[next] = 1;
                stack[depth++] = next;
            }
        } else {
            reverse->postorder_number[node] = (*counter)++;
            reverse->order[reverse->order_count++] = node;
            depth--;
        }
    }
    free(stack);
    free(position);
}

static int intersect(const int *idom, const int *number, int a, int b)
{
    while (a != b) {
        while (number[a] < number[b])
            a = idom[a];
        while (number[b] < number[a])
            b = idom[b];
    }
    return a;
}

/* Cooper, Harvey and Kennedy's iteration over a depth-first order (the
 * graph's, in graph->order) from root, whose idom is itself; idom[] holds
 * -1 for every other node on entry, and still does for those root does
 * not reach. */
static void solve_dominators(const struct walk_graph *graph, const struct ppw_intvec *preds,
                             int root, int *idom)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t k = graph->order_count; k-- > 0;) { /* reverse postorder */
            int node = graph->order[k];
            if (node == root)
                continue;
            int chosen = -1;
            for (size_t p = 0; p < preds[node].count; p++) {
                int pred = preds[node].items[p];
                if (idom[pred] < 0)
                    continue;
                chosen = chosen < 0 ? pred : intersect(idom, graph->postorder_number, pred, chosen);
            }
            if (chosen >= 0 && idom[node] != chosen) {
                idom[node] = chosen;
                changed = 1;
            }
        }
    }
}

static void compute_post_dominators(struct ppw_cfg *cfg)
{
    size_t n = cfg->block_count, exit = n;
    struct walk_graph reverse = {0};
    reverse.next = ppw_xcalloc(n + 1, sizeof *reverse.next);
    reverse.postorder_number = ppw_xcalloc(n + 1, sizeof *reverse.postorder_number);
    reverse.order = ppw_xcalloc(n + 1, sizeof *reverse.order);
    struct ppw_intvec *reverse_preds = ppw_xcalloc(n + 1, sizeof *reverse_preds);
    for (size_t b = 0; b < n; b++) {
        if (!cfg->successors[b].count)
            ppw_intvec_push(&reverse.next[exit], (int)b);
        for (size_t s = 0; s < cfg->successors[b].count; s++)
            ppw_intvec_push(&reverse.next[cfg->successors[b].items[s]], (int)b);
    }
    int *visited = ppw_xcalloc(n + 1, sizeof *visited);
    int counter = 0;
    depth_first(&reverse, n + 1, (int)exit, visited, &counter);
    /* Blocks that never reach an exit: make each unreached one an exit. */
    for (size_t b = 0; b < n; b++)
        if (!visited[b]) {
            ppw_intvec_push(&reverse.next[exit], (int)b);
            reverse.order_count = 0;
            counter = 0;
            memset(visited, 0, (n + 1) * sizeof *visited);
            depth_first(&reverse, n + 1, (int)exit, visited, &counter);
        }
    for (size_t node = 0; node <= n; node++)
        for (size_t i = 0; i < reverse.next[node].count; i++)
            ppw_intvec_push(&reverse_preds[reverse.next[node].items[i]], (int)node);
    int *idom = cfg->post_dominator;
    for (size_t i = 0; i <= n; i++)
        idom[i] = -1;
    idom[exit] = (int)exit;
    solve_dominators(&reverse, reverse_preds, (int)exit, idom);
    for (size_t node = 0; node <= n; node++) {
        ppw_intvec_free(&reverse.next[node]);
        ppw_intvec_free(&reverse_preds[node]);
    }
    free(reverse.next);
    free(reverse_preds);
    free(reverse.postorder_number);
    free(reverse.order);
    free(visited);
}

/* Immediate dominators of the CFG from the entry block (preds: each
 * block's predecessors); -1 for blocks the entry does not reach. */
static int *compute_dominators(const struct ppw_cfg *cfg, const struct ppw_intvec *preds)
{
    size_t n = cfg->block_count;
    struct walk_graph forward = {0};
    forward.next = cfg->successors;
    forward.postorder_number = ppw_xcalloc(n + 1, sizeof *forward.postorder_number);
    forward.order = ppw_xcalloc(n + 1, sizeof *forward.order);
    int *visited = ppw_xcalloc(n + 1, sizeof *visited), counter = 0;
    depth_first(&forward, n, 0, visited, &counter);
    int *idom = ppw_xcalloc(n + 1, sizeof *idom);
    for (size_t i = 0; i <= n; i++)
        idom[i] = -1;
    idom[0] = 0;
    solve_dominators(&forward, preds, 0, idom);
    free(forward.postorder_number);
    free(forward.order);
    free(visited);
    return idom;
}

static int dominates(const int *idom, int a, int b)
{
    for (int at = b;; at = idom[at]) {
        if (at == a)
            return 1;
        if (at <= 0 || idom[at] == at)
            return at == a;
    }
}

/* Functions with more blocks keep every control dependence as deciding
 * values (the loop sets would cost blocks x loops bits). */
enum { MAX_LOOP_BLOCKS = 1 << 14 };

/* Whether a successor runs straight to a function exit: a short chain of
 * blocks with one successor each, ending in a return (if (!ok) return;). */
static int leads_to_exit(const struct ppw_cfg *cfg, int block)
{
    for (int steps = 0; steps < 4; steps++) {
        if (!cfg->successors[block].count)
            return 1;
        if (cfg->successors[block].count > 1)
            return 0;
        block = cfg->successors[block].items[0];
    }
    return 0;
}

/* Splits out the controllers that are exit tests: early returns, and the
 * exits of a natural loop holding both the controller and the block (a
 * back edge t -> h, h dominating t; the loop is h and what reaches t
 * without passing h). */
static void find_exit_tests(struct ppw_cfg *cfg)
{
    size_t n = cfg->block_count;
    for (size_t b = 0; b < n; b++)
        for (size_t c = 0; c < cfg->controllers[b].count; c++) {
            int controller = cfg->controllers[b].items[c];
            const struct ppw_intvec *next = &cfg->successors[controller];
            for (size_t k = 0; k < next->count; k++)
                if ((size_t)next->items[k] != b && leads_to_exit(cfg, next->items[k])) {
                    ppw_intvec_add_unique(&cfg->exit_test_controllers[b], controller);
                    break;
                }
        }
    if (n < 2 || n > MAX_LOOP_BLOCKS)
        return;
    struct ppw_intvec *preds = ppw_xcalloc(n + 1, sizeof *preds);
    for (size_t b = 0; b < n; b++)
        for (size_t s = 0; s < cfg->successors[b].count; s++)
            ppw_intvec_push(&preds[cfg->successors[b].items[s]], (int)b);
    int *idom = compute_dominators(cfg, preds);
    unsigned char *in_loop = ppw_xcalloc(n, 1);
    int *stack = ppw_xcalloc(n + 1, sizeof *stack);
    for (size_t tail = 0; tail < n; tail++)
        for (size_t s = 0; s < cfg->successors[tail].count; s++) {
            int head = cfg->successors[tail].items[s];
            if (idom[tail] < 0 || !dominates(idom, head, (int)tail))
                continue;
            memset(in_loop, 0, n);
            in_loop[head] = 1;
            size_t depth = 0;
            if (!in_loop[tail]) {
                in_loop[tail] = 1;
                stack[depth++] = (int)tail;
            }
            while (depth) {
                int at = stack[--depth];
                for (size_t p = 0; p < preds[at].count; p++)
                    if (!in_loop[preds[at].items[p]] && idom[preds[at].items[p]] >= 0) {
                        in_loop[preds[at].items[p]] = 1;
                        stack[depth++] = preds[at].items[p];
                    }
            }
            for (size_t b = 0; b < n; b++) {
                if (!in_loop[b])
                    continue;
                for (size_t k = 0; k < cfg->successors[b].count; k++)
                    if (!in_loop[cfg->successors[b].items[k]])
                        cfg->leaves_loop[b] = 1;
                for (size_t c = 0; c < cfg->controllers[b].count; c++) {
                    int controller = cfg->controllers[b].items[c];
                    if (!in_loop[controller])
                        continue;
                    const struct ppw_intvec *next = &cfg->successors[controller];
                    for (size_t k = 0; k < next->count; k++)
                        if (!in_loop[next->items[k]]) {
                            ppw_intvec_add_unique(&cfg->exit_test_controllers[b], controller);
                            break;
                        }
                }
            }
        }
    for (size_t b = 0; b <= n; b++)
        ppw_intvec_free(&preds[b]);
    free(preds);
    free(in_loop);
    free(stack);
    free(idom);
}

void ppw_cfg_build(struct ppw_cfg *cfg, LLVMValueRef function)
{
    memset(cfg, 0, sizeof *cfg);
    collect_blocks(cfg, function);
    size_t n = cfg->block_count;
    cfg->post_dominator = ppw_xcalloc(n + 1, sizeof *cfg->post_dominator);
    cfg->controllers = ppw_xcalloc(n + 1, sizeof *cfg->controllers);
    cfg->exit_test_controllers = ppw_xcalloc(n + 1, sizeof *cfg->exit_test_controllers);
    cfg->leaves_loop = ppw_xcalloc(n + 1, 1);
    compute_post_dominators(cfg);
    /* B is control dependent on A when A has an edge to S, B post-dominates
     * S, and B does not strictly post-dominate A. */
    for (size_t a = 0; a < n; a++) {
        if (cfg->successors[a].count < 2)
            continue;
        for (size_t s = 0; s < cfg->successors[a].count; s++) {
            int runner = cfg->successors[a].items[s];
            for (size_t steps = 0; runner >= 0 && (size_t)runner != n &&
                                   runner != cfg->post_dominator[a] && steps <= n;
                 steps++) {
                ppw_intvec_add_unique(&cfg->controllers[runner], (int)a);
                runner = cfg->post_dominator[runner];
            }
        }
    }
    find_exit_tests(cfg);
}

void ppw_cfg_free(struct ppw_cfg *cfg)
{
    for (size_t i = 0; i <= cfg->block_count; i++) {
        if (cfg->successors)
            ppw_intvec_free(&cfg->successors[i]);
        if (cfg->controllers)
            ppw_intvec_free(&cfg->controllers[i]);
        if (cfg->exit_test_controllers)
            ppw_intvec_free(&cfg->exit_test_controllers[i]);
    }
    free(cfg->successors);
    free(cfg->controllers);
    free(cfg->exit_test_controllers);
    free(cfg->leaves_loop);
    free(cfg->post_dominator);
    free(cfg->blocks);
    ppw_ptrmap_free(&cfg->block_index);
    memset(cfg, 0, sizeof *cfg);
}

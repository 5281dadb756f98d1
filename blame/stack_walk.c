/* Attribution's one walk over the samples (attribute.h): stacks sorted
 * callers first, each resolved to the functions with a graph, given its
 * calling contexts and its chain of user frames (datum.c), and then handed
 * to each view in turn: the blame view (attribute.c) and, when asked, the
 * access view (access.c).  A view is one pass over a stack; what the views
 * share (functions by name, per-function state, contexts, calls at a
 * frame, the chain and the datums) lives here and in datum.c, below them
 * all, so that a view is added by adding it to `views`. */
#include "attribute.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "attribute_int.h"
#include "names.h"
#include "open_table.h"
#include "ppw/static_format.h"
#include "read_graph.h"
#include "strmap.h"

/* ---- functions by name ---- */

static bool is_user(const struct ppw_static_func *f)
{
    return (f->flags & PPW_FUNC_ANALYSED) != 0;
}

/* The function a frame is in: among several of that name (static functions
 * of different units), one with a graph whose file matches the frame's. */
static int32_t resolve_uncached(const struct attr *a, const struct ppw_blame_frame *frame)
{
    const struct ppw_strmultimap_list *list = ppw_strmultimap_find(&a->names, frame->function);
    if (!list)
        return -1;
    if (list->count == 1)
        return (int32_t)list->items[0];
    int32_t best = (int32_t)list->items[0];
    int best_score = -1;
    for (size_t i = 0; i < list->count; i++) {
        const struct ppw_static_func *f = &a->graph->funcs[list->items[i]];
        int score = is_user(f) * 2 + ppw_names_same_file(f->file, frame->file);
        if (score > best_score)
            best = (int32_t)list->items[i], best_score = score;
    }
    return best;
}

/* resolve_uncached, remembered by the frame's name and file pointers (the
 * readers intern them: a stack's frames repeat across stacks). */
static int32_t resolve(struct attr *a, const struct ppw_blame_frame *frame)
{
    if (!frame->function)
        return -1;
    uint64_t h =
        ppw_attr_mix((uint64_t)(uintptr_t)frame->function ^ (uint64_t)(uintptr_t)frame->file << 1);
    struct resolved *r = &a->resolved[h & (RESOLVED_SLOTS - 1)];
    if (r->function != frame->function || r->file != frame->file) {
        *r = (struct resolved){frame->function, frame->file, resolve_uncached(a, frame)};
    }
    return r->func;
}

/* ---- per-function state ---- */

static int compare_loc(const void *x, const void *y)
{
    const struct loc_ref *a = x, *b = y;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return (a->var > b->var) - (a->var < b->var);
}

static bool collect_locs(const struct ppw_static_func *f, bool excl, struct loc_ref **out,
                         size_t *count)
{
    size_t n = 0;
    for (size_t v = 0; v < f->var_count; v++)
        n += excl ? f->vars[v].exclusive_count : f->vars[v].inclusive_count;
    *count = n;
    *out = NULL;
    if (!n)
        return true;
    struct loc_ref *locs = malloc(n * sizeof *locs);
    if (!locs)
        return false;
    size_t k = 0;
    for (size_t v = 0; v < f->var_count; v++) {
        const struct ppw_static_var *var = &f->vars[v];
        const struct ppw_static_loc *set = excl ? var->exclusive : var->inclusive;
        size_t m = excl ? var->exclusive_count : var->inclusive_count;
        for (size_t i = 0; i < m; i++)
            locs[k++] = (struct loc_ref){set[i].line, set[i].col, set[i].file, (uint32_t)v};
    }
    qsort(locs, n, sizeof *locs, compare_loc);
    *out = locs;
    return true;
}

static int32_t param_root(const struct ppw_static_func *f, int32_t v)
{
    for (int depth = 0; v >= 0 && depth <= (int)f->var_count; depth++) {
        if (f->vars[v].kind == PPW_VAR_PARAM)
            return f->vars[v].param_index >= 0 ? v : -1;
        if (f->vars[v].kind != PPW_VAR_FIELD)
            return -1;
        v = f->vars[v].parent;
    }
    return -1;
}

/* Whether types a and b are one pointer type, qualifiers aside. */
static bool same_pointer_type(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (!la || a[la - 1] != '*' || !lb || b[lb - 1] != '*')
        return false;
    for (;;) {
        while (strncmp(a, "const ", 6) == 0 || strncmp(a, "volatile ", 9) == 0)
            a += a[0] == 'c' ? 6 : 9;
        while (strncmp(b, "const ", 6) == 0 || strncmp(b, "volatile ", 9) == 0)
            b += b[0] == 'c' ? 6 : 9;
        if (!*a || !*b || *a != *b)
            return !*a && !*b;
        a++, b++;
    }
}

/* The inverse of the flows into local pointers from pointers of their
 * type (a copy, or arithmetic on one): where `double *next = g->next` was
 * written through, g->next's memory was.  (A pointer computed from other
 * data, malloc(atol(argv[1])), has another type.) */
static bool pointer_sources(struct fstate *s, const struct ppw_static_func *f)
{
    size_t n = f->var_count;
    if (!(s->pointer_start = calloc(n + 1, sizeof *s->pointer_start)))
        return false;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < f->flow_count; i++) {
            const struct ppw_static_flow *flow = &f->flows[i];
            for (size_t t = 0; t < flow->target_count; t++) {
                uint32_t target = flow->targets[t];
                if (f->vars[target].kind != PPW_VAR_LOCAL ||
                    !same_pointer_type(f->vars[target].type, f->vars[flow->source].type))
                    continue;
                if (pass == 0)
                    s->pointer_start[target + 1]++;
                else
                    s->pointer_sources[s->pointer_start[target]++] = flow->source;
            }
        }
        if (pass == 0) {
            for (size_t v = 0; v < n; v++)
                s->pointer_start[v + 1] += s->pointer_start[v];
            if (!(s->pointer_sources = malloc((s->pointer_start[n] ? s->pointer_start[n] : 1) *
                                              sizeof *s->pointer_sources)))
                return false;
        }
    }
    /* the fill moved each start to the next one's: back */
    for (size_t v = n; v > 0; v--)
        s->pointer_start[v] = s->pointer_start[v - 1];
    s->pointer_start[0] = 0;
    return true;
}

struct fstate *ppw_attr_fstate_make(struct attr *a, int32_t func)
{
    struct fstate *s = &a->fs[func];
    const struct ppw_static_func *f = &a->graph->funcs[func];
    size_t n = f->var_count ? f->var_count : 1;
    s->slot = calloc(n, sizeof *s->slot);
    s->root = calloc(n, sizeof *s->root);
    s->mark = calloc(n, sizeof *s->mark);
    s->held = calloc(n, sizeof *s->held);
    s->pos = calloc(n, sizeof *s->pos);
    if (!s->slot || !s->root || !s->mark || !s->held || !s->pos ||
        !collect_locs(f, false, &s->incl, &s->nincl) ||
        !collect_locs(f, true, &s->excl, &s->nexcl)) {
        a->oom = true;
        return NULL;
    }
    s->ret = -1;
    for (size_t v = 0; v < f->var_count; v++) {
        s->root[v] = param_root(f, (int32_t)v);
        if (f->vars[v].kind == PPW_VAR_RETURN && s->ret < 0)
            s->ret = (int32_t)v;
        s->nglobals += ppw_attr_program_level(&f->vars[v]);
    }
    s->flow_of = calloc(n, sizeof *s->flow_of);
    s->globals = calloc(s->nglobals ? s->nglobals : 1, sizeof *s->globals);
    if (!s->flow_of || !s->globals) {
        a->oom = true;
        return NULL;
    }
    if (!ppw_attr_datum_fstate(s, f) || !ppw_attr_effects_fstate(s, f)) {
        a->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < f->flow_count; i++)
        s->flow_of[f->flows[i].source] = &f->flows[i];
    if (!pointer_sources(s, f)) {
        a->oom = true;
        return NULL;
    }
    s->nglobals = 0;
    s->global_slot = malloc(n * sizeof *s->global_slot);
    if (!s->global_slot) {
        a->oom = true;
        return NULL;
    }
    s->ready = true; /* ppw_attr_slot below needs it */
    for (size_t v = 0; v < f->var_count; v++) {
        s->global_slot[v] = -1;
        if (ppw_attr_program_level(&f->vars[v])) {
            s->globals[s->nglobals++] = (uint32_t)v;
            struct slot *slot = ppw_attr_slot(a, func, (uint32_t)v, "");
            if (!slot)
                return NULL;
            s->global_slot[v] = (int32_t)(slot - a->slots);
        }
    }
    s->ready = true;
    return s;
}

static void fstate_free(struct fstate *s)
{
    free(s->incl);
    free(s->excl);
    free(s->slot);
    free(s->root);
    free(s->mark);
    free(s->held);
    free(s->pos);
    free(s->flow_of);
    free(s->pointer_start);
    free(s->pointer_sources);
    free(s->globals);
    free(s->global_slot);
    ppw_attr_datum_fstate_free(s);
    ppw_attr_effects_fstate_free(s);
    ppw_attr_access_free(s);
}

/* ---- calling contexts ---- */

static uint64_t node_hash(uint32_t parent, int32_t func)
{
    return ppw_attr_mix((uint64_t)parent << 32 | (uint32_t)func);
}

static uint64_t place_node(const void *entry, const void *ctx)
{
    (void)ctx;
    const struct node_ref *r = entry;
    return node_hash(r->parent, r->func);
}

static bool node_used(const void *entry, const void *ctx)
{
    (void)ctx;
    return ((const struct node_ref *)entry)->id != 0;
}

static const struct ppw_open_table_kind node_table = {sizeof(struct node_ref), 1024, place_node,
                                                      node_used};

static bool grow_nodes(struct attr *a)
{
    if (!ppw_array_reserve(&a->nodes, &a->nodes_cap, a->nnodes + 1, sizeof *a->nodes))
        return false;
    return ppw_open_table_reserve((void **)&a->node_table, &a->node_table_cap, a->nnodes,
                                  &node_table, NULL);
}

/* The context parent + func; a call of a function from itself stays in the
 * same context, so that recursion does not multiply contexts. */
static uint32_t child_node(struct attr *a, uint32_t parent, int32_t func)
{
    if (parent && a->nodes[parent].func == func)
        return parent;
    if (!grow_nodes(a)) {
        a->oom = true;
        return 0;
    }
    size_t mask = a->node_table_cap - 1;
    size_t k = (size_t)node_hash(parent, func) & mask;
    for (; a->node_table[k].id; k = (k + 1) & mask)
        if (a->node_table[k].parent == parent && a->node_table[k].func == func)
            return a->node_table[k].id - 1;
    a->nodes[a->nnodes] = (struct ctx_node){parent, func, NULL};
    a->node_table[k] = (struct node_ref){parent, func, (uint32_t)++a->nnodes};
    return (uint32_t)(a->nnodes - 1);
}

/* The context of every user frame: the path of user functions from the
 * outermost main (or the outermost frame) down to it. */
static void contexts(struct attr *a, const struct ppw_blame_stack *st)
{
    size_t top = st->nframes - 1;
    for (size_t i = st->nframes; i-- > 0;) {
        if (a->func_of[i] >= 0 && a->is_main[a->func_of[i]]) {
            top = i;
            break;
        }
    }
    if (!ppw_array_reserve(&a->prev_ctx_func, &a->prev_ctx_func_cap, st->nframes,
                           sizeof *a->prev_ctx_func) ||
        !ppw_array_reserve(&a->prev_ctx_node, &a->prev_ctx_node_cap, st->nframes,
                           sizeof *a->prev_ctx_node)) {
        a->oom = true;
        return;
    }
    uint32_t node = 0;
    size_t depth = 0;
    bool shared = true; /* the callers so far are the previous stack's */
    for (size_t i = st->nframes; i-- > 0;) {
        if (i <= top && a->func_of[i] >= 0) {
            if (shared && depth < a->prev_ctx_len && a->prev_ctx_func[depth] == a->func_of[i]) {
                node = a->prev_ctx_node[depth];
            } else {
                shared = false;
                node = child_node(a, node, a->func_of[i]);
                a->prev_ctx_func[depth] = a->func_of[i];
                a->prev_ctx_node[depth] = node;
            }
            depth++;
        }
        a->ctx_of[i] = i <= top ? node : 0;
    }
    a->prev_ctx_len = depth;
}

/* The call of f at the location of frame at whose callee is named name or
 * other (any callee when name is NULL) and, when kind is not 0, of that
 * kind; one at the frame's column first. */
const struct ppw_static_call *ppw_attr_find_call(const struct ppw_static_func *f,
                                                 const struct ppw_blame_frame *at, const char *name,
                                                 const char *other, uint32_t kind)
{
    const struct ppw_static_call *line_match = NULL;
    for (size_t i = 0; i < f->call_count; i++) {
        const struct ppw_static_call *c = &f->calls[i];
        bool named = !name || (c->callee[0] && (strcmp(c->callee, name) == 0 ||
                                                (other && strcmp(c->callee, other) == 0)));
        if (c->line != at->line || !named || (kind && c->kind != kind))
            continue;
        if (at->col && c->col == at->col)
            return c;
        if (!line_match)
            line_match = c;
    }
    return line_match;
}

/* ---- one stack ---- */


/* The parallel runtime's code (OpenMP, MPI and their transports), by the
 * names its frames have without a graph. */
static bool runtime_frame(const struct ppw_blame_frame *frame)
{
    static const char *const prefixes[] = {
        "__kmp",
        "kmp_",
        "__ompt",
        "omp_",
        "GOMP_",
        "MPI_",
        "PMPI_",
        "ompi_",
        "opal_",
        "mca_",
        "ucp_",
        "uct_",
        "ucs_",
        "pmix",
        "PMIx",
        "sched_yield",
        "[libomp",
        "[libgomp",
        "[libmpi",
        "[libopen-",
        "[libuc",
        "[libpmix",
        "shmem_",
        "pshmem_",
        "oshmem_",
        "[liboshmem",
        "pthread_barrier",
        "pthread_cond",
        "__futex",
        "futex",
        "__sched_yield",
        "pthread_spin",
    };
    const char *name = frame->function;
    for (size_t i = 0; name && i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* Why stack st, whose leaf user frame is u (n: none), charged nothing. */
static enum ppw_blame_cause cause_of(const struct ppw_blame_stack *st, size_t u)
{
    if (u == st->nframes) {
        for (size_t i = 0; i < st->nframes; i++)
            if (runtime_frame(&st->frames[i]))
                return PPW_CAUSE_RUNTIME;
        return PPW_CAUSE_NO_GRAPH;
    }
    for (size_t i = 0; i < u; i++)
        if (runtime_frame(&st->frames[i]))
            return PPW_CAUSE_RUNTIME;
    if (st->frames[u].line == 0)
        return PPW_CAUSE_LINE0;
    return u > 0 ? PPW_CAUSE_NO_GRAPH : PPW_CAUSE_NO_VARIABLE;
}

/* Whether chain frame k's function is code the compiler made of frame
 * k + 1's source function (an OpenMP body, a task and its entry). */
static bool outlined_from_next(const struct attr *a, size_t k)
{
    const struct ppw_static_call *c = a->done[k + 1].call;
    return (c && (c->kind == PPW_CALL_FORK || c->kind == PPW_CALL_TASK)) ||
           ppw_names_compiler_made(&a->graph->funcs[a->done[k].func]);
}

/* The first chain frame of the outermost frame's source function: the
 * blame point (main, a thread's root) with the bodies outlined from it. */
static size_t outer_run(const struct attr *a)
{
    size_t k = a->ndone ? a->ndone - 1 : 0;
    while (k > 0 && outlined_from_next(a, k - 1))
        k--;
    return k;
}

/* ---- the walk ---- */

static bool access_asked(const struct attr *a)
{
    return a->access;
}

/* The views, in the order they see a stack; enabled NULL: always. */
static const struct {
    ppw_attr_view_fn *stack;
    bool (*enabled)(const struct attr *a);
} views[] = {
    {ppw_attr_blame_stack, NULL},
    {ppw_attr_access_stack, access_asked},
};

static void each_view(struct attr *a, const struct ppw_blame_stack *st, size_t u,
                      enum ppw_blame_cause why)
{
    for (size_t i = 0; i < sizeof views / sizeof views[0] && !a->oom; i++)
        if (!views[i].enabled || views[i].enabled(a))
            views[i].stack(a, st, u, why);
}

/* Walks stack st; false when it has no frame of user code. */
static bool walk_stack(struct attr *a, const struct ppw_blame_stack *st)
{
    size_t n = st->nframes, u = n;
    if (!ppw_array_reserve(&a->func_of, &a->func_of_cap, n, sizeof *a->func_of) ||
        !ppw_array_reserve(&a->ctx_of, &a->ctx_of_cap, n, sizeof *a->ctx_of)) {
        a->oom = true;
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t func = resolve(a, &st->frames[i]);
        a->func_of[i] = func >= 0 && is_user(&a->graph->funcs[func]) ? func : -1;
        if (u == n && a->func_of[i] >= 0)
            u = i;
    }
    if (u == n) {
        each_view(a, st, n, cause_of(st, n));
        return false;
    }
    a->serial++;
    contexts(a, st);
    if (!ppw_attr_chain(a, st, u))
        return true;
    a->outer_run = outer_run(a);
    each_view(a, st, u, cause_of(st, u));
    return true;
}

static void attr_free(struct attr *a)
{
    for (size_t i = 0; a->fs && i < a->graph->func_count; i++)
        fstate_free(&a->fs[i]);
    free(a->fs);
    ppw_strmultimap_free(&a->names);
    ppw_strmap_free(&a->globals);
    for (size_t i = 0; i < a->nslots; i++)
        free(a->slots[i].ctx);
    free(a->slots);
    for (size_t i = 0; i < a->nnodes; i++)
        free(a->nodes[i].counts);
    free(a->nodes);
    free(a->node_table);
    free(a->ctx_table);
    free(a->func_of);
    free(a->ctx_of);
    free(a->prev_ctx_func);
    free(a->prev_ctx_node);
    free(a->is_main);
    free(a->stops);
    free(a->done);
    ppw_attr_datum_free(a);
    ppw_attr_effects_free(a);
    ppw_attr_blame_free(a);
    ppw_attr_access_view_free(a);
}

static bool attr_init(struct attr *a)
{
    const struct ppw_static_graph *g = a->graph;
    if (!(a->fs = calloc(g->func_count ? g->func_count : 1, sizeof *a->fs)) ||
        !(a->is_main = calloc(g->func_count ? g->func_count : 1, sizeof *a->is_main)) ||
        !(a->stops = calloc(g->func_count ? g->func_count : 1, sizeof *a->stops)) ||
        !(a->call_cache = calloc(CALL_CACHE_SLOTS, sizeof *a->call_cache)))
        return false;
    for (size_t i = 0; i < g->func_count; i++) {
        a->is_main[i] = strcmp(g->funcs[i].name, "main") == 0;
        a->stops[i] = a->blame_point ? ppw_static_func_matches(&g->funcs[i], a->blame_point)
                                     : a->is_main[i];
    }
    for (size_t i = 0; i < g->func_count; i++)
        if (!ppw_strmultimap_add(&a->names, g->funcs[i].name, i) ||
            !ppw_strmultimap_add(&a->names, g->funcs[i].linkage_name, i))
            return false;
    a->nnodes = 1; /* node 0: the empty context */
    if (!ppw_array_reserve(&a->nodes, &a->nodes_cap, 1, sizeof *a->nodes))
        return false;
    a->nodes[0] = (struct ctx_node){0, -1, NULL};
    return true;
}

/* Orders stacks by their frames from the outermost: callers first. */
static int compare_callers(const void *x, const void *y)
{
    const struct ppw_blame_stack *a = *(const struct ppw_blame_stack *const *)x;
    const struct ppw_blame_stack *b = *(const struct ppw_blame_stack *const *)y;
    size_t i = a->nframes, j = b->nframes;
    while (i && j) {
        const struct ppw_blame_frame *fa = &a->frames[--i], *fb = &b->frames[--j];
        if (fa->function != fb->function)
            return (uintptr_t)fa->function < (uintptr_t)fb->function ? -1 : 1;
        if (fa->line != fb->line)
            return fa->line < fb->line ? -1 : 1;
    }
    return (i > j) - (i < j);
}

int ppw_blame_attribute(const struct ppw_static_graph *graph, const struct ppw_blame_stack *stacks,
                        size_t nstacks, const struct ppw_blame_options *options,
                        struct ppw_blame_result **out, struct ppw_err *err)
{
    struct attr a = {.graph = graph,
                     .blame_point = options ? options->blame_point : NULL,
                     .temporaries = options && options->temporaries,
                     .access = options && options->access};
    struct ppw_blame_result *r = calloc(1, sizeof *r);
    int rc = 0;
    *out = NULL;
    if (r && (r->arena = ppw_arena_new()))
        a.names_arena = r->arena;
    if (!r || !r->arena || !attr_init(&a)) {
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory attributing samples");
        goto out;
    }
    if (a.blame_point && !ppw_static_graph_find_func(graph, a.blame_point)) {
        rc = ppw_err_set(err, PPW_ENOTFOUND,
                         "blame point: no function named '%s' in the static graphs of %s",
                         a.blame_point, graph->path);
        goto out;
    }
    /* Stacks with the same callers in a row share their contexts. */
    const struct ppw_blame_stack **order = calloc(nstacks ? nstacks : 1, sizeof *order);
    if (!order) {
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory attributing samples");
        goto out;
    }
    for (size_t i = 0; i < nstacks; i++)
        order[i] = &stacks[i];
    qsort(order, nstacks, sizeof *order, compare_callers);
    for (size_t k = 0; k < nstacks && !a.oom; k++) {
        const struct ppw_blame_stack *st = order[k];
        r->total_samples += st->samples;
        r->total_weight += st->weight;
        if (options && options->stack_variable) {
            a.stack_variable = &options->stack_variable[st - stacks];
            a.stack_variable_frame = NULL;
            *a.stack_variable = NULL;
        }
        if (!walk_stack(&a, st) && !a.oom)
            r->unattributed += st->samples;
    }
    free(order);
    r->access_samples = a.access_samples;
    memcpy(r->unblamed, a.unblamed, sizeof r->unblamed);
    memcpy(r->unaccessed, a.unaccessed, sizeof r->unaccessed);
    r->access_weight = a.access_weight;
    r->access_data = true;
    for (size_t i = 0; i < graph->unit_count; i++)
        r->access_data &= graph->units[i].minor >= 1;
    if (a.oom || !ppw_attr_results(&a, r))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory attributing samples");
out:
    attr_free(&a);
    if (rc)
        ppw_blame_result_free(r);
    else
        *out = r;
    return rc;
}

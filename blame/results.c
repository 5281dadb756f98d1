/* The result of attribution (attribute.h): one row per datum, from the
 * slots both views charged, with its name, declaration, kind, aliases
 * and most common calling context. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "attribute_int.h"
#include "names.h"
#include "ppw/static_format.h"
#include "read_graph.h"

static const char *kind_name(uint32_t kind)
{
    static const char *const names[] = {"?",      "local", "parameter", "global",
                                        "static", "field", "return"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

/* Whether node shows as its caller's node: two pieces of one construct. */
static bool same_frame(const struct attr *a, const struct ppw_names *names, uint32_t n)
{
    uint32_t p = a->nodes[n].parent;
    return p && ppw_names_same_frame(names, a->nodes[p].func, a->nodes[n].func);
}

/* "main > solve > step" for node, as names shows them, in the result's arena. */
static const char *context_text(const struct attr *a, const struct ppw_names *names, uint32_t node,
                                struct ppw_arena *arena)
{
    size_t len = 1;
    for (uint32_t n = node; n; n = a->nodes[n].parent)
        if (!same_frame(a, names, n))
            len += strlen(ppw_names_function(names, a->nodes[n].func)) + 3;
    char *text = ppw_arena_alloc(arena, len);
    if (!text)
        return NULL;
    char *end = text + len - 1;
    *end = '\0';
    for (uint32_t n = node; n; n = a->nodes[n].parent) {
        if (same_frame(a, names, n))
            continue;
        const char *name = ppw_names_function(names, a->nodes[n].func);
        size_t l = strlen(name);
        end -= l;
        memcpy(end, name, l);
        if (a->nodes[n].parent) {
            end -= 3;
            memcpy(end, " > ", 3);
        }
    }
    return end;
}

static int compare_vars(const void *x, const void *y)
{
    const struct ppw_blame_var *a = x, *b = y;
    if (a->inclusive != b->inclusive)
        return a->inclusive > b->inclusive ? -1 : 1;
    if (a->exclusive != b->exclusive)
        return a->exclusive > b->exclusive ? -1 : 1;
    int c = strcmp(a->function ? a->function : "", b->function ? b->function : "");
    if (c)
        return c;
    c = strcmp(a->name, b->name);
    if (c)
        return c;
    return strcmp(a->context ? a->context : "", b->context ? b->context : "");
}

/* A variable's declaration line.  A compiler-made copy (an OpenMP loop
 * variable, a task's copy) has none of its own: its construct's, else, in
 * code the compiler made without a line (a taskloop's task), the first
 * line of the variable's blame set. */
static uint32_t decl_line(const struct ppw_static_func *f, const struct ppw_static_var *v)
{
    if (v->decl_line)
        return v->decl_line;
    if (f->line)
        return f->line;
    uint32_t first = 0;
    for (size_t i = 0; i < v->inclusive_count; i++)
        if (v->inclusive[i].line && (!first || v->inclusive[i].line < first))
            first = v->inclusive[i].line;
    return first;
}

/* A copy of s in the result's arena: names' strings die with names. */
static const char *keep(struct ppw_arena *arena, const char *s)
{
    if (!s)
        return NULL;
    size_t len = strlen(s) + 1;
    char *copy = ppw_arena_alloc(arena, len);
    if (copy)
        memcpy(copy, s, len);
    return copy;
}

/* "work() result": a return value no caller receives. */
static const char *result_name(const char *function, struct ppw_arena *arena)
{
    size_t len = strlen(function) + sizeof "() result";
    char *name = ppw_arena_alloc(arena, len);
    if (name)
        snprintf(name, len, "%s() result", function);
    return name;
}

/* Each slot's context with the most samples: the direct counts of the
 * contexts of its function, then the ones counted by slot. */
static void best_contexts(const struct attr *a, uint32_t *best_node, uint64_t *best_samples)
{
    for (size_t n = 1; n < a->nnodes; n++) {
        const struct ctx_node *node = &a->nodes[n];
        if (!node->counts)
            continue;
        const struct fstate *s = &a->fs[node->func];
        for (size_t v = 0; v < a->graph->funcs[node->func].var_count; v++) {
            size_t at = s->slot ? s->slot[v] : 0;
            if (!node->counts[v] || !at || node->counts[v] <= best_samples[at - 1])
                continue;
            best_samples[at - 1] = node->counts[v];
            best_node[at - 1] = (uint32_t)n;
        }
    }
    for (size_t i = 0; i < a->nslots; i++)
        for (size_t k = 0; k < a->slots[i].nctx; k++)
            if (a->slots[i].ctx[k].samples > best_samples[i]) {
                best_samples[i] = a->slots[i].ctx[k].samples;
                best_node[i] = a->slots[i].ctx[k].node;
            }
}

/* A scalar local (a number, an enum) of a function the blame point
 * called: a temporary of the data it computes, which holds its blame
 * (rule 11).  Locals of the outermost function are the program's own. */
static bool is_temporary(const struct slot *slot, const struct ppw_static_var *v)
{
    return !slot->path[0] && v->kind == PPW_VAR_LOCAL && (v->flags & PPW_VAR_SCALAR) &&
           !slot->outermost;
}

bool ppw_attr_results(const struct attr *a, struct ppw_blame_result *r)
{
    struct ppw_names *names = NULL;
    struct ppw_err err;
    if (a->nslots && !(r->vars = ppw_arena_calloc(r->arena, a->nslots, sizeof *r->vars)))
        return false;
    if (a->nslots && ppw_names_new(a->graph, &names, &err) != 0)
        return false;
    uint32_t *best_node = calloc(a->nslots + 1, sizeof *best_node);
    uint64_t *best_samples = calloc(a->nslots + 1, sizeof *best_samples);
    if (!best_node || !best_samples) {
        free(best_node);
        free(best_samples);
        ppw_names_free(names);
        return false;
    }
    best_contexts(a, best_node, best_samples);
    bool ok = true;
    for (size_t i = 0; i < a->nslots; i++) {
        const struct slot *slot = &a->slots[i];
        const struct ppw_static_func *f = &a->graph->funcs[slot->func];
        const struct ppw_static_var *v = &f->vars[slot->var];
        if (!slot->incl && !slot->acc_read && !slot->acc_write)
            continue;
        if (!a->temporaries && is_temporary(slot, v)) {
            r->temporaries++;
            continue;
        }
        struct ppw_blame_var *out = &r->vars[r->nvars++];
        *out = (struct ppw_blame_var){
            .name = slot->name,
            .function = v->kind == PPW_VAR_GLOBAL
                            ? NULL
                            : keep(r->arena, ppw_names_source(names, slot->func)),
            .function_key = v->kind == PPW_VAR_GLOBAL ? NULL : f->linkage_name,
            .kind = kind_name(slot->path[0] ? PPW_VAR_FIELD : v->kind),
            .type = slot->type,
            .decl_file = v->decl_file[0] ? v->decl_file : f->file,
            .decl_line = decl_line(f, v),
            .inclusive = slot->incl,
            .exclusive = slot->excl,
            .inclusive_weight = slot->incl_w,
            .exclusive_weight = slot->excl_w,
            .access_read = slot->acc_read,
            .access_write = slot->acc_write,
            .access_read_weight = slot->acc_read_w,
            .access_write_weight = slot->acc_write_w,
        };
        if (v->kind == PPW_VAR_RETURN &&
            !(out->name = result_name(ppw_names_source(names, slot->func), r->arena))) {
            ok = false;
            break;
        }
        if (slot->naliases) {
            struct ppw_blame_alias *aliases =
                ppw_arena_calloc(r->arena, slot->naliases, sizeof *aliases);
            if (!aliases) {
                ok = false;
                break;
            }
            for (size_t k = 0; k < slot->naliases; k++) {
                const struct ppw_static_func *af = &a->graph->funcs[slot->alias_func[k]];
                aliases[k] = (struct ppw_blame_alias){
                    af->vars[slot->alias_var[k]].name,
                    keep(r->arena, ppw_names_function(names, slot->alias_func[k]))};
                if (!aliases[k].function)
                    ok = false;
            }
            out->aliases = aliases;
            out->naliases = slot->naliases;
        }
        if (best_samples[i] && !(out->context = context_text(a, names, best_node[i], r->arena))) {
            ok = false;
            break;
        }
        if (!slot->global && (!out->context || !out->context[0]))
            /* only the access view reached it */
            out->context = keep(r->arena, ppw_names_function(names, slot->func));
    }
    free(best_node);
    free(best_samples);
    ppw_names_free(names);
    if (ok && r->nvars)
        qsort(r->vars, r->nvars, sizeof *r->vars, compare_vars);
    return ok;
}

void ppw_blame_result_free(struct ppw_blame_result *result)
{
    if (!result)
        return;
    ppw_arena_free(result->arena);
    free(result);
}

/* The calling-context tree (calltree.h). */
#include "calltree.h"

#include <stdlib.h>

#include "error.h"
#include "view.h"

static size_t child(struct calltree *t, size_t parent, const struct ppw_blame_frame *frame,
                    const struct ppw_blame_frame *caller)
{
    const char *file = caller ? caller->file : NULL;
    uint32_t line = caller ? caller->line : 0;
    size_t *link = &t->nodes[parent].first_child;
    for (size_t k = *link; k; k = t->nodes[k].next_sibling) {
        const struct calltree_node *n = &t->nodes[k];
        /* names are interned by the stack set: pointers compare */
        if (n->function == frame->function && n->file == file && n->line == line)
            return k;
        link = &t->nodes[k].next_sibling;
    }
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        struct calltree_node *nodes = realloc(t->nodes, cap * sizeof *nodes);
        if (!nodes)
            return 0;
        t->nodes = nodes;
        t->cap = cap;
        link = NULL; /* the nodes moved: find the end of the list again */
    }
    size_t k = t->count++;
    t->nodes[k] = (struct calltree_node){frame->function, file, line, parent, 0, 0, 0, 0, 0, 0};
    if (!link)
        for (link = &t->nodes[parent].first_child; *link; link = &t->nodes[*link].next_sibling)
            ;
    *link = k;
    return k;
}

int calltree_build(struct calltree *t, const struct ppw_blame_stack *stacks, size_t nstacks)
{
    t->count = 1;
    if (!(t->nodes = calloc(1, sizeof *t->nodes)))
        return PPW_ENOMEM;
    t->cap = 1;
    for (size_t s = 0; s < nstacks; s++) {
        const struct ppw_blame_stack *st = &stacks[s];
        size_t node = 0, top = st->nframes ? view_top_frame(st) : 0;
        for (size_t i = st->nframes ? top + 1 : 0; i-- > 0;) {
            node = child(t, node, &st->frames[i], i == top ? NULL : &st->frames[i + 1]);
            if (!node)
                return PPW_ENOMEM;
            t->nodes[node].samples += st->samples;
            t->nodes[node].weight += st->weight;
        }
        t->nodes[node].self += st->samples;
        t->nodes[node].self_weight += st->weight;
    }
    return 0;
}

void calltree_free(struct calltree *t)
{
    free(t->nodes);
    *t = (struct calltree){0};
}

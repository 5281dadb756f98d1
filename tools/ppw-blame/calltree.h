/* The calling-context tree of a view's stacks (code, html): from main (or
 * a stack's root), each function under its caller's context, keyed by the
 * call site (the caller's file and line). */
#ifndef PPW_BLAME_CALLTREE_H
#define PPW_BLAME_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "attribute.h"

/* A calling context: a function called from its parent's context at line. */
struct calltree_node {
    const char *function, *file; /* file and line: the call site in the parent */
    uint32_t line;
    size_t parent, first_child, next_sibling; /* indices; 0: none (node 0 is the root) */
    uint64_t samples, self;
    double weight, self_weight;
};

struct calltree {
    struct calltree_node *nodes; /* nodes[0] is the root */
    size_t count, cap;
};

/* Builds the tree of stacks (each from view_top_frame down); PPW_ENOMEM. */
int calltree_build(struct calltree *t, const struct ppw_blame_stack *stacks, size_t n);
void calltree_free(struct calltree *t);

#endif

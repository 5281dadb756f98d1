/* A set of unique weighted stacks (attribute.h's struct ppw_blame_stack),
 * filled from folded files (folded.h) or glued runs (glue.h).  Adding a
 * stack equal to one already in the set adds its samples and weight, so
 * attribution works on unique stacks.  The set owns the frames and every
 * string, interned so that equal names are equal pointers. */
#ifndef PPW_BLAME_STACKS_H
#define PPW_BLAME_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "error.h"

struct ppw_stack_set;

int ppw_stack_set_new(struct ppw_stack_set **out, struct ppw_err *err);
void ppw_stack_set_free(struct ppw_stack_set *set);

/* The set's copy of s (NULL for NULL); NULL when out of memory. */
const char *ppw_stack_set_intern(struct ppw_stack_set *set, const char *s);

/* From now on, equal stacks of different threads stay apart (each keeps
 * its thread), so that a view can select or compare threads.  Call before
 * the first ppw_stack_set_add. */
void ppw_stack_set_split_threads(struct ppw_stack_set *set);

/* Adds frames[0..n) (innermost first), whose strings the set interned.
 * thread: the thread of the samples; a stack merged from several threads
 * keeps UINT32_MAX.  Errors: PPW_ENOMEM. */
int ppw_stack_set_add(struct ppw_stack_set *set, const struct ppw_blame_frame *frames, size_t n,
                      uint64_t samples, double weight, uint32_t thread, struct ppw_err *err);

/* Adds a stack of another set (its strings interned in this one), with
 * its samples and weight, as thread's.  Errors: PPW_ENOMEM. */
int ppw_stack_set_add_copy(struct ppw_stack_set *set, const struct ppw_blame_stack *stack,
                           uint32_t thread, struct ppw_err *err);

/* The unique stacks, in the order they were first added. */
const struct ppw_blame_stack *ppw_stack_set_stacks(const struct ppw_stack_set *set,
                                                   size_t *count);

/* Sums over every stack added. */
uint64_t ppw_stack_set_samples(const struct ppw_stack_set *set);
double ppw_stack_set_weight(const struct ppw_stack_set *set);

#endif

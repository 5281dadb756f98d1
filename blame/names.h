/* Source names for everything a user reads (docs/ppw-blame.md, "Names").
 *
 * The compiler outlines OpenMP constructs into functions of its own
 * (main.omp_outlined, main.omp_outlined_debug__.43, .omp_outlined.,
 * .omp_task_entry., ...omp.reduction.reduction_func); a user wrote none of
 * them.  Each such function is shown as the source function it came from
 * and the construct: "conj_grad [omp parallel for, cg.c:405]".  Frames of
 * one construct that follow each other (a wrapper and its _debug__ twin, a
 * task entry and its task body) are one frame.  user_stacks.h builds on
 * these names.  Attribution keeps the linkage names. */
#ifndef PPW_BLAME_NAMES_H
#define PPW_BLAME_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "error.h"

struct ppw_static_func;
struct ppw_static_graph;
struct ppw_names;

/* The names of graph's functions (graph must outlive them).  Errors:
 * PPW_ENOMEM. */
int ppw_names_new(const struct ppw_static_graph *graph, struct ppw_names **out,
                  struct ppw_err *err);
void ppw_names_free(struct ppw_names *names);

/* Function func (an index into graph->funcs) as shown: its source name, or
 * for OpenMP outlined code "SOURCE [CONSTRUCT, FILE:LINE]". */
const char *ppw_names_function(const struct ppw_names *names, size_t func);

/* The source function func was written in: its name, or for outlined code
 * the function it was outlined from ("conj_grad"). */
const char *ppw_names_source(const struct ppw_names *names, size_t func);

/* Whether inner, called from outer, is shown as the same frame: two pieces
 * of one OpenMP construct (a wrapper and its _debug__ twin, a task entry and
 * its body). */
/* Paths name the same file when equal, when either is unknown (NULL), or
 * when one ends with "/" + the other. */
bool ppw_names_same_file(const char *a, const char *b);
/* Code the compiler made of a source function: an OpenMP parallel or task
 * body, a task entry, an offloaded region. */
bool ppw_names_compiler_made(const struct ppw_static_func *f);
bool ppw_names_same_frame(const struct ppw_names *names, size_t outer, size_t inner);

/* A frame's function as shown (ppw_names_function for a function of the
 * graph, else the frame's own name; NULL when it has none). */
const char *ppw_names_frame(const struct ppw_names *names, const struct ppw_blame_frame *frame);

/* A function named by a run without its binary (a GASP region, defined in
 * file at line): as names shows it (names may be NULL); else, for code the
 * compiler made, "SOURCE [omp CONSTRUCT, FILE:LINE]" read from the name
 * alone (main.omp_outlined is "main [omp parallel, FILE:LINE]", without
 * the "for" that only the graph tells); else name itself.  The result is
 * name, a string of names, or buf. */
const char *ppw_names_region(const struct ppw_names *names, const char *name, const char *file,
                             uint32_t line, char *buf, size_t size);

/* Whether a name shown is a function of the program with a blame graph
 * (possibly a construct). */
bool ppw_names_has_graph(const struct ppw_names *names, const char *shown);

/* The function of the graph a frame is in (the one in the frame's file
 * when several have its name), or -1; remembered by the frame's function
 * and file pointers, which a stack set interns. */
int64_t ppw_names_find(struct ppw_names *names, const struct ppw_blame_frame *frame);

/* The graph names was made for. */
const struct ppw_static_graph *ppw_names_graph(const struct ppw_names *names);

/* Whether func is a piece of an OpenMP construct. */
bool ppw_names_construct(const struct ppw_names *names, size_t func);

/* s interned with the names shown, so that equal names are equal
 * pointers; it lives as long as names.  NULL when out of memory. */
const char *ppw_names_intern(struct ppw_names *names, const char *s);

#endif

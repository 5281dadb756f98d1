/* Blame attribution (seed 002 §4.1.4-4.1.6): weighted, glued stacks of
 * source frames in, inclusive and exclusive blame per variable out.
 *
 * A stack's frames are innermost first.  frames[0] is the sampled location
 * in the leaf function; every other frame is the call site, in its
 * function, of the frame before it.  Frames of code without a blame graph
 * (libc, libomp...) may appear: they are charged to the nearest user frame's
 * call site through the library table (ppw/libcalls.h).  Identical stacks
 * should be merged by the caller (weights add), so that the cost of
 * attribution grows with unique stacks, not samples. */
#ifndef PPW_BLAME_ATTRIBUTE_H
#define PPW_BLAME_ATTRIBUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ppw_static_graph;

struct ppw_blame_frame {
    const char *function; /* linkage or source name as the static graph knows it; NULL: unknown */
    const char *file;     /* NULL when unknown */
    uint32_t line, col;   /* 0 when unknown; col 0 matches any column on the line */
    const char *module;   /* its module's path; NULL when unknown (folded stacks) */
    uint32_t origin;      /* enum ppw_frame_origin (user_stacks.h): whose code it is; 0 unknown */
};

struct ppw_blame_stack {
    const struct ppw_blame_frame *frames;
    size_t nframes;
    uint64_t samples; /* samples merged into this stack */
    double weight;    /* their metric total (seconds, or cycles) */
    uint32_t thread;
};

struct ppw_blame_options {
    const char *blame_point;     /* stop propagating at this function (its variables are blamed,
                                    its callers' are not); NULL: main, and thread roots */
    const char **stack_variable; /* when set, an array of nstacks filled with each stack's
                                    variable: the first one blamed exclusively in the
                                    outermost frame that blames one (up to the blame point),
                                    the data as the caller sees it; NULL when none is.  The
                                    names point into the graph */
    bool access;                 /* also the access view (access_* in the variables) */
    bool temporaries;            /* also list the scalar locals of called functions (rule 11:
                                    by default their blame is shown on the data they compute) */
};

/* Another name a datum was blamed as: a parameter bound to it, an OpenMP
 * copy of it. */
struct ppw_blame_alias {
    const char *name;
    const char *function;
};

/* One blamed variable.  inclusive/exclusive are sample counts (weights in
 * *_weight); percentages are the caller's business (of total samples). */
struct ppw_blame_var {
    const char *name;     /* access path for fields: grid.cells[].energy */
    const char *function; /* declaring function as the source names it; NULL for globals */
    const char *kind;     /* local, parameter, global, static, field, return */
    const char *type;
    const char *decl_file;
    uint32_t decl_line;
    /* the declaring function's linkage name, which tells the variables of
     * outlined code from those of its source function apart: to match
     * results */
    const char *function_key;
    const char *context; /* the declaring function's path from main: "main > solve > step",
                            the one most of its samples came through; NULL for globals and
                            statics (program-level) */
    uint64_t inclusive, exclusive;
    double inclusive_weight, exclusive_weight;
    /* Access view (options->access): the samples, split among the variables
     * accessed at their location by number of accesses, that read and that
     * write this variable.  Fractional; they add up to access_samples. */
    double access_read, access_write;
    double access_read_weight, access_write_weight;
    const struct ppw_blame_alias *aliases; /* the names it was seen as in callees */
    size_t naliases;
};

struct ppw_arena;

/* Why a sample charges no variable. */
enum ppw_blame_cause {
    PPW_CAUSE_RUNTIME,     /* waiting or working in the parallel runtime (libomp, MPI) */
    PPW_CAUSE_NO_GRAPH,    /* in code without a blame graph (libc, start-up, ppw) */
    PPW_CAUSE_LINE0,       /* at an address the line table gives line 0 */
    PPW_CAUSE_NO_VARIABLE, /* at a line no variable's set holds (no access, for the access view) */
};

/* vars are sorted by inclusive blame, then exclusive, function and name.
 * Strings point into the static graph (which must outlive the result) or
 * into the result's arena (context). */
struct ppw_blame_result {
    struct ppw_blame_var *vars;
    size_t nvars;
    uint64_t total_samples;
    double total_weight;
    uint64_t unattributed; /* samples of stacks without any frame of a function with a graph */
    /* The samples that blame no variable (unblamed) and the share of the
     * samples the access view charges to none (unaccessed), by cause
     * (enum ppw_blame_cause; docs/ppw-blame.md, "What is not attributed"). */
    uint64_t unblamed[4];
    size_t temporaries; /* rows not listed: scalar locals of called functions (rule 11) */
    double unaccessed[4];
    /* Access view: the samples (and weight) charged to some variable; the
     * rest sampled locations that access none.  access_data is false when a
     * unit's graph predates format 1.1 (no access records). */
    double access_samples, access_weight;
    bool access_data;
    struct ppw_arena *arena;
};

/* Attributes every stack (seed 002 §4.1.4-4.1.6; docs/ppw-blame.md,
 * "Attribution").  Errors: PPW_ENOTFOUND (no function is named
 * options->blame_point), PPW_ENOMEM. */
int ppw_blame_attribute(const struct ppw_static_graph *graph, const struct ppw_blame_stack *stacks,
                        size_t nstacks, const struct ppw_blame_options *options,
                        struct ppw_blame_result **out, struct ppw_err *err);
void ppw_blame_result_free(struct ppw_blame_result *result);

#endif

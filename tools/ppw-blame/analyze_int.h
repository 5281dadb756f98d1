/* What the files of ppw-blame analyze's engine share (analyze.c: inputs,
 * waits, frequency, Coven, scaling, the whole; analyze_balance.c:
 * imbalance; analyze_cause.c: cause analysis in the trace). */
#ifndef PPW_BLAME_ANALYZE_INT_H
#define PPW_BLAME_ANALYZE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze.h"
#include "read_run.h"
#include "view.h"

struct ppw_symbols;

/* One process: a run directory, or one rank of a job. */
struct unit {
    struct ppw_run *run;
    struct ppw_symbols *syms;
    uint32_t rank; /* 0 for a plain run */
};

struct loaded {
    struct unit *units;
    size_t nunits;
    bool job;
    struct view_input view; /* glued stacks and the static graph */
    bool has_view;
};

enum { SITE_GROUPS = 256 }; /* groups named in the evidence; more are summed but not named */

/* Waits at one operation site (or on one lock variable) over all threads
 * and ranks. */
struct site {
    enum analyze_pattern pattern;
    const struct ppw_run_region *region; /* the site with the most wait */
    char variable[128];
    double wait_ns, best_wait_ns, expected_ns;
    uint64_t calls;
    /* Waits per group (thread or rank), for the evidence. */
    uint32_t group_ids[SITE_GROUPS];
    double group_waits[SITE_GROUPS];
    unsigned groups;
};

struct engine {
    const struct analyze_thresholds *t;
    const struct ppw_baseline *b;
    struct loaded *in;
    struct site *sites;
    size_t nsites;
    struct analyze_result *out;
    size_t cap;
    double explained_ns[PATTERN_COUNT]; /* wait found per pattern */
    double thread_ns;                   /* the thread- or rank-seconds of the run */
};

/* A group compared for imbalance: a thread, or a rank. */
struct group_load {
    uint32_t id;
    double cpu_ns, life_ns;
};

static inline double ns_to_s(double ns) { return ns * 1e-9; }

void setf(char *dst, size_t size, const char *fmt, ...) PPW_PRINTF(3, 4);
double run_wall_ns(const struct ppw_run *run);
double thread_cpu_ns(const struct ppw_run *run, const struct ppw_run_thread *t);
double thread_life_ns(const struct ppw_run *run, const struct ppw_run_thread *t);
void region_on_thread(const struct ppw_run_thread *t, uint32_t id, double *ns, uint64_t *calls);
bool is_mpi_tag(uint32_t tag);
struct analyze_finding *new_finding(struct engine *e, enum analyze_pattern p, double lost_ns,
                                    struct ppw_err *err);
/* The wait every finding so far explains. */
double explained_waits(const struct engine *e);

/* analyze_balance.c */
size_t collect_groups(const struct loaded *in, struct group_load *g, size_t cap);
int find_imbalance(struct engine *e, struct ppw_err *err);

/* analyze_cause.c */
void find_causes(struct engine *e);

#endif

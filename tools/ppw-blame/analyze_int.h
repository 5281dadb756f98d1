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
    /* A job's ranks are loaded with each thread's samples merged by
     * stack (ppw_run_load_merged), so that memory grows with the ranks'
     * stacks, not their samples; the samples' times are then not here,
     * and cause analysis reads the one rank it needs again. */
    bool merged;
};

struct loaded {
    struct unit *units;
    size_t nunits, units_cap;
    bool job;
    struct view_input view; /* glued stacks and the static graph */
    bool has_view;
};

/* Dense numbers 0, 1, ... for sparse keys (thread ids, ranks, threads of
 * units, regions): the engine's sums per key are arrays indexed by them,
 * filled in one pass over the waits or stacks, so that a question per
 * thread or rank costs a lookup, not a pass (a pass per rank made
 * analyze quadratic in the ranks). */
struct key_index {
    struct key_slot *slots;
    size_t cap, count;
};
/* The key's number, a new one (count - 1) when it was absent, *added says
 * which (added may be NULL); SIZE_MAX when out of memory. */
size_t key_index_add(struct key_index *ix, uint64_t key, bool *added);
/* The key's number, or SIZE_MAX when absent. */
size_t key_index_find(const struct key_index *ix, uint64_t key);
void key_index_free(struct key_index *ix);

/* Per-key sums of doubles: key_sums_add adds in call order, so a sum is
 * the one a pass over the items in that order would give. */
struct key_sums {
    struct key_index keys;
    double *sums; /* by the keys' numbers */
    size_t cap;
};
bool key_sums_add(struct key_sums *ks, uint64_t key, double value);
double key_sums_get(const struct key_sums *ks, uint64_t key); /* 0 when absent */
void key_sums_free(struct key_sums *ks);

enum { SITE_GROUPS = 256 }; /* groups named in the evidence; more are summed but not named */

/* One thread's wait at a site, beyond the baseline. */
struct site_wait {
    const struct ppw_run_region *region; /* the unit's region it waited in */
    uint32_t unit, thread; /* the unit's index in struct loaded, the thread's in its run */
    uint32_t group;        /* the thread's index, or in a job its rank */
    double wait_ns;
    double variance_ns2;   /* of wait_ns, the sum of its calls' times */
    /* settle_site_waits: what the thread did outside its waits, its wait
     * for a CPU; the parts of wait_ns the machine made, and that do not
     * stand out from balanced partners' noise */
    double progress_ns, runqueue_ns, machine_ns, noise_ns;
};

/* Waits at one operation site (or on one lock variable) over all threads
 * and ranks. */
struct site {
    enum analyze_pattern pattern;
    const struct ppw_run_region *region; /* the site with the most wait */
    char variable[128];
    struct site_wait *waits;
    size_t nwaits, waits_cap;
    /* settle_site_waits: the program's waits, the machine's, and noise */
    double wait_ns, machine_ns, noise_ns;
    double best_wait_ns, expected_ns;
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
    double waits_machine_ns; /* the machine's part of the waits found (partners ready, no CPU) */
    double explained_comm_ns; /* time in MPI calls at the sites the findings over --min-loss
                                 name, whole */
    bool *waiting; /* settle_site_waits: per view stack, taken inside a waiting call */
    /* settle_site_waits: the samples of the view's stacks, all and those
     * taken waiting, per stack thread id and (in a job) per rank */
    struct key_sums thread_samples, thread_waited, rank_samples, rank_waited;
    /* settle_site_waits: the waits' machine part per group and per region */
    struct key_sums machine_by_group, machine_by_region;
    double thread_ns; /* the thread- or rank-seconds of the run at the machine's pace (what
                         percentages refer to) */
    /* find_get_latency: the completions that waited for a get issued just
     * before, by (unit, thread, completing region), which the one-sided
     * sync and window lock waits leave out */
    struct get_wait *get_waits;
    size_t nget_waits;
};

struct get_wait {
    uint32_t unit, thread, region;
    double ns;
};

/* A group compared for imbalance: a thread, or a rank. */
struct group_load {
    uint32_t id;
    double cpu_ns, life_ns;
    double runqueue_ns; /* of its life, ready but waiting for a CPU (0: not recorded) */
    double machine_wait_ns; /* of its waits, those the machine made (settle_site_waits) */
};

static inline double ns_to_s(double ns) { return ns * 1e-9; }

void setf(char *dst, size_t size, const char *fmt, ...) PPW_PRINTF(3, 4);
double run_wall_ns(const struct ppw_run *run);
double thread_cpu_ns(const struct ppw_run *run, const struct ppw_run_thread *t);
double thread_life_ns(const struct ppw_run *run, const struct ppw_run_thread *t);
void region_on_thread(const struct ppw_run_thread *t, uint32_t id, double *ns, uint64_t *calls);
/* The variance of the sum of region id's call times on thread t (ns^2). */
double region_variance_on_thread(const struct ppw_run_thread *t, uint32_t id);
/* The inclusive wall time of thread t (NULL: none) in the regions that match. */
double time_in_regions(const struct ppw_run *run, const struct ppw_run_thread *t,
                       bool (*match)(const struct ppw_run_region *g));
/* Whether a tag is communication between processes: MPI or OpenSHMEM. */
bool is_process_comm_tag(uint32_t tag);
struct analyze_finding *new_finding(struct engine *e, enum analyze_pattern p, double lost_ns,
                                    struct ppw_err *err);
/* The wait every finding so far explains. */
double explained_waits(const struct engine *e);

/* analyze_balance.c */
/* The groups compared (malloc'ed, *n of them); NULL when out of memory. */
struct group_load *collect_groups(const struct loaded *in, size_t *n);
int find_imbalance(struct engine *e, struct ppw_err *err);

/* analyze_noise.c: the waits the machine makes, not the program */
bool arrival_skew_pattern(enum analyze_pattern p);
/* A thread's time ready but waiting for a CPU (0 when not recorded); in
 * joins (pthread_join, and unless pthread_only taskwait, which runs tasks). */
double thread_runqueue_ns(const struct ppw_run_thread *t);
double thread_join_ns(const struct ppw_run *run, const struct ppw_run_thread *t, bool pthread_only);
/* The share of a CPU the run's threads got while ready: CPU time over CPU
 * time plus run-queue wait (1 on an idle machine). */
double run_pace(const struct ppw_run *run);
/* Each site's waits split into the program's and the machine's. */
int settle_site_waits(struct engine *e, struct ppw_err *err);
/* The waits of thread or rank `group` that the machine made. */
double machine_waits_of(const struct engine *e, uint32_t group);
/* The share of thread or rank `group`'s samples taken inside waiting calls
 * (a spinning wait burns CPU that is not work). */
double waiting_share(const struct engine *e, uint32_t group);
/* The waits in region g (of one unit) that the machine made. */
double machine_wait_at(const struct engine *e, const struct ppw_run_region *g);

/* analyze_cause.c */
/* With a trace, writes each wait finding's cause: the party that ended
 * most of its longest waits, and what that party was doing.  0, or an
 * error (out of memory). */
int find_causes(struct engine *e, struct ppw_err *err);

#endif

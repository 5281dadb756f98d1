/* ppw-blame analyze: automatic bottleneck detection over a run or a job
 * (PPW's analysis, seed 000 chapter 5; Coven's rules, seed 004), the
 * engine that cmd_analyze.c drives and prints.
 *
 * Detection runs three filters over the GASP profile of every thread and
 * rank (wall-clock times of the synchronization and communication calls),
 * the samples (CPU time per thread, function and variable) and, where the
 * run has one, the trace:
 *   - hotspot: functions with at least hotspot_pct of the samples (listed,
 *     not findings: being hot is not a fault);
 *   - deviation: max/avg and min/avg across threads or ranks;
 *   - baseline: the mean cost of a barrier, lock, condition wait or message
 *     against what it costs on this machine (ppw-blame calibrate), so that
 *     the excess is waiting, not work.
 * Findings name a pattern, where it is, the time it loses, the evidence and
 * the resolution hint, and are ordered by time lost.  The time one finding
 * explains (a barrier wait) is not counted again by a broader one (low CPU
 * utilisation). */
#ifndef PPW_BLAME_ANALYZE_H
#define PPW_BLAME_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baseline.h"
#include "error.h"

/* Every threshold, with its command-line option (docs/ppw-blame.md). */
struct analyze_thresholds {
    double hotspot_pct;   /* --hotspot: a function with this % of the samples is a hotspot (10) */
    double deviation;     /* --deviation: max/avg across threads or ranks that is imbalance (1.3) */
    double baseline_factor; /* --baseline-factor: mean cost above factor x baseline waits (4) */
    double min_loss_pct;  /* --min-loss: findings losing less than this % of the run are
                             dropped (5) */
    uint64_t many_calls;  /* --many-calls: transfers per call site that are "many" (10000) */
    double small_factor;  /* --small-factor: a transfer costing under factor x latency is
                             small (20) */
    double cpu_util_pct;  /* --cpu-util: Coven: a CPU utilisation at or below it (50) */
    double busy_diff_pct; /* --busy-diff: Coven: busy-fraction difference above it (35) */
    double comm_pct;      /* --comm: Coven: time in communication above it (5) */
    double efficiency;    /* --efficiency: parallel efficiency below it scales poorly (0.7) */
};

void analyze_default_thresholds(struct analyze_thresholds *t);

enum analyze_pattern {
    PATTERN_BARRIER_WAIT,     /* wait at barrier / group synchronization */
    PATTERN_LOCK_CONTENTION,
    PATTERN_CONDITION_WAIT,   /* condition variable or flag waits */
    PATTERN_LATE_SENDER,      /* a receive waits for a send posted late */
    PATTERN_LATE_RECEIVER,    /* a (synchronous) send waits for a receive posted late */
    PATTERN_COLLECTIVE_WAIT,  /* a collective waits for the last rank to join */
    PATTERN_SMALL_TRANSFERS,  /* many small messages (frequency analysis) */
    PATTERN_IMBALANCE,        /* load imbalance: threads/ranks, region, variable */
    PATTERN_POOR_SCALING,     /* parallel efficiency across runs */
    PATTERN_LOW_UTILISATION,  /* Coven: CPU utilisation <= 50% */
    PATTERN_BUSY_DIFFERENCE,  /* Coven: busy fractions differ by > 35% */
    PATTERN_COMMUNICATION,    /* Coven: > 5% of the time communicating */
    PATTERN_SMALL_ONE_SIDED,  /* many small puts or gets (frequency analysis) */
    PATTERN_ONE_SIDED_SYNC,   /* waits in fences, flushes, epochs */
    PATTERN_WINDOW_LOCK,      /* contention for an MPI window lock */
    PATTERN_GET_LATENCY,      /* a get completed at once: its latency on the critical path */
    PATTERN_COUNT
};

/* The pattern's name ("barrier-wait", ...), title and resolution hint. */
const char *analyze_pattern_name(enum analyze_pattern p);
const char *analyze_pattern_title(enum analyze_pattern p);
const char *analyze_pattern_hint(enum analyze_pattern p);

struct analyze_finding {
    enum analyze_pattern pattern;
    double lost_s;            /* estimated time lost, thread- (or rank-) seconds */
    double lost_pct;          /* of the run's thread-seconds */
    char region[128];         /* the function or operation ("" when none) */
    char file[256];           /* "" when unknown */
    uint32_t line, col;
    char variable[128];       /* the data involved ("" when none) */
    char evidence[768];       /* numbers that show it, one line */
    char cause[384];          /* trace/sample cause analysis ("" when none) */
};

struct analyze_hotspot {
    char function[128];
    double pct;
    uint64_t samples;
};

/* One analysed input: a run or a job directory. */
struct analyze_input {
    const char *dir;
    const char *binary; /* NULL: the run's own */
    bool force;
};

struct analyze_result {
    struct analyze_finding *findings; /* by lost_s, descending */
    size_t nfindings;
    size_t dropped;                   /* findings under min_loss_pct */
    struct analyze_hotspot *hotspots;
    size_t nhotspots;
    double run_s;                     /* the run's wall time (of the first input) */
    double thread_s;                  /* thread- or rank-seconds the losses compare to */
    unsigned groups;                  /* threads or ranks compared */
    bool job;                         /* an MPI job: groups are ranks */
    bool has_trace;
    const char *baseline_source;      /* the baseline file, or "built-in defaults" */
    struct ppw_baseline baseline;
    char scaling[512];                /* several inputs: "p=1: 2.1 s, p=2: 1.3 s (E 0.81)" */
};

/* Analyses inputs[0] (and, with n > 1, the scalability across all of
 * them, ordered by their thread or rank counts).  baseline: NULL for the
 * built-in defaults.  Errors: those of loading the runs, PPW_ENOMEM. */
int analyze_run(const struct analyze_input *inputs, size_t n, const struct analyze_thresholds *t,
                const struct ppw_baseline *baseline, const char *baseline_source,
                struct analyze_result *out, struct ppw_err *err);

void analyze_result_free(struct analyze_result *r);

#endif

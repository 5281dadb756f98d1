/* The cost of measuring a run: what its probes and its sampler added, per
 * region and in all (seed 001: calibrate, compensate, and always report
 * the intrusion).  Also the one implementation of probe compensation
 * (docs/FORMATS.md, "Compensation") that ppw-blame profile shares.
 *
 * Probe costs come from the run's calibration record (docs/runtime.md,
 * "Probe-cost calibration and compensation"); the sampler's from the
 * samples files' handler_ns, else samples x the calibrated handler cost. */
#ifndef PPW_BLAME_INTRUSION_H
#define PPW_BLAME_INTRUSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "read_run.h"

/* The default of ppw_intrusion_compute's flag_ratio: a region is flagged
 * when its probes cost at least half its compensated body per call.  Then
 * the measured time is at least 1.5x the body, and the 15-30% of a pair's
 * cost that no probe window sees in deep call chains (docs/runtime.md,
 * "In-situ probe cost") moves the compensated time by 5% or more. */
#define PPW_INTRUSION_FLAG_RATIO 0.5

/* Adds t's counts and sums (count, subcalls, inclusive and exclusive sums,
 * the sum of squares, the four probe counts, bytes) to sum; leaves depth,
 * path, minimum, maximum and flags alone. */
void ppw_intrusion_add_timer(struct ppw_run_timer *sum, const struct ppw_run_timer *t);

/* Where a thread's probe costs come from. */
enum ppw_probe_cost_source {
    PPW_COST_NONE,       /* the run has no calibration: every cost is 0 */
    PPW_COST_CALIBRATED, /* the CALIB record's, measured at start-up */
    PPW_COST_IN_SITU,    /* corrected by the thread's own probe windows */
};

/* Fewer windows of a kind than this and the calibrated cost is used: a
 * mean over fewer is too easily moved by one cache miss. */
#define PPW_PROBE_WINDOWS_MIN 50

/* What one probe pair cost on one thread (docs/runtime.md, "In-situ probe
 * cost"). */
struct ppw_probe_costs {
    double pair_ns, inner_ns, throttled_pair_ns;
    enum ppw_probe_cost_source source;           /* of pair_ns and inner_ns */
    enum ppw_probe_cost_source throttled_source; /* of throttled_pair_ns */
    uint64_t windows;                            /* the thread's windows, all kinds */
};

/* Thread th's probe costs: the calibration's, each corrected by how much
 * the thread's windows of that kind exceed (or fall short of) the
 * calibration's when there are PPW_PROBE_WINDOWS_MIN of them. */
void ppw_intrusion_probe_costs(const struct ppw_run *run, const struct ppw_run_thread *th,
                               struct ppw_probe_costs *out);

/* Compensated inclusive and exclusive time of a timer (or of timers of one
 * thread summed by ppw_intrusion_add_timer: the formulas are linear),
 * before clamping: either may be negative when the costs overestimate the
 * probes. */
void ppw_intrusion_compensate(const struct ppw_probe_costs *costs, const struct ppw_run_timer *t,
                              double *incl_ns, double *excl_ns);

/* Where ppw_intrusion.run_ns comes from, best first. */
enum ppw_intrusion_span {
    PPW_SPAN_NONE,       /* nothing to go by: run_ns is 0 */
    PPW_SPAN_FINISH,     /* FINISH end_ns - the run's start: wall time */
    PPW_SPAN_THREAD_END, /* the last THREAD_END end_ns - the start (no FINISH) */
    PPW_SPAN_THREAD_CPU, /* the largest thread CPU time (no end times) */
    PPW_SPAN_MAIN_INCL,  /* the raw inclusive time of the region named main */
};

/* Where ppw_intrusion.sampler_ns comes from. */
enum ppw_intrusion_sampler {
    PPW_SAMPLER_COST_NONE,    /* no samples: 0 */
    PPW_SAMPLER_COST_HANDLER, /* the samples files' handler_ns, measured in the handler */
    PPW_SAMPLER_COST_CALIB,   /* samples x the calibration's handler_ns */
};

/* One region, merged over the run's threads and callpaths.  Inclusive
 * totals leave out the calls the callpath shows nested in another call of
 * the region (recursion), whose time that call already includes; with
 * callpaths too short to show it (PPW_CALLPATH=flat), they count once per
 * level, as in the profile's rows. */
struct ppw_intrusion_region {
    const struct ppw_run_region *region;
    uint64_t calls;                    /* probes + calls_skipped */
    uint64_t probes;                   /* probe pairs executed: one per timed or throttled call */
    uint64_t probes_throttled;         /* the throttled ones among them */
    uint64_t probes_sampled;           /* calls timed 1 in K at a throttled allocation site */
    uint64_t calls_skipped;            /* the calls between them, estimated: they stayed in
                                          the program's code (a load and a few instructions) */
    double probe_ns;                   /* their cost: timed x pair_ns + throttled x
                                          throttled_pair_ns, with each thread's probe costs
                                          (0 uncalibrated) */
    double raw_incl_ns, raw_excl_ns;   /* of the timed calls */
    double comp_incl_ns, comp_excl_ns; /* compensated, clamped at 0 (raw when uncalibrated) */
    bool comp_incl_clamped, comp_excl_clamped; /* negative, shown as 0 */
    double body_ns; /* a timed call's mean inclusive time, compensated (raw when
                       uncalibrated), every nesting level counted */
    bool flagged;   /* probe_ns / probes >= flag_ratio x body_ns */
};

/* One thread's probes. */
struct ppw_intrusion_thread {
    const struct ppw_run_thread *thread;
    struct ppw_probe_costs costs;
    uint64_t probes, probes_throttled, probes_sampled; /* pairs executed */
    double probe_ns;
};

struct ppw_intrusion {
    const struct ppw_run *run;
    struct ppw_intrusion_thread *threads; /* as run->threads */
    size_t nthreads;
    size_t threads_in_situ; /* threads whose pair cost is PPW_COST_IN_SITU */
    double pair_ns;         /* the timed pairs' mean cost over all threads (0: none) */
    double flag_ratio;
    struct ppw_intrusion_region *regions; /* by probe_ns, descending; ties by region id */
    size_t nregions;
    size_t nflagged;
    uint64_t probes, probes_throttled, probes_sampled, calls_skipped, samples;
    double probe_ns, sampler_ns;
    double total_ns; /* probe_ns + sampler_ns */
    double run_ns;   /* the run's span, see span */
    enum ppw_intrusion_span span;
    double cpu_ns; /* the ended threads' CPU time, summed (0: no THREAD_END) */
    enum ppw_intrusion_sampler sampler;
    bool calibrated; /* false: no CALIB record; probe costs are 0 */
};

/* Computes the intrusion of run; regions are flagged with flag_ratio (a
 * finite number >= 0; PPW_INTRUSION_FLAG_RATIO by default).  *out
 * references run, which must outlive it.  Errors: PPW_EUSAGE (a bad
 * flag_ratio), PPW_ENOMEM. */
int ppw_intrusion_compute(const struct ppw_run *run, double flag_ratio, struct ppw_intrusion *out,
                          struct ppw_err *err);

void ppw_intrusion_free(struct ppw_intrusion *in);

/* Short names for the enumerations ("finish", "handler", ...). */
const char *ppw_intrusion_span_name(enum ppw_intrusion_span span);
const char *ppw_intrusion_sampler_name(enum ppw_intrusion_sampler sampler);

#endif

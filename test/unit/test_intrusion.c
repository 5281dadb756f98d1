/* Unit tests of blame/intrusion.c on synthetic runs whose numbers are
 * worked out by hand below: probe counts and costs, compensation, the
 * flagged tiny region, the sampler's cost from the handler or the
 * calibration, the run's span, and an uncalibrated run.
 *
 * usage: test_intrusion WORKDIR            the checks (runs are written there)
 *        test_intrusion --write WORKDIR    only write the runs, for test_cli_intrusion.sh:
 *                                          WORKDIR/{calibrated,uncalibrated,crashed} */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "intrusion.h"
#include "ppw/gasp_events.h"
#include "read_run.h"
#include "run_writer.h"

#define CHECK_NEAR(actual, expected)                                                               \
    do {                                                                                           \
        double a_ = (actual), e_ = (expected);                                                     \
        if (!(fabs(a_ - e_) <= 1e-9 * (fabs(e_) + 1)))                                             \
            FAIL_AT("%s == %.17g, expected %.17g", #actual, a_, e_);                               \
    } while (0)

static const char *workdir = ".";

enum variant {
    CALIBRATED = 0,
    NO_CALIB = 1u << 0,   /* no CALIB record */
    NO_HANDLER = 1u << 1, /* the samples files' handler_ns are 0 */
    CRASHED = 1u << 2,    /* no THREAD_END, no FINISH */
    RECURSIVE = 1u << 3,  /* thread 0 also runs a recursive region "rec" */
};

/* The run (two threads, calibration pair 100, inner 30, throttled pair 10,
 * sample 1500 ns):
 *
 *   region   thread  count  incl      excl     probes_inner/throttled/child/throttled_child
 *   main     0       1      1000000   100000   3000 / 500 / 1000 / 0
 *   work     0       1000   800000    500000   2000 / 0 / 2000 / 0      (work <- main)
 *   tiny     0       2000   100000    100000   0                        (tiny <- work)
 *   tiny     1       1000   40000     40000    0     then throttled: 5000 calls after
 *   lock     1       10     200       200      0                        (a call site)
 *
 *   rec      0       1      10000     4000     3 / 0 / 1 / 0            (rec <- main; RECURSIVE)
 *   rec      0       3      6000      6000     0                        (rec <- rec; RECURSIVE)
 *
 * Samples: 3 on thread 0 (handler 9000 ns), 2 on thread 1 (3000 ns).
 * Start 1000 ns, FINISH at 2001000; CPU 1500000 + 500000 ns. */
static void put_timer(struct run_file *f, uint32_t depth, uint32_t region, uint32_t caller,
                      uint64_t count, uint64_t incl, uint64_t excl, const uint64_t probes[4])
{
    struct ppw_rec_timer t = {.slot_kind = PPW_SLOT_TIMER,
                              .depth = depth,
                              .path = {region, caller},
                              .count = count,
                              .incl_min_ns = count ? incl / count : 0,
                              .incl_max_ns = count ? incl / count : 0,
                              .incl_sum_ns = incl,
                              .excl_sum_ns = excl,
                              .probes_inner = probes[0],
                              .probes_throttled = probes[1],
                              .probes_child = probes[2],
                              .throttled_child = probes[3]};
    rf_slot(f, &t, sizeof t);
}

static void put_region(struct run_file *f, uint32_t id, uint32_t kind, const char *name)
{
    struct ppw_rec_region g = {id,
                               kind,
                               kind == PPW_REGION_FUNCTION ? 1000 : 1005,
                               kind == PPW_REGION_FUNCTION ? PPW_OP_FUNCTION : PPW_OP_LOCK_ACQUIRE,
                               10 * id,
                               1};
    const char *strings[] = {name, "intr.c", NULL};
    rf_record(f, PPW_RUN_REGION, &g, sizeof g, NULL, 0, strings);
}

static void put_samples(struct run_file *f, unsigned n, uint64_t handler_ns)
{
    uint64_t frame = 0x401000;
    struct ppw_rec_stack s = {1, 1, PPW_STACK_LEAF_PC};
    rf_record(f, PPW_SMP_STACK, &s, sizeof s, &frame, sizeof frame, NULL);
    for (unsigned i = 0; i < n; i++) {
        struct ppw_rec_sample smp = {1, 0, 2000 + i, 1000000};
        rf_record(f, PPW_SMP_SAMPLE, &smp, sizeof smp, NULL, 0, NULL);
    }
    rf_header(f)->handler_ns = handler_ns;
}

static void build_run_file(struct run_file *f, unsigned variant)
{
    struct ppw_rec_run_info info = {77, 1, 1000, 1700000000000000000ull, 2, 0, 1};
    const char *info_strings[] = {"testhost", "/nonexistent/intr", "/tmp", NULL};
    rf_record(f, PPW_RUN_INFO, &info, sizeof info, NULL, 0, info_strings);
    if (!(variant & NO_CALIB)) {
        /* A 1.0 CALIB, without the probe windows of 1.2: the calibrated
         * costs are used as they are. */
        struct ppw_rec_calib calib = {.iterations = 1000,
                                      .pair_ns = 100.0,
                                      .inner_ns = 30.0,
                                      .throttled_pair_ns = 10.0,
                                      .clock_ns = 20.0,
                                      .handler_ns = 1500.0};
        rf_record(f, PPW_RUN_CALIB, &calib, PPW_REC_CALIB_SIZE_1_0, NULL, 0, NULL);
    }
    put_region(f, 1, PPW_REGION_FUNCTION, "main");
    put_region(f, 2, PPW_REGION_FUNCTION, "work");
    put_region(f, 3, PPW_REGION_FUNCTION, "tiny");
    put_region(f, 4, PPW_REGION_CALLSITE, "lock");
    put_region(f, 5, PPW_REGION_FUNCTION, "rec");
    struct ppw_rec_thread t0 = {0, 77, UINT32_MAX, 0, 0, 1000}, t1 = {1, 78, 0, 0, 0x401000, 2000};
    rf_record(f, PPW_RUN_THREAD, &t0, sizeof t0, NULL, 0, NULL);
    rf_record(f, PPW_RUN_THREAD, &t1, sizeof t1, NULL, 0, NULL);
    if (variant & CRASHED)
        return;
    struct ppw_rec_thread_end e1 = {1, 0, 1500000, 500000, 2, 0, 0},
                              e0 = {0, 0, 2000000, 1500000, 3, 0, 0};
    rf_record(f, PPW_RUN_THREAD_END, &e1, sizeof e1, NULL, 0, NULL);
    rf_record(f, PPW_RUN_THREAD_END, &e0, sizeof e0, NULL, 0, NULL);
    struct ppw_rec_finish finish = {2001000, 2};
    rf_record(f, PPW_RUN_FINISH, &finish, sizeof finish, NULL, 0, NULL);
}

static void build_profiles(struct run_file *p0, struct run_file *p1, unsigned variant)
{
    const uint64_t main_probes[] = {3000, 500, 1000, 0}, work_probes[] = {2000, 0, 2000, 0},
                   rec_probes[] = {3, 0, 1, 0}, none[] = {0, 0, 0, 0};
    if (variant & RECURSIVE) {
        put_timer(p0, 2, 5, 1, 1, 10000, 4000, rec_probes);
        put_timer(p0, 2, 5, 5, 3, 6000, 6000, none);
    }
    put_timer(p0, 1, 1, 0, 1, 1000000, 100000, main_probes);
    put_timer(p0, 2, 2, 1, 1000, 800000, 500000, work_probes);
    put_timer(p0, 2, 3, 2, 2000, 100000, 100000, none);
    put_timer(p1, 1, 3, 0, 1000, 40000, 40000, none);
    put_timer(p1, 1, 4, 0, 10, 200, 200, none);
    struct ppw_rec_throttle th = {PPW_SLOT_THROTTLE, 3, 1000, 40, 5000, 0, 0, 0};
    rf_slot(p1, &th, sizeof th);
}

/* Writes the run of the variant into dir; returns 0 or -1. */
static int write_run(const char *dir, unsigned variant)
{
    static const uint8_t build_id[] = {0x1d, 0x7e, 0x55, 0x10}; /* no binary is checked */
    struct run_file run, samples[2], profile[2];
    uint32_t pid = 77, id_size = sizeof build_id;
    rf_init(&run, PPW_FILE_RUN, UINT32_MAX, pid, build_id, id_size);
    for (uint32_t t = 0; t < 2; t++) {
        rf_init(&samples[t], PPW_FILE_SAMPLES, t, pid, build_id, id_size);
        rf_init(&profile[t], PPW_FILE_PROFILE, t, pid, build_id, id_size);
    }
    build_run_file(&run, variant);
    put_samples(&samples[0], 3, variant & NO_HANDLER ? 0 : 9000);
    put_samples(&samples[1], 2, variant & NO_HANDLER ? 0 : 3000);
    build_profiles(&profile[0], &profile[1], variant);
    mkdir(dir, 0777);
    int rc = 0;
    rf_finish(&run);
    rc |= rf_write(&run, dir, "run.ppw");
    for (uint32_t t = 0; t < 2; t++) {
        char name[64];
        rf_finish(&samples[t]);
        rf_finish(&profile[t]);
        snprintf(name, sizeof name, "t%u.samples.ppw", t);
        rc |= rf_write(&samples[t], dir, name);
        snprintf(name, sizeof name, "t%u.profile.ppw", t);
        rc |= rf_write(&profile[t], dir, name);
        rf_free(&samples[t]);
        rf_free(&profile[t]);
    }
    rf_free(&run);
    return rc ? -1 : 0;
}

/* Loads the variant's run and computes its intrusion; NULL on failure. */
static struct ppw_run *compute(unsigned variant, const char *name, double ratio,
                               struct ppw_intrusion *in)
{
    char dir[1200];
    struct ppw_run *run = NULL;
    struct ppw_err err;
    snprintf(dir, sizeof dir, "%s/%s", workdir, name);
    memset(in, 0, sizeof *in);
    if (write_run(dir, variant) != 0) {
        FAIL_AT("cannot write %s", dir);
        return NULL;
    }
    if (ppw_run_load(dir, &run, &err) != 0) {
        FAIL_AT("%s", err.message);
        return NULL;
    }
    if (ppw_intrusion_compute(run, ratio, in, &err) != 0) {
        FAIL_AT("%s", err.message);
        ppw_run_free(run);
        return NULL;
    }
    return run;
}

static const struct ppw_intrusion_region *find(const struct ppw_intrusion *in, const char *name)
{
    for (size_t i = 0; i < in->nregions; i++)
        if (strcmp(in->regions[i].region->name, name) == 0)
            return &in->regions[i];
    FAIL_AT("no region %s", name);
    return NULL;
}

/* ---- tests ---- */

static void test_regions(void)
{
    struct ppw_intrusion in;
    struct ppw_run *run = compute(CALIBRATED, "calibrated", PPW_INTRUSION_FLAG_RATIO, &in);
    if (!run)
        return;
    CHECK(in.calibrated);
    CHECK_INT(in.nregions, 4);
    /* by probe cost: tiny 350000, work 100000, lock 1000, main 100 */
    const char *order[] = {"tiny", "work", "lock", "main"};
    for (size_t i = 0; i < 4 && i < in.nregions; i++)
        CHECK_STR(in.regions[i].region->name, order[i]);
    const struct ppw_intrusion_region *r = find(&in, "main");
    if (r) { /* incl 1000000 - 3000*100 - 500*10 - 30; excl 100000 - 1000*70 - 30 */
        CHECK_INT(r->calls, 1);
        CHECK_INT(r->probes, 1);
        CHECK_NEAR(r->probe_ns, 100);
        CHECK_NEAR(r->raw_incl_ns, 1000000);
        CHECK_NEAR(r->comp_incl_ns, 694970);
        CHECK_NEAR(r->raw_excl_ns, 100000);
        CHECK_NEAR(r->comp_excl_ns, 29970);
        CHECK(!r->flagged && !r->comp_incl_clamped && !r->comp_excl_clamped);
    }
    if ((r = find(&in, "work"))) { /* 800000 - 2000*100 - 1000*30; 500000 - 2000*70 - 1000*30 */
        CHECK_INT(r->calls, 1000);
        CHECK_NEAR(r->probe_ns, 100000);
        CHECK_NEAR(r->comp_incl_ns, 570000);
        CHECK_NEAR(r->comp_excl_ns, 330000);
        CHECK(!r->flagged); /* 100 ns of probes per call against a 570 ns body */
    }
    if ((r = find(&in, "tiny"))) {
        /* both threads: 3000 timed + 5000 throttled calls; 3000*100 + 5000*10 ns of
         * probes; body 140000 - 3000*30 = 50000 ns, 16.7 ns per timed call, against
         * 43.75 ns of probes per call: flagged */
        CHECK_INT(r->calls, 8000);
        CHECK_INT(r->probes, 8000);
        CHECK_INT(r->probes_throttled, 5000);
        CHECK_NEAR(r->probe_ns, 350000);
        CHECK_NEAR(r->raw_incl_ns, 140000);
        CHECK_NEAR(r->comp_incl_ns, 50000);
        CHECK_NEAR(r->comp_excl_ns, 50000);
        CHECK(r->flagged && !r->comp_incl_clamped);
    }
    if ((r = find(&in, "lock"))) { /* 200 - 10*30 < 0: clamped, and flagged */
        CHECK_NEAR(r->probe_ns, 1000);
        CHECK_NEAR(r->comp_incl_ns, 0);
        CHECK(r->flagged && r->comp_incl_clamped && r->comp_excl_clamped);
    }
    CHECK_INT(in.nflagged, 2);
    ppw_intrusion_free(&in);
    ppw_run_free(run);
}

static void test_totals(void)
{
    struct ppw_intrusion in;
    struct ppw_run *run = compute(CALIBRATED, "calibrated", PPW_INTRUSION_FLAG_RATIO, &in);
    if (!run)
        return;
    CHECK_INT(in.probes, 1 + 1000 + 8000 + 10);
    CHECK_INT(in.probes_throttled, 5000);
    CHECK_NEAR(in.probe_ns, 100 + 100000 + 350000 + 1000);
    CHECK_INT(in.samples, 5);
    CHECK_INT(in.sampler, PPW_SAMPLER_COST_HANDLER);
    CHECK_NEAR(in.sampler_ns, 12000);
    CHECK_NEAR(in.total_ns, 451100 + 12000);
    CHECK_INT(in.span, PPW_SPAN_FINISH);
    CHECK_NEAR(in.run_ns, 2000000);
    CHECK_NEAR(in.cpu_ns, 2000000);
    CHECK_STR(ppw_intrusion_span_name(in.span), "finish");
    CHECK_STR(ppw_intrusion_sampler_name(in.sampler), "handler");
    ppw_intrusion_free(&in);
    ppw_run_free(run);
}

static void test_flag_ratio(void)
{
    struct ppw_intrusion in;
    struct ppw_run *run = compute(CALIBRATED, "calibrated", 0, &in);
    if (run) { /* ratio 0: every region with probes and a timed call */
        CHECK_INT(in.nflagged, 4);
        ppw_intrusion_free(&in);
        ppw_run_free(run);
    }
    if ((run = compute(CALIBRATED, "calibrated", 3, &in)) != NULL) {
        /* tiny: 43.75 < 3 * 16.7; lock's body is 0 */
        CHECK_INT(in.nflagged, 1);
        CHECK(find(&in, "lock") && find(&in, "lock")->flagged);
        ppw_intrusion_free(&in);
    }
    struct ppw_err err;
    CHECK_INT(ppw_intrusion_compute(run, -1, &in, &err), PPW_EUSAGE);
    CHECK_INT(ppw_intrusion_compute(run, NAN, &in, &err), PPW_EUSAGE);
    CHECK_INT(in.nregions, 0);
    ppw_run_free(run);
}

static void test_uncalibrated(void)
{
    struct ppw_intrusion in;
    struct ppw_run *run = compute(NO_CALIB, "uncalibrated", PPW_INTRUSION_FLAG_RATIO, &in);
    if (!run)
        return;
    CHECK(!in.calibrated);
    CHECK_NEAR(in.probe_ns, 0);
    CHECK_INT(in.probes, 9011); /* counted all the same */
    CHECK_INT(in.nflagged, 0);
    CHECK_NEAR(in.sampler_ns, 12000); /* measured in the handler, not calibrated */
    CHECK_NEAR(in.total_ns, 12000);
    const struct ppw_intrusion_region *r = find(&in, "main");
    if (r) { /* not compensated: the raw times */
        CHECK_NEAR(r->comp_incl_ns, 1000000);
        CHECK_NEAR(r->comp_excl_ns, 100000);
        CHECK(!r->flagged);
    }
    ppw_intrusion_free(&in);
    ppw_run_free(run);
}

static void test_sampler_and_span(void)
{
    struct ppw_intrusion in;
    struct ppw_run *run = compute(NO_HANDLER, "nohandler", PPW_INTRUSION_FLAG_RATIO, &in);
    if (run) { /* 5 samples x 1500 ns */
        CHECK_INT(in.sampler, PPW_SAMPLER_COST_CALIB);
        CHECK_NEAR(in.sampler_ns, 7500);
        ppw_intrusion_free(&in);
        ppw_run_free(run);
    }
    run = compute(NO_HANDLER | NO_CALIB, "nothing", PPW_INTRUSION_FLAG_RATIO, &in);
    if (run) { /* nothing to price the samples with */
        CHECK_INT(in.sampler, PPW_SAMPLER_COST_NONE);
        CHECK_NEAR(in.total_ns, 0);
        ppw_intrusion_free(&in);
        ppw_run_free(run);
    }
    run = compute(CRASHED, "crashed", PPW_INTRUSION_FLAG_RATIO, &in);
    if (run) { /* no end times: main's inclusive time, and no CPU time */
        CHECK_INT(in.span, PPW_SPAN_MAIN_INCL);
        CHECK_NEAR(in.run_ns, 1000000);
        CHECK_NEAR(in.cpu_ns, 0);
        ppw_intrusion_free(&in);
        ppw_run_free(run);
    }
}

/* Calls nested in a call of the same region (the callpath says so) add to
 * the calls, probes and exclusive time, not to the inclusive total. */
static void test_recursion(void)
{
    struct ppw_intrusion in;
    struct ppw_run *run = compute(RECURSIVE, "recursive", PPW_INTRUSION_FLAG_RATIO, &in);
    if (!run)
        return;
    const struct ppw_intrusion_region *r = find(&in, "rec");
    if (r) {
        CHECK_INT(r->calls, 4);
        CHECK_NEAR(r->probe_ns, 400);
        CHECK_NEAR(r->raw_incl_ns, 10000);
        CHECK_NEAR(r->comp_incl_ns, 10000 - 3 * 100 - 30);
        CHECK_NEAR(r->raw_excl_ns, 10000);
        CHECK_NEAR(r->comp_excl_ns, 10000 - 1 * 70 - 4 * 30);
        /* every call's own inclusive time: (16000 - 3*100 - 4*30) / 4 */
        CHECK_NEAR(r->body_ns, 3895);
        CHECK(!r->flagged);
    }
    if ((r = find(&in, "tiny")) != NULL) /* 50000 ns over 3000 timed calls */
        CHECK_NEAR(r->body_ns, 50000.0 / 3000);
    CHECK_INT(in.nregions, 5);
    ppw_intrusion_free(&in);
    ppw_run_free(run);
}

/* The formula ppw-blame profile uses, on one timer, unclamped. */
static void test_compensate(void)
{
    struct ppw_probe_costs c = {.pair_ns = 100, .inner_ns = 30, .throttled_pair_ns = 10};
    struct ppw_run_timer t = {.count = 10,
                              .incl_sum_ns = 200,
                              .excl_sum_ns = 5000,
                              .probes_inner = 1,
                              .probes_throttled = 2,
                              .probes_child = 3,
                              .throttled_child = 4};
    double incl, excl;
    ppw_intrusion_compensate(&c, &t, &incl, &excl);
    CHECK_NEAR(incl, 200 - 100 - 20 - 300);
    CHECK_NEAR(excl, 5000 - 3 * 70 - 40 - 300);
}

/* In-situ probe costs: the calibrated ones moved by how far the thread's
 * mean windows are from the calibration's, kind by kind, and only with
 * enough windows. */
static void test_probe_costs(void)
{
    struct ppw_run run = {.has_calib = true,
                          .calib = {.pair_ns = 100,
                                    .inner_ns = 30,
                                    .throttled_pair_ns = 10,
                                    .has_windows = true,
                                    .window_period = 64,
                                    .window_start_ns = 60,
                                    .window_end_ns = 70,
                                    .window_inner_ns = 50,
                                    .window_throttled_ns = 20,
                                    .window_clock_ns = 20}};
    /* START windows 15 ns longer, END 25 ns longer, inner parts 8 ns
     * longer, with the same clock */
    struct ppw_run_thread th = {.has_probe = true,
                                .probe = {.window_period = 64,
                                          .start_count = 100,
                                          .start_ns = 100 * 75,
                                          .start_tail_ns = 100 * 30,
                                          .end_count = 50,
                                          .end_ns = 50 * 95,
                                          .end_head_ns = 50 * 28,
                                          .throttled_count = 49,
                                          .throttled_ns = 49 * 40,
                                          .clock_ns = 199 * 20}};
    struct ppw_probe_costs c;
    ppw_intrusion_probe_costs(&run, &th, &c);
    CHECK_INT(c.source, PPW_COST_IN_SITU);
    CHECK_NEAR(c.pair_ns, 140);
    CHECK_NEAR(c.inner_ns, 38);
    CHECK_INT(c.throttled_source, PPW_COST_CALIBRATED); /* 49 windows: too few */
    CHECK_NEAR(c.throttled_pair_ns, 10);
    CHECK_INT(c.windows, 199);

    th.probe.throttled_count = 50; /* 20 ns longer each, 40 a pair */
    th.probe.throttled_ns = 50 * 40;
    th.probe.end_count = 49; /* too few ENDs: the pair stays calibrated */
    th.probe.end_ns = 49 * 95;
    th.probe.end_head_ns = 49 * 28;
    th.probe.clock_ns = 199 * 20;
    ppw_intrusion_probe_costs(&run, &th, &c);
    CHECK_INT(c.source, PPW_COST_CALIBRATED);
    CHECK_NEAR(c.pair_ns, 100);
    CHECK_NEAR(c.inner_ns, 30);
    CHECK_INT(c.throttled_source, PPW_COST_IN_SITU);
    CHECK_NEAR(c.throttled_pair_ns, 50);

    /* clock gaps 6 ns longer than the calibration's, and windows longer by
     * just the reads' share (one read a window, two for the inner parts):
     * the same costs as calibrated */
    th.probe = (struct ppw_run_probe){.start_count = 50,
                                      .start_ns = 50 * 66,
                                      .start_tail_ns = 50 * 30,
                                      .end_count = 50,
                                      .end_ns = 50 * 76,
                                      .end_head_ns = 50 * 32,
                                      .clock_ns = 100 * 26};
    ppw_intrusion_probe_costs(&run, &th, &c);
    CHECK_INT(c.source, PPW_COST_IN_SITU);
    CHECK_NEAR(c.pair_ns, 100);
    CHECK_NEAR(c.inner_ns, 30);

    /* faster than calibrated: costs shrink, never below 0; inner <= pair */
    th.probe = (struct ppw_run_probe){.start_count = 100,
                                      .start_ns = 100 * 10,
                                      .start_tail_ns = 100 * 10,
                                      .end_count = 100,
                                      .end_ns = 100 * 10,
                                      .end_head_ns = 100 * 10,
                                      .clock_ns = 200 * 10};
    run.calib.pair_ns = 50; /* 50 + (0 - 40) + (0 - 50) < 0 */
    ppw_intrusion_probe_costs(&run, &th, &c);
    CHECK_INT(c.source, PPW_COST_IN_SITU);
    CHECK_NEAR(c.pair_ns, 0);
    CHECK_NEAR(c.inner_ns, 0); /* 30 + (0 - 10) = 20, but no more than the pair */
    run.calib.pair_ns = 100;

    /* a 1.0 calibration (no windows), or a thread without them */
    run.calib.has_windows = false;
    ppw_intrusion_probe_costs(&run, &th, &c);
    CHECK_INT(c.source, PPW_COST_CALIBRATED);
    CHECK_NEAR(c.pair_ns, 100);
    run.calib.has_windows = true;
    th.has_probe = false;
    ppw_intrusion_probe_costs(&run, &th, &c);
    CHECK_INT(c.source, PPW_COST_CALIBRATED);
    run.has_calib = false;
    ppw_intrusion_probe_costs(&run, &th, &c);
    CHECK_INT(c.source, PPW_COST_NONE);
    CHECK_NEAR(c.pair_ns, 0);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0) {
        char dir[1200];
        const char *names[] = {"calibrated", "uncalibrated", "crashed"};
        const unsigned variants[] = {CALIBRATED, NO_CALIB, CRASHED};
        mkdir(argv[2], 0777);
        for (int i = 0; i < 3; i++) {
            snprintf(dir, sizeof dir, "%s/%s", argv[2], names[i]);
            if (write_run(dir, variants[i]) != 0)
                return 1;
        }
        return 0;
    }
    if (argc > 1)
        workdir = argv[1];
    mkdir(workdir, 0777);
    RUN(test_regions);
    RUN(test_totals);
    RUN(test_flag_ratio);
    RUN(test_uncalibrated);
    RUN(test_sampler_and_span);
    RUN(test_recursion);
    RUN(test_compensate);
    RUN(test_probe_costs);
    return harness_exit();
}

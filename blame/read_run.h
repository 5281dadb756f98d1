/* Loads a run directory written by libppw (docs/FORMATS.md, "Run directory";
 * the contract is include/ppw/run_format.h) into memory, validating every
 * byte: sizes, offsets and counts are checked against their file, and ids
 * that records name (stacks, regions) must exist.
 *
 * The run owns all of its strings and arrays; nothing points into the files,
 * which are mapped read-only while they are read and unmapped before
 * ppw_run_load returns. */
#ifndef PPW_BLAME_READ_RUN_H
#define PPW_BLAME_READ_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ppw/run_format.h"

/* One file of the run: present or not, and what its header said. */
struct ppw_run_file {
    bool present;
    uint16_t major, minor;
    uint32_t flags;     /* enum ppw_file_flag: PPW_FILE_CLOSED when the writer finished it */
    uint64_t size;      /* bytes on disk */
    uint64_t committed; /* bytes of records (or slots) after the header */
    uint64_t checksums; /* CHECKSUM records verified (1.5), or 1 for a sealed profile */
    uint64_t unchecked; /* bytes of records no checksum covers (a crash's tail; all of a file
                           written before 1.5) */
    bool unwritten;     /* a per-thread file with no header yet (0 bytes, or a header of
                           zeros): the process ended while the thread was starting, so
                           nothing of it was recorded; its content counts as lost */
};

struct ppw_run_info {
    uint32_t pid, ppid;
    uint64_t start_mono_ns, start_real_ns;
    uint32_t ncpus, parent_fork;
    uint64_t clock_res_ns;
    const char *host, *exe, *cwd;
};

/* PPW_RUN_MPI (format 1.1): the rank's place in its MPI job and its clock
 * points against rank 0 (the finalize record replaces the init one). */
struct ppw_run_mpi {
    uint32_t rank, size;
    uint64_t init_local_ns, init_master_ns;
    uint64_t fini_local_ns, fini_master_ns; /* 0: the rank never reached MPI_Finalize */
    uint64_t job_id;
    const char *host;
};

struct ppw_run_metric {
    uint32_t source; /* enum ppw_metric_source */
    uint32_t unit;   /* enum ppw_metric_unit */
    uint64_t period;
    uint32_t jitter_pct, signal, max_frames;
    const char *name, *reason;
};

struct ppw_run_config {
    uint32_t modes; /* enum ppw_mode_flag */
    uint32_t callpath_depth;
    uint64_t throttle_calls, throttle_ns;
    uint64_t throttle_sample;      /* since 1.6: 1 in K calls timed at a throttled allocation site */
    uint64_t throttle_alloc_calls; /* since 1.6: calls before an allocation site throttles; 0: n/a */
};

struct ppw_run_calib {
    uint64_t iterations;
    double pair_ns, inner_ns, throttled_pair_ns, clock_ns, handler_ns; /* all finite */
    /* Since 1.2: the calibration's probe windows (mean ns, finite). */
    bool has_windows;
    uint64_t window_period;
    double window_start_ns, window_end_ns, window_inner_ns, window_throttled_ns, window_clock_ns;
};

struct ppw_run_module {
    const char *path;
    uint64_t load_bias, lo, hi;              /* [lo, hi): runtime addresses */
    char build_id[2 * PPW_BUILD_ID_MAX + 1]; /* lowercase hex, "" when none */
    uint32_t flags;                          /* enum ppw_module_flag */
    bool unloaded;                           /* a later UNMODULE record names it */
};

struct ppw_run_region {
    uint32_t id, kind, tag, op, line, col; /* enum ppw_region_kind, GASP tag, enum ppw_op */
    const char *name, *file;
};

struct ppw_run_stack {
    uint32_t id;
    uint16_t nframes, flags; /* enum ppw_stack_flag */
    const uint64_t *frames;  /* innermost first */
};

struct ppw_run_sample {
    const struct ppw_run_stack *stack; /* never NULL */
    uint32_t spawn_tag;                /* 0: the thread's root context */
    uint64_t time_ns, weight;          /* merged: the first sample's time, the weights' sum */
    uint64_t count;                    /* samples this entry stands for: 1, or more when merged */
};

struct ppw_run_spawn {
    uint32_t tag, parent_tag, kind, creator; /* enum ppw_spawn_kind; creator thread index */
    uint16_t nframes, flags;                 /* enum ppw_stack_flag */
    const uint64_t *frames;                  /* the creator's stack, innermost first */
};

struct ppw_run_trace {
    uint64_t time_ns;
    const struct ppw_run_region *region; /* never NULL */
    uint16_t evttype;                    /* GASP_START, GASP_END, GASP_ATOMIC */
    uint16_t nargs;                      /* the count, without the string bit */
    const uint64_t *args;
    const char *description; /* a user event's text, NULL when absent */
};

/* A PPW_EVT_OMP record (run format 1.3). */
struct ppw_run_omp_event {
    uint64_t time_ns;
    uint32_t instance, tag;
    uint32_t event; /* enum ppw_omp_event */
};

struct ppw_run_timer {
    uint32_t depth;                  /* 1..PPW_CALLPATH_MAX */
    uint32_t path[PPW_CALLPATH_MAX]; /* region ids, all defined; path[0] is the region */
    uint64_t count, subcalls, incl_min_ns, incl_max_ns, incl_sum_ns, excl_sum_ns;
    double excl_sumsq_ns2;
    uint64_t probes_inner, probes_throttled, probes_child, throttled_child;
    uint32_t flags; /* enum ppw_timer_flag */
    uint64_t bytes; /* data the calls moved (MPI); 0 when not known */
};

/* A thread's probe windows (struct ppw_rec_probe): sums in ns.  Checked:
 * every part is at most its whole, and no mean exceeds the window limit. */
struct ppw_run_probe {
    uint32_t window_period;
    uint64_t start_count, start_ns, start_tail_ns;
    uint64_t end_count, end_ns, end_head_ns;
    uint64_t throttled_count, throttled_ns;
    uint64_t interrupted;
    uint64_t clock_ns; /* clock gaps of the kept windows */
};

struct ppw_run_throttle {
    uint32_t region; /* a defined region id */
    uint64_t calls_before, mean_ns, calls_after;
    /* Since 1.6, allocation sites: calls timed 1 in about sample_period
     * after throttling, each standing for sample_period calls. */
    uint64_t sample_period, sampled_calls, sampled_ns;
};

/* The calls a throttle slot stands for after throttling, and their time:
 * counted calls at the mean before throttling, sampled calls scaled up. */
static inline double ppw_run_throttle_calls(const struct ppw_run_throttle *th)
{
    return (double)th->calls_after + (double)th->sampled_calls * (double)th->sample_period;
}

static inline double ppw_run_throttle_ns(const struct ppw_run_throttle *th)
{
    return (double)th->calls_after * (double)th->mean_ns +
           (double)th->sampled_ns * (double)th->sample_period;
}

struct ppw_run_thread {
    uint32_t index;
    bool has_begin; /* run.ppw has its THREAD record: the fields below are set */
    uint32_t tid, parent, root_tag;
    uint64_t start_routine, start_ns;
    bool ended;         /* run.ppw has its THREAD_END record: the fields below are set */
    uint32_t end_flags; /* enum ppw_thread_end_flag: AT_EXIT, still running at exit */
    uint64_t end_ns, cpu_ns, samples_recorded;
    uint64_t runqueue_ns; /* PPW_WAIT_UNKNOWN: not recorded (before 1.3, or no schedstat) */
    uint64_t armed_cpu_ns; /* CPU time before the sampler was armed (1.4; 0 before) */
    struct ppw_run_file samples_file, events_file, profile_file;
    uint64_t dropped[PPW_DROP_REASONS]; /* from the samples file's header */
    uint64_t handler_ns;                /* ditto: time spent recording samples */
    uint64_t ring_full;                 /* 1.7: samples the kernel dropped, the ring buffer full */
    struct ppw_run_stack *stacks;       /* in file order */
    size_t stack_count;
    struct ppw_run_sample *samples;
    size_t sample_count;
    uint64_t samples_read;   /* SAMPLE records, before any merging */
    uint64_t weight_read;    /* their weights' sum */
    uint64_t missed_periods; /* periods beyond the first that samples of 1.8 periods or more
                                stand for: signals that did not come (metric in ns only) */
    struct ppw_run_trace *traces;
    size_t trace_count;
    struct ppw_run_omp_event *omp_events; /* in file order: time order on one thread */
    size_t omp_event_count;
    struct ppw_run_timer *timers;
    size_t timer_count;
    struct ppw_run_throttle *throttles;
    size_t throttle_count;
    bool has_probe; /* the profile file has a PROBE slot (since 1.2) */
    struct ppw_run_probe probe;
};

struct ppw_run_note {
    uint32_t severity;
    const char *message;
};

struct ppw_arena;

struct ppw_run {
    char *dir;
    struct ppw_run_file file;                /* run.ppw */
    uint32_t pid;                            /* from run.ppw's header */
    char build_id[2 * PPW_BUILD_ID_MAX + 1]; /* lowercase hex, "" when none */
    bool has_info, has_metric, has_config, has_calib;
    struct ppw_run_info info;
    struct ppw_run_metric metric;
    struct ppw_run_config config;
    struct ppw_run_calib calib;
    const char **argv;
    size_t argc;
    const char **env;
    size_t env_count;
    uint32_t env_left_out; /* 1.4: variables the allow-list did not record (PPW_RECORD_ENV) */
    bool has_mpi;  /* an MPI rank: mpi is set (the last PPW_RUN_MPI record) */
    struct ppw_run_mpi mpi;
    bool finished; /* FINISH present; false: the run did not end normally */
    uint64_t finish_end_ns, finish_threads;
    struct ppw_run_module *modules; /* in record order */
    size_t module_count;
    struct ppw_run_region *regions; /* sorted by id */
    size_t region_count;
    struct ppw_run_thread *threads; /* sorted by index: THREAD records and t<N> files */
    size_t thread_count;
    struct ppw_run_spawn *spawns; /* sorted by tag, from every events file */
    size_t spawn_count;
    struct ppw_run_note *notes;
    size_t note_count;
    struct ppw_arena *arena; /* owns every string and array */
};

/* Why a thread's samples fall short of its CPU time (ppw_run_thread_loss). */
enum ppw_loss_cause {
    PPW_LOSS_CRASH = 1u << 0,       /* the process ended as the thread started (unwritten file) */
    PPW_LOSS_NO_FILE = 1u << 1,     /* its samples file could not be created (a NOTE says why) */
    PPW_LOSS_NOT_ARMED = 1u << 2,   /* its sampler could not start (a NOTE says why) */
    PPW_LOSS_DISK_FULL = 1u << 3,   /* its samples file could not grow: samples dropped */
    PPW_LOSS_DROPPED = 1u << 4,     /* samples dropped otherwise (thread not ready, walk failed,
                                       ring buffer full) */
    PPW_LOSS_SIGNAL_BLOCKED = 1u << 5, /* the thread blocked the sampling signal (1.4) */
    PPW_LOSS_SIGNAL_IGNORED = 1u << 6, /* the program ignored it (1.4) */
    PPW_LOSS_SIGNAL_TAKEN = 1u << 7,   /* the program installed its own handler for it (1.4) */
    PPW_LOSS_TIMER_CLOSED = 1u << 8,   /* the program closed the sampler's descriptor (1.4) */
    PPW_LOSS_UNKNOWN = 1u << 9,        /* none of the above explains the shortfall */
    PPW_LOSS_CAUSES = 10,
};

/* A thread's samples against its CPU time: what every view warns about
 * (docs/ppw-blame.md, "Lost samples").  Only where the run recorded the
 * thread's CPU time at its end and the metric is time. */
struct ppw_run_loss {
    bool known;        /* the thread ended and the metric is in ns: the counts below hold */
    uint64_t cpu_ns;   /* its CPU time */
    uint64_t expected; /* cpu_ns / period */
    uint64_t recorded; /* samples in its file */
    uint64_t lost;     /* periods no sample stands for: CPU time the weights miss, plus
                          the periods of signals that did not come */
    uint32_t causes;   /* enum ppw_loss_cause; 0 when nothing is lost */
    bool significant;  /* lost is at least 20 samples and 10% of expected: warn */
};

void ppw_run_thread_loss(const struct ppw_run *run, const struct ppw_run_thread *t,
                         struct ppw_run_loss *out);
const char *ppw_run_loss_cause_name(unsigned bit_index); /* "crash", "no_file", ... */

/* Loads the run directory dir.  Returns 0 and *out, or a negative code with
 * err filled and *out NULL: PPW_EIO (dir or a file cannot be read; no
 * run.ppw), PPW_ECORRUPT (malformed, truncated, or a file from another build
 * or process), PPW_EVERSION (a newer major version), PPW_ENOMEM. */
int ppw_run_load(const char *dir, struct ppw_run **out, struct ppw_err *err);

/* ppw_run_load, with each thread's samples merged by (stack, spawn tag): one
 * entry per distinct pair, with its count and summed weight, so that memory
 * grows with unique stacks, not with samples (ppw-blame report, code and
 * lines need nothing more). */
int ppw_run_load_merged(const char *dir, struct ppw_run **out, struct ppw_err *err);

void ppw_run_free(struct ppw_run *run);

/* NULL when there is no such region, thread or spawn tag. */
const struct ppw_run_region *ppw_run_find_region(const struct ppw_run *run, uint32_t id);
const struct ppw_run_thread *ppw_run_find_thread(const struct ppw_run *run, uint32_t index);
const struct ppw_run_spawn *ppw_run_find_spawn(const struct ppw_run *run, uint32_t tag);

/* The spawn records that continue a stack taken on thread `thread` in spawn
 * context `tag` (a sample's spawn_tag), outermost last: tag's record, then
 * its parent_tag's, and so on.  Tag 0 stands for the thread's root context,
 * which continues with the thread's root_tag (the main thread's is 0: an
 * empty chain); a parent_tag of 0 likewise continues with the creator's
 * root_tag.  Stores at most cap records in chain (cap = run->spawn_count
 * always suffices) and their number in *count.  Errors: PPW_ECORRUPT for a
 * tag no events file defines, a chain that loops, a non-main thread without
 * a THREAD record; PPW_ENOMEM when cap is too small. */
int ppw_run_spawn_chain(const struct ppw_run *run, uint32_t thread, uint32_t tag,
                        const struct ppw_run_spawn **chain, size_t cap, size_t *count,
                        struct ppw_err *err);

/* Reads the executable's symbols and lines from path instead of the file
 * the run names, when path carries the run's build-id (a copy of the build
 * that ran, given with --binary, while the original was rebuilt in place).
 * 0 when it does; else nothing changes and the error is
 * ppw_run_check_binary's. */
int ppw_run_use_exe_copy(struct ppw_run *run, const char *path, struct ppw_err *err);

/* Checks that binary (an ELF executable) carries the run's build-id.
 * Errors: those of ppw_elf_open, and PPW_ECORRUPT "from another build". */
int ppw_run_check_binary(const struct ppw_run *run, const char *binary, struct ppw_err *err);

/* Names for the format's enumerations; "?" (or NULL where said) when unknown. */
/* time_ns, a time of the run's own clock, on rank 0's clock: PPW's linear
 * drift model (seed 003), the offsets measured at MPI_Init and at
 * MPI_Finalize interpolated (and extrapolated past them); the init offset
 * alone when the rank never reached MPI_Finalize; time_ns itself when the
 * run is not an MPI rank. */
uint64_t ppw_run_master_ns(const struct ppw_run *run, uint64_t time_ns);

const char *ppw_run_tag_name(uint32_t tag); /* PPW_GASP_TAGS; NULL when unknown */
const char *ppw_run_op_name(uint32_t op);   /* PPW_OPS */
const char *ppw_run_metric_source_name(uint32_t source);
const char *ppw_run_unit_name(uint32_t unit);
const char *ppw_run_region_kind_name(uint32_t kind);
const char *ppw_run_spawn_kind_name(uint32_t kind);
const char *ppw_run_evttype_name(uint32_t evttype);
const char *ppw_run_drop_name(unsigned reason);

#endif

/* The run-directory format: the contract between libppw (writer) and
 * ppw-blame (reader).  Documented in docs/FORMATS.md ("Run directory");
 * change both together, and bump the version as the rules there say.
 *
 * An MPI job writes one job directory (./ppw-<exe>-<rank 0's pid>/) holding
 * one run directory per rank, named r<rank>-<host>-<pid>/ (each rank moves
 * its own directory there at MPI_Init).
 *
 * A run directory (PPW_OUTPUT, default ./ppw-<exe>-<pid>/) holds:
 *   run.ppw            process-level records: run info, argv, environment,
 *                      metric, calibration, modules, regions, threads
 *   t<N>.samples.ppw   thread N's samples and stacks (written by the
 *                      sampling signal handler only)
 *   t<N>.events.ppw    thread N's spawn records and trace events
 *   t<N>.profile.ppw   thread N's profile timers, updated in place
 * N is the thread's index: 0 for the main thread, then in creation order.
 *
 * Every file starts with struct ppw_file_header.  The files are mapped
 * shared and written in place, so whatever the program's end (exit, signal,
 * SIGKILL), every record below `committed` is complete: writers store a
 * record first and then advance `committed` with a release store.  Bytes
 * beyond `committed` are preallocated space, zero or partial, never data.
 *
 * All integers are little-endian; all structs below are naturally aligned
 * with no implicit padding (the static asserts at the end check sizes). */
#ifndef PPW_RUN_FORMAT_H
#define PPW_RUN_FORMAT_H

#include <stdint.h>

#define PPW_RUN_MAGIC "PPWR"
#define PPW_RUN_MAJOR 1
#define PPW_RUN_MINOR 7 /* 1.1: PPW_RUN_MPI; 1.2: probe windows (CALIB fields, PROBE slot);
                           1.3: PPW_EVT_OMP; 1.4: THREAD_END sampling faults, ENV left_out;
                           1.5: CHECKSUM records, sealed profile files;
                           1.6: sampled throttled calls (THROTTLE slot, CONFIG), sample
                           BLOCK records; 1.7: ring losses in samples file headers */
#define PPW_RUN_HEADER_SIZE 128
#define PPW_BUILD_ID_MAX 32

enum ppw_file_kind {
    PPW_FILE_RUN = 1,
    PPW_FILE_SAMPLES = 2,
    PPW_FILE_EVENTS = 3,
    PPW_FILE_PROFILE = 4,
};

enum ppw_file_flag {
    PPW_FILE_CLOSED = 1u << 0, /* the writer finished it; absent after a crash */
    PPW_FILE_SEALED = 1u << 1, /* 1.5, profile files: `reserved` holds the CRC32C
                                  (ppw/crc32c.h) of the committed slots, written at close */
    PPW_FILE_CHECKSUMMED = 1u << 2, /* 1.5, record files: a CHECKSUM record follows every
                                       PPW_CHECKSUM_BLOCK bytes of records */
};

/* Why samples were not recorded; counters in the samples file header. */
enum ppw_drop_reason {
    PPW_DROP_NOT_READY = 0, /* signal before the thread was set up, or after teardown */
    PPW_DROP_PAUSED = 1,    /* measurement turned off with gasp_control */
    PPW_DROP_NO_SPACE = 2,  /* the file could not grow (disk full, RLIMIT_FSIZE) */
    PPW_DROP_WALK = 3,      /* the stack walk failed outright */
    PPW_DROP_REASONS = 4,
};

struct ppw_file_header {
    char magic[4];          /*   0 "PPWR" */
    uint16_t major;         /*   4 */
    uint16_t minor;         /*   6 */
    uint32_t kind;          /*   8 enum ppw_file_kind */
    uint32_t header_size;   /*  12 PPW_RUN_HEADER_SIZE; records start here */
    uint64_t committed;     /*  16 bytes of complete records (or timer slots) after the header */
    uint32_t pid;           /*  24 */
    uint32_t thread;        /*  28 thread index; UINT32_MAX in run.ppw */
    uint32_t flags;         /*  32 enum ppw_file_flag */
    uint32_t build_id_size; /*  36 bytes used in build_id; 0 when the executable has none */
    uint8_t build_id[PPW_BUILD_ID_MAX]; /* 40 the executable's GNU build-id */
    uint64_t dropped[PPW_DROP_REASONS]; /* 72 samples files: drops by reason; else 0 */
    uint64_t slot_size;     /* 104 profile files: bytes per slot; else 0 */
    uint64_t handler_ns;    /* 112 samples files: time spent recording samples, from the
                               handler's first clock read to its last; else 0 */
    uint64_t reserved;      /* 120 sealed profile files: the CRC32C (PPW_FILE_SEALED);
                               samples files, 1.7: samples the kernel could not write
                               because the thread's ring buffer was full (PPW_SAMPLER=ring;
                               their time is in the next sample's weight); else 0 */
};

/* Records (run, samples and events files): an 8-byte frame, then the body.
 * `size` counts the frame too and is a multiple of 8.  Readers skip kinds
 * they do not know.  Strings are NUL-terminated, packed after the fixed
 * part of a record, in the order the record's comment lists them. */
struct ppw_rec_frame {
    uint32_t kind;
    uint32_t size;
};

enum ppw_run_record {
    /* run.ppw */
    PPW_RUN_INFO = 1,     /* struct ppw_rec_run_info; strings: host, exe path, cwd */
    PPW_RUN_ARGV = 2,     /* u32 count, u32 0; strings: each argument */
    PPW_RUN_ENV = 3,      /* u32 count, u32 left_out (1.4: variables not recorded, as
                             PPW_RECORD_ENV says); strings: each NAME=value */
    PPW_RUN_METRIC = 4,   /* struct ppw_rec_metric; strings: name, reason */
    PPW_RUN_CONFIG = 5,   /* struct ppw_rec_config */
    PPW_RUN_CALIB = 6,    /* struct ppw_rec_calib */
    PPW_RUN_MODULE = 7,   /* struct ppw_rec_module; strings: path */
    PPW_RUN_UNMODULE = 8, /* struct ppw_rec_module (path empty): dlclose'd */
    PPW_RUN_REGION = 9,   /* struct ppw_rec_region; strings: name, file */
    PPW_RUN_THREAD = 10,  /* struct ppw_rec_thread: a thread began */
    PPW_RUN_THREAD_END = 11, /* struct ppw_rec_thread_end */
    PPW_RUN_FINISH = 12,  /* struct ppw_rec_finish: the process ended normally */
    PPW_RUN_NOTE = 13,    /* u32 severity, u32 0; strings: message (lost output, fallbacks) */
    PPW_RUN_MPI = 14,     /* (1.1) struct ppw_rec_mpi; strings: host; written at MPI_Init,
                             again at MPI_Finalize with the finalize fields set */
    /* t<N>.samples.ppw */
    PPW_SMP_STACK = 32,   /* struct ppw_rec_stack + u64 frames[nframes] */
    PPW_SMP_SAMPLE = 33,  /* struct ppw_rec_sample */
    PPW_SMP_BLOCK = 34,   /* (1.6) struct ppw_rec_block + entries: samples and stacks */
    /* t<N>.events.ppw */
    PPW_EVT_SPAWN = 48,   /* struct ppw_rec_spawn + u64 frames[nframes] */
    PPW_EVT_TRACE = 49,   /* struct ppw_rec_trace + u64 args[nargs] [+ string] */
    PPW_EVT_OMP = 50,     /* (1.3) struct ppw_rec_omp, trace mode only */
    /* any record file */
    PPW_REC_CHECKSUM = 64, /* (1.5) struct ppw_rec_checksum */
};

/* A checksum of the bytes from file offset `from` up to this record's
 * frame (1.5).  The writer adds one once PPW_CHECKSUM_BLOCK bytes of
 * records follow the previous one (or the header), and one at close for
 * the rest; each `from` is where the previous CHECKSUM record ends (the
 * header's end for the first).  Bytes after the last one are unchecked:
 * a crash's tail. */
struct ppw_rec_checksum {
    uint32_t crc32c; /* ppw/crc32c.h */
    uint32_t reserved;
    uint64_t from;
};
#define PPW_CHECKSUM_BLOCK 16384

/* How the clock, metric and mode were chosen. */
enum ppw_metric_source {
    PPW_METRIC_NONE = 0,       /* sampling off */
    PPW_METRIC_PAPI_CYCLES = 1, /* PAPI_TOT_CYC overflow; unit cycles */
    PPW_METRIC_PERF_TASK_CLOCK = 2, /* perf_event_open software task clock; unit ns */
    PPW_METRIC_POSIX_CPU_TIMER = 3, /* timer_create(CLOCK_THREAD_CPUTIME_ID); unit ns */
};

enum ppw_metric_unit {
    PPW_UNIT_NS = 1,
    PPW_UNIT_CYCLES = 2,
};

enum ppw_mode_flag {
    PPW_MODE_PROFILE = 1u << 0,
    PPW_MODE_TRACE = 1u << 1,
    PPW_MODE_SAMPLE = 1u << 2,
};

struct ppw_rec_run_info {
    uint32_t pid, ppid;
    uint64_t start_mono_ns;     /* CLOCK_MONOTONIC at start; all times are on this clock */
    uint64_t start_real_ns;     /* CLOCK_REALTIME at the same moment */
    uint32_t ncpus;             /* online CPUs */
    uint32_t parent_fork;       /* 1 when this process is a fork()ed child of an instrumented one */
    uint64_t clock_res_ns;      /* CLOCK_MONOTONIC resolution */
};

struct ppw_rec_metric {
    uint32_t source;     /* enum ppw_metric_source */
    uint32_t unit;       /* enum ppw_metric_unit */
    uint64_t period;     /* mean sampling period, in unit */
    uint32_t jitter_pct; /* periods are drawn uniformly from period*(1 +- jitter/100) */
    uint32_t signal;     /* the signal the sampler uses */
    uint32_t max_frames; /* stack walks stop here; longer stacks are marked truncated */
    uint32_t reserved;
};

struct ppw_rec_config {
    uint32_t modes;          /* enum ppw_mode_flag */
    uint32_t callpath_depth; /* 1 flat, 2 parent, up to PPW_CALLPATH_MAX full */
    uint64_t throttle_calls; /* 0: throttling off */
    uint64_t throttle_ns;    /* mean inclusive time below which a region is throttled */
    /* Since 1.6: after throttling, about one call in this many at a call
     * site the compiled code gates is still timed (PPW_THROTTLE_SAMPLE);
     * 0: none.  (1.6 runs of builds before 2026-11-27 gate allocation
     * sites only.) */
    uint64_t throttle_sample;
    uint64_t throttle_alloc_calls; /* calls after which an allocation site may be throttled */
};
#define PPW_THROTTLE_SAMPLE_MAX 1000000u
#define PPW_REC_CONFIG_SIZE_1_0 24

/* Probe costs measured at start-up (seed 001: compensate, and show both). */
struct ppw_rec_calib {
    uint64_t iterations;     /* probe pairs timed per measurement */
    double pair_ns;          /* cost of a recorded START+END pair to the code around it */
    double inner_ns;         /* part of it inside the region's own measured time */
    double throttled_pair_ns; /* cost of a START+END pair of a throttled region */
    double clock_ns;         /* one clock read */
    double handler_ns;       /* one sample: signal delivery, walk and record (0 if not measured) */
    /* Since 1.2: the same probes' windows, timed as in the run (struct
     * ppw_rec_probe): means in ns, 0 with no window of that kind. */
    double window_start_ns;     /* a timed START, entry to exit */
    double window_end_ns;       /* a timed END, entry to exit */
    double window_inner_ns;     /* a timed START's tail after its clock read + an END's head */
    double window_throttled_ns; /* a throttled START or END */
    double window_clock_ns;     /* two clock reads back to back, at a window's start */
    uint64_t window_period;     /* one event in this many is timed, on average; 0: none */
};
#define PPW_REC_CALIB_SIZE_1_0 48

enum ppw_module_flag {
    PPW_MODULE_EXE = 1u << 0,     /* the main executable */
    PPW_MODULE_PPW = 1u << 1,     /* libppw itself */
    PPW_MODULE_PARALLEL = 1u << 2, /* a parallel runtime (libomp, libgomp): its frames separate
                                      a task's own code from the scheduler beneath it */
};

struct ppw_rec_module {
    uint64_t load_bias;  /* runtime address minus link-time address */
    uint64_t lo, hi;     /* runtime address range of its PT_LOAD segments */
    uint32_t build_id_size;
    uint8_t build_id[PPW_BUILD_ID_MAX];
    uint32_t flags;      /* enum ppw_module_flag */
};

enum ppw_region_kind {
    PPW_REGION_FUNCTION = 1, /* GASP_C_FUNC; name is the function */
    PPW_REGION_CALLSITE = 2, /* a library operation at one call site; name is the tag's */
    PPW_REGION_USER = 3,     /* a user event (gasp_create_event); name is its name */
};

struct ppw_rec_region {
    uint32_t id;   /* 1-based, process-wide */
    uint32_t kind; /* enum ppw_region_kind */
    uint32_t tag;  /* GASP event tag */
    uint32_t op;   /* enum ppw_op (ppw/gasp_events.h) */
    uint32_t line, col;
};

struct ppw_rec_thread {
    uint32_t index;   /* N of t<N>.*.ppw */
    uint32_t tid;
    uint32_t parent;  /* creating thread's index; UINT32_MAX for the main thread */
    uint32_t root_tag; /* spawn tag of its creation context; 0 for the main thread */
    uint64_t start_routine; /* entry address (0 for main) */
    uint64_t start_ns;
};

enum ppw_thread_end_flag {
    PPW_THREAD_END_AT_EXIT = 1u << 0, /* still running when the process exited (pool
                                         workers, detached threads); it may have
                                         recorded samples after this record */
    /* 1.4: what stopped its samples, as seen at its end */
    PPW_THREAD_END_SIGNAL_BLOCKED = 1u << 1, /* the sampling signal was blocked in it */
    PPW_THREAD_END_SIGNAL_IGNORED = 1u << 2, /* the signal's disposition was SIG_IGN */
    PPW_THREAD_END_SIGNAL_TAKEN = 1u << 3,   /* another handler than ppw's had the signal */
    PPW_THREAD_END_TIMER_CLOSED = 1u << 4,   /* its sampling descriptor was closed or replaced */
};

struct ppw_rec_thread_end {
    uint32_t index;
    uint32_t flags; /* enum ppw_thread_end_flag */
    uint64_t end_ns;
    uint64_t cpu_ns;  /* CLOCK_THREAD_CPUTIME_ID at the end */
    uint64_t samples; /* samples recorded */
    /* 1.3: time it was ready to run but waited for a CPU (schedstat's run
     * delay: the machine busy with other threads or processes);
     * PPW_WAIT_UNKNOWN when the kernel does not say */
    uint64_t runqueue_ns;
    /* 1.4: its CPU time when its sampler was armed: the start-up no sample
     * can stand for (0 when it was never armed) */
    uint64_t armed_cpu_ns;
};
#define PPW_WAIT_UNKNOWN UINT64_MAX

/* An MPI rank (1.1).  Clocks are aligned with PPW's linear-drift model
 * (seed 003): at init and at finalize each rank measures rank 0's clock
 * against its own (Cristian's algorithm, best of several round trips);
 * global time = m * local + b through the two points.  A rank that never
 * reached MPI_Finalize has fini_* = 0: readers use the offset alone. */
struct ppw_rec_mpi {
    uint32_t rank, size;          /* in MPI_COMM_WORLD */
    uint64_t init_local_ns;       /* CLOCK_MONOTONIC here ... */
    uint64_t init_master_ns;      /* ... and rank 0's estimate of the same instant */
    uint64_t fini_local_ns, fini_master_ns; /* 0 until MPI_Finalize */
    uint64_t job_id;              /* the same in every rank of the job (rank 0's pid and start) */
};

struct ppw_rec_finish {
    uint64_t end_ns;
    uint64_t threads; /* threads ever created, main included */
};

enum ppw_stack_flag {
    PPW_STACK_TRUNCATED = 1u << 0, /* deeper than max_frames: the outermost frames are missing */
    PPW_STACK_LEAF_PC = 1u << 1,   /* frames[0] is the interrupted PC itself, not a return address */
    PPW_STACK_UNWALKED = 1u << 2,  /* not walked: the interrupted PC alone (the thread was in the
                                      dynamic linker's symbol lookup, where a walk is unsafe) */
};

/* Per samples file, stack ids start at 1 and each STACK record precedes the
 * first SAMPLE that names it.  frames[0] is innermost. */
struct ppw_rec_stack {
    uint32_t id;
    uint16_t nframes;
    uint16_t flags; /* enum ppw_stack_flag */
};

struct ppw_rec_sample {
    uint32_t stack;     /* stack id */
    uint32_t spawn_tag; /* the spawn context current when the sample was taken; 0: thread root */
    uint64_t time_ns;   /* CLOCK_MONOTONIC */
    uint64_t weight;    /* metric units this sample stands for (its period) */
};

/* A block of samples and the stacks they name (1.6): 12 bytes a sample
 * instead of a 32-byte SAMPLE record.  The writer commits the record empty
 * and then fills it in place: entries are valid up to `used` bytes, and
 * each is published by the store of `used` that covers it, so a crash
 * loses no entry written before it.  Its bytes change after the record is
 * committed, so its file's CHECKSUM records cover it only once it is full
 * (or closed): until then it is part of the unchecked tail.
 *
 * Entries are made of 32-bit words, 4-byte aligned, none split across
 * blocks; the first word's top two bits give the kind
 * (PPW_BLOCK_KIND_SHIFT), its low 30 bits a stack id unless said: */
struct ppw_rec_block {
    uint32_t used;     /* bytes of entries written, after this header */
    uint32_t capacity; /* bytes of entries the record has room for */
    uint64_t base_ns;  /* CLOCK_MONOTONIC time the first sample's delta counts from */
};

enum ppw_block_entry {
    /* stack id; u32 weight; u32 ns since the previous sample (the first:
     * since base_ns).  12 bytes. */
    PPW_BLOCK_SAMPLE = 0,
    /* stack id; u64 weight; u64 time_ns (absolute), for a weight or a
     * delta that does not fit 32 bits.  20 bytes. */
    PPW_BLOCK_SAMPLE_WIDE = 1,
    /* stack id; u16 nframes, u16 flags (enum ppw_stack_flag); u64
     * frames[nframes].  8 + 8 x nframes bytes. */
    PPW_BLOCK_STACK = 2,
    /* low 30 bits 0; u32 spawn tag of the samples that follow (a block
     * starts at tag 0).  8 bytes. */
    PPW_BLOCK_SPAWN = 3,
};
#define PPW_BLOCK_KIND_SHIFT 30
#define PPW_BLOCK_ID_MASK ((1u << PPW_BLOCK_KIND_SHIFT) - 1)

/* libppw's function that a parallel region's fork runs through when
 * libppw, not OMPT, records regions (runtime/omp_fork.c): in a stack, it
 * stands for the program's call of __kmpc_fork_call, as libppw's
 * pthread_create stands for the program's. */
#define PPW_FORK_WRAPPER_FUNCTION "ppw_fork_hooked"
/* ... and the prefix of those that run the region's body on each team
 * thread (ppw_fork_body, ppw_fork_body_args), between the OpenMP
 * runtime's frames: ppw-blame leaves both out of the stacks it shows. */
#define PPW_FORK_BODY_FUNCTION "ppw_fork_body"

enum ppw_spawn_kind {
    PPW_SPAWN_PTHREAD = 1,
    PPW_SPAWN_OMP_PARALLEL = 2,
    PPW_SPAWN_OMP_TASK = 3,
};

/* A unique spawn context: written once, by the creating thread, the first
 * time a (parent_tag, kind, stack) triple is seen anywhere in the process.
 * frames are the creator's stack at the spawn, innermost first, with the
 * leading frames of ppw and of the parallel runtime (the spawn call's
 * internals) removed.  When the creator itself runs in a spawned context
 * (parent_tag != 0), the stack also stops before the next runtime frame:
 * what lies beneath belongs to the scheduler or to other suspended tasks,
 * and the creator's own context continues through parent_tag.  Readers
 * glue a sample the same way: its frames up to the first runtime frame,
 * then the spawn chain.  Tags are process-wide and start at 1. */
struct ppw_rec_spawn {
    uint32_t tag;
    uint32_t parent_tag; /* the creator's own spawn context (chains nested spawns); 0: root */
    uint32_t kind;       /* enum ppw_spawn_kind */
    uint32_t creator;    /* creating thread's index */
    uint16_t nframes;
    uint16_t flags;      /* enum ppw_stack_flag */
    uint32_t reserved;
};

/* Trace mode: OpenMP work as it is handed out.  Each parallel region and
 * explicit task gets a process-wide instance id; the encountering thread
 * records its spawn, and every thread that runs it records when it begins
 * and ends (an implicit task's life; each stretch an explicit task runs,
 * from being scheduled in to being switched out or completing). */
enum ppw_omp_event {
    PPW_OMP_SPAWN_PARALLEL = 1, /* encountering thread: a parallel region opens */
    PPW_OMP_SPAWN_TASK = 2,     /* encountering thread: an explicit task is created */
    PPW_OMP_BEGIN = 3,          /* executing thread: an implicit task begins, a task is scheduled in */
    PPW_OMP_END = 4,            /* executing thread: it ends, or the task is switched out */
};

struct ppw_rec_omp {
    uint64_t time_ns;
    uint32_t instance; /* the parallel region's or task's id, from 1 */
    uint32_t tag;      /* its spawn context (PPW_EVT_SPAWN, perhaps in another thread's file) */
    uint32_t event;    /* enum ppw_omp_event */
    uint32_t reserved;
};

/* Trace mode: one record per GASP event. */
struct ppw_rec_trace {
    uint64_t time_ns;
    uint32_t region;  /* region id (run.ppw) */
    uint16_t evttype; /* GASP_START, GASP_END, GASP_ATOMIC */
    uint16_t nargs;   /* 64-bit arguments that follow; a user event's formatted
                         description follows them as a string when nargs has
                         bit 15 set (the count is then nargs & 0x7fff) */
};

/* Profile files: the header, then `committed / slot_size` slots of
 * slot_size bytes.  A slot starts with its kind; readers skip unknown kinds
 * and use slot_size, not sizeof, to step. */
#define PPW_CALLPATH_MAX 10

enum ppw_slot_kind {
    PPW_SLOT_TIMER = 1,    /* struct ppw_rec_timer */
    PPW_SLOT_THROTTLE = 2, /* struct ppw_rec_throttle */
    PPW_SLOT_PROBE = 3,    /* struct ppw_rec_probe (since 1.2) */
};

enum ppw_timer_flag {
    PPW_TIMER_OPEN = 1u << 0,    /* a call was still running when the file was last written */
    PPW_TIMER_UNWOUND = 1u << 1, /* some calls were closed by an outer END (longjmp, a missing
                                    END): their times end there */
};

/* Statistics of one region in one callpath on one thread.  path[0] is the
 * region, path[1] its caller region, and so on, `depth` entries. */
struct ppw_rec_timer {
    uint32_t slot_kind; /* PPW_SLOT_TIMER */
    uint32_t depth;
    uint32_t path[PPW_CALLPATH_MAX];
    uint64_t count;       /* completed calls */
    uint64_t subcalls;    /* completed calls of child regions made by these calls */
    uint64_t incl_min_ns, incl_max_ns, incl_sum_ns;
    uint64_t excl_sum_ns;
    double excl_sumsq_ns2; /* sum of squared exclusive times, for the deviation */
    uint64_t probes_inner; /* recorded probe pairs of descendants inside these calls */
    uint64_t probes_throttled; /* throttled probe pairs of descendants inside these calls */
    uint64_t probes_child; /* recorded probe pairs of direct children */
    uint64_t throttled_child; /* throttled probe pairs of direct children */
    uint32_t flags;       /* enum ppw_timer_flag */
    uint32_t reserved;
    uint64_t bytes; /* since 1.2: data these calls moved (MPI: count x datatype size; a
                       receive counts its buffer, a sendrecv both directions); 0 else */
};

/* A region this thread stopped recording (PPW-style throttling). */
struct ppw_rec_throttle {
    uint32_t slot_kind; /* PPW_SLOT_THROTTLE */
    uint32_t region;
    uint64_t calls_before; /* recorded calls when throttling started */
    uint64_t mean_ns;      /* their mean inclusive time then */
    uint64_t calls_after;  /* calls made since, counted but not timed */
    /* Since 1.6 (zero before): gated call sites keep timing about one call
     * in sample_period after throttling, without counting the others;
     * they stand for sampled_calls * sample_period calls. */
    uint64_t sample_period;
    uint64_t sampled_calls; /* calls timed so */
    uint64_t sampled_ns;    /* their inclusive time */
};

/* Probe windows of one thread: about one GASP event in window_period is
 * timed from its entry point's first instruction to its last, so that
 * ppw-blame can correct the calibrated probe costs by what probes really
 * cost in the run (docs/runtime.md, "In-situ probe cost").  At most one
 * per profile file, updated in place.  Sums in ns. */
struct ppw_rec_probe {
    uint32_t slot_kind; /* PPW_SLOT_PROBE */
    uint32_t window_period;
    uint64_t start_count, start_ns; /* timed STARTs (a call pushed) */
    uint64_t start_tail_ns;         /* their part after their clock read */
    uint64_t end_count, end_ns;     /* timed ENDs (a call closed) */
    uint64_t end_head_ns;           /* their part before their clock read */
    uint64_t throttled_count, throttled_ns; /* STARTs and ENDs of throttled regions */
    uint64_t interrupted;           /* windows left out: longer than PPW_PROBE_WINDOW_MAX_NS */
    uint64_t clock_ns; /* the kept windows' clock gaps: a window starts with two clock reads
                          back to back, whose difference is what one read costs just then */
};
#define PPW_PROBE_WINDOW_MAX_NS 10000 /* a window this long was preempted or signalled */

#define PPW_PROFILE_SLOT_SIZE 160

_Static_assert(sizeof(struct ppw_file_header) == PPW_RUN_HEADER_SIZE, "header size");
_Static_assert(sizeof(struct ppw_rec_timer) <= PPW_PROFILE_SLOT_SIZE, "timer slot");
_Static_assert(sizeof(struct ppw_rec_throttle) <= PPW_PROFILE_SLOT_SIZE, "throttle slot");
_Static_assert(sizeof(struct ppw_rec_probe) == 88, "probe slot");
_Static_assert(sizeof(struct ppw_rec_calib) == 96, "calibration record");
_Static_assert(sizeof(struct ppw_rec_stack) == 8, "stack record");
_Static_assert(sizeof(struct ppw_rec_sample) == 24, "sample record");
_Static_assert(sizeof(struct ppw_rec_spawn) == 24, "spawn record");
_Static_assert(sizeof(struct ppw_rec_omp) == 24, "omp record");
_Static_assert(sizeof(struct ppw_rec_thread_end) == 48, "thread end record");
_Static_assert(sizeof(struct ppw_rec_trace) == 16, "trace record");
_Static_assert(sizeof(struct ppw_rec_module) == 64, "module record");
_Static_assert(sizeof(struct ppw_rec_mpi) == 48, "mpi record");
_Static_assert(sizeof(struct ppw_rec_checksum) == 16, "checksum record");
_Static_assert(sizeof(struct ppw_rec_block) == 16, "block record");

#endif

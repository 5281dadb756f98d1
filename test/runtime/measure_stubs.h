/* Stand-ins for the parts of libppw that measure.c, regions.c and gasp.c
 * call (thread.h, runfile.h, stream.h, lifecycle.h, sampler.h, config.h),
 * with knobs and captures for test_measure.c. */
#ifndef PPW_TEST_MEASURE_STUBS_H
#define PPW_TEST_MEASURE_STUBS_H

#include <stdint.h>

struct ppw_thread;

/* ppw_thread_self() */
extern __thread struct ppw_thread *stub_self;
/* ppw_lifecycle_ensure(): calls so far; when stub_ensure_sets is set, it
 * makes stub_ensure_sets the calling thread's state. */
extern int stub_ensure_calls;
extern struct ppw_thread *stub_ensure_sets;
/* ppw_lifecycle_off()'s answer. */
extern int stub_lifecycle_off;
/* ppw_output_dirfd() */
extern int stub_dirfd;
/* ppw_now_ns(): stub_clock while stub_fake_clock (advanced by
 * stub_clock_step at every read), else CLOCK_MONOTONIC. */
extern int stub_fake_clock;
extern uint64_t stub_clock, stub_clock_step;
/* ppw_file_reserve(): fails with -ENOSPC once this many calls succeeded
 * (-1: never). */
extern int stub_reserve_budget;

/* ppw_runfile_append() and ppw_runfile_note() captures, cumulative. */
struct stub_record {
    uint32_t kind;
    uint32_t fixed_size;
    _Alignas(8) uint8_t fixed[128];
    int nstrings;
    char strings[2][256];
};
#define STUB_MAX_RECORDS 4096
#define STUB_MAX_NOTES 256
extern struct stub_record stub_records[STUB_MAX_RECORDS];
extern int stub_nrecords;
extern char stub_notes[STUB_MAX_NOTES][512];
extern int stub_nnotes;

/* ppw_thread_events(): streams are memory buffers of this size. */
#define STUB_STREAM_SIZE (1u << 20)

#endif

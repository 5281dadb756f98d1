/* Test-only writer of run directories (docs/FORMATS.md, "Run directory";
 * include/ppw/run_format.h), so tests can build valid runs and then break
 * them on purpose.
 *
 * The sample run's stacks point into the test program itself (its main and
 * the run_fixture_* functions below) and into libc (__libc_start_main,
 * clone), with the modules' real load bias, range and build-id, so that
 * symbolization reads real symbol tables.  Little-endian hosts only: the
 * format's structs are copied as they are. */
#ifndef PPW_TEST_RUN_WRITER_H
#define PPW_TEST_RUN_WRITER_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "chunk_writer.h" /* struct bytes */
#include "ppw/run_format.h"

/* One file: header and records (or slots). */
struct run_file {
    struct bytes b; /* empty: the file is not written */
};

void rf_init(struct run_file *f, uint32_t kind, uint32_t thread, uint32_t pid,
             const uint8_t *build_id, uint32_t build_id_size);
void rf_free(struct run_file *f);

/* The header, to edit (valid until the next append). */
struct ppw_file_header *rf_header(struct run_file *f);

/* Appends a record: frame, fixed part, extra bytes (frames, args), then
 * the strings of the NULL-terminated list strings (may be NULL), zero-padded
 * to a multiple of 8.  Returns the record's file offset. */
size_t rf_record(struct run_file *f, uint32_t kind, const void *fixed, size_t fixed_size,
                 const void *extra, size_t extra_size, const char *const *strings);

/* A BLOCK record's entries (run format 1.6), built up before rf_block. */
struct rf_block_entries {
    uint8_t bytes[2048];
    uint32_t used;
    uint64_t last_ns; /* the last sample's time (base_ns before the first) */
    uint32_t spawn;   /* the spawn tag the samples have now */
};
void rf_block_begin(struct rf_block_entries *e, uint64_t base_ns);
void rf_block_stack(struct rf_block_entries *e, uint32_t id, uint16_t flags,
                    const uint64_t *frames, uint16_t n);
/* A sample entry (after a SPAWN entry when tag changed; wide when the
 * weight or the delta needs 64 bits). */
void rf_block_sample(struct rf_block_entries *e, uint32_t stack, uint32_t tag, uint64_t time_ns,
                     uint64_t weight);
/* Appends the BLOCK record: its header says `used` bytes of entries
 * (normally e->used) in room for `capacity` (at least e->used). */
size_t rf_block(struct run_file *f, const struct rf_block_entries *e, uint64_t base_ns,
                uint32_t used, uint32_t capacity);

/* Appends a profile slot, zero-padded to the header's slot_size. */
size_t rf_slot(struct run_file *f, const void *slot, size_t size);

/* Sets committed to all the bytes after the header. */
void rf_finish(struct run_file *f);

/* Appends a CHECKSUM record (run format 1.5); its values are filled in
 * when the file is written (run_file_reseal). */
void rf_checksum(struct run_file *f);

/* Makes a file's checksums right for its bytes, as libppw would have
 * written them: every CHECKSUM record covers the bytes since the previous
 * one, and a profile file with PPW_FILE_SEALED has its slots' CRC32C in
 * the header.  Frames are followed while they stay inside the committed
 * bytes; nothing else changes. */
void run_file_reseal(unsigned char *data, size_t len);

/* Writes dir/name, resealed (run_file_reseal); returns 0 or -1 with a
 * message on stderr. */
int rf_write(const struct run_file *f, const char *dir, const char *name);

/* The module holding addr in this process: path, bias, range, build-id. */
struct run_image {
    char path[4096];
    uint64_t bias, lo, hi;
    uint8_t build_id[PPW_BUILD_ID_MAX];
    uint32_t build_id_size;
};

/* Returns 0, or -1 when no loaded module holds addr. */
int run_image_of(const void *addr, struct run_image *img);

/* Appends a MODULE record for img (an UNMODULE when kind says so: its path
 * is left empty). */
void rf_module(struct run_file *f, uint32_t kind, const struct run_image *img, uint32_t flags);

/* Functions the sample stacks run through (noinline, distinct bodies). */
int run_fixture_leaf(int x);
int run_fixture_compute(int x);
int run_fixture_spawn(int x);
void *run_fixture_worker(void *arg);

/* Addresses the sample run uses: where each frame points. */
struct sample_addrs {
    uint64_t leaf, compute, spawn, worker, main, libc_start_main, clone;
};

/* The sample run (see sample_run_build for its contents): every file in
 * memory, to edit before sample_run_write. */
struct sample_run {
    struct run_file run;
    struct run_file samples[2], events[2], profile[2]; /* by thread index */
    struct run_image exe, libc;
    struct sample_addrs at;
    uint32_t pid;
    bool blocks; /* SAMPLE_RUN_BLOCKS */
};

/* Where the sample run's parallel runtime (a made-up libomp) is mapped. */
#define SAMPLE_OMP_LO 0x7e0000010000ull

enum sample_run_flag {
    SAMPLE_RUN_CRASHED = 1u << 0, /* no FINISH, thread 1 never ended, main's timer open */
    SAMPLE_RUN_BLOCKS = 1u << 1,  /* samples and stacks in BLOCK records (1.6), same content */
};

/* Builds the sample run; returns 0, or -1 when its modules cannot be found.
 *
 * Threads 0 (main) and 1 (created by 0 with spawn tag 1, start routine
 * run_fixture_worker).  Spawns: 1 pthread (parent 0, by thread 0); 2 omp
 * parallel (parent 1, by 1); 3 omp task (parent 2, by 1); 4 pthread
 * (parent 0, by 1: continues with thread 1's root tag 1).  Thread 1 ends
 * "at exit".  Modules: this program, libc, a made-up libomp (flagged
 * parallel; two of thread 1's samples run above it) and an unloaded
 * library.  Regions: 1 main, 2 work (functions), 3 malloc (call site),
 * 4 phase (user event).
 * Calibration: pair 100 ns, inner 30 ns, throttled pair 10 ns; the timers
 * and their compensated totals are listed in run_writer.c. */
int sample_run_build(struct sample_run *sr, unsigned flags);

/* Creates dir if needed and writes every non-empty file into it. */
int sample_run_write(const struct sample_run *sr, const char *dir);

void sample_run_free(struct sample_run *sr);

#endif

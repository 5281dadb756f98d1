/* Internal to the run-directory reader (read_run.c maps files and checks
 * headers and record framing; read_run_records.c decodes the records).
 * Other modules include read_run.h only. */
#ifndef PPW_BLAME_READ_RUN_INT_H
#define PPW_BLAME_READ_RUN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "read_run.h"

enum { KIND_SLOTS = 64 }; /* record kinds counted in the first pass */

/* A field of a format struct, decoded little-endian from a record body.  The
 * array size turns a width mismatch between the struct and the macro into a
 * compile error. */
#define WIDTH_IS(T, f, n) (0 * sizeof(char[sizeof(((T *)0)->f) == (n) ? 1 : -1]))
#define F16(b, T, f) (get_u16((b) + offsetof(T, f)) + WIDTH_IS(T, f, 2))
#define F32(b, T, f) (get_u32((b) + offsetof(T, f)) + WIDTH_IS(T, f, 4))
#define F64(b, T, f) (get_u64((b) + offsetof(T, f)) + WIDTH_IS(T, f, 8))
#define FDBL(b, T, f) (get_f64((b) + offsetof(T, f)) + WIDTH_IS(T, f, 8))

#define CORRUPT(l, pos, ...) PPW_CORRUPT((l)->err, (l)->file->path, (pos), __VA_ARGS__)

/* One mapped file. */
struct rfile {
    char *path;               /* dir/name, for messages */
    uint32_t kind, thread;    /* expected, from the name */
    const unsigned char *map; /* [0, end) */
    size_t map_size, header_size, end;
    struct ppw_run_file info;
    uint32_t pid, build_id_size, thread_field;
    unsigned char build_id[PPW_BUILD_ID_MAX];
    uint64_t dropped[PPW_DROP_REASONS], slot_size, handler_ns;
    uint64_t reserved; /* the header's last word: a sealed profile file's CRC32C, a samples
                          file's ring losses (1.7) */
    size_t counts[KIND_SLOTS];
    size_t released; /* pages below this offset were handed back (MADV_DONTNEED) */
};

/* Hands back the mapped pages below pos once enough are behind it: readers
 * copy what they keep, so a big samples file does not stay resident. */
void ppw_run_release_pages(struct rfile *f, size_t pos);

/* A record of a mapped file: body is [pos + 8, pos + size). */
struct rec {
    uint32_t kind;
    size_t pos, size;
    const unsigned char *body;
    size_t body_size;
};

/* A per-thread file found in the directory. */
struct entry {
    uint32_t thread, kind;
};

struct loader {
    struct ppw_run *run;
    struct ppw_err *err;
    struct rfile *file;    /* the file being read */
    struct rfile run_file; /* run.ppw: pid and build-id every file must carry */
    struct entry *entries;
    size_t entry_count, entry_cap;
    struct ppw_run_spawn *spawns; /* from every events file, in file order */
    size_t spawn_count, spawn_cap;
    size_t module_count, region_count, note_count, argv_seen, env_seen;
    bool merge_samples; /* ppw_run_load_merged */
};

/* ---- primitive reads ---- */

static inline uint16_t get_u16(const unsigned char *b)
{
    return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t get_u32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline uint64_t get_u64(const unsigned char *b)
{
    return (uint64_t)get_u32(b) | (uint64_t)get_u32(b + 4) << 32;
}

static inline double get_f64(const unsigned char *b)
{
    uint64_t bits = get_u64(b);
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* ---- read_run.c ---- */

int ppw_run_no_memory(struct loader *l);

/* Lowercase hex of size bytes into out (2 * size + 1 bytes). */
void ppw_run_hex(const unsigned char *bytes, size_t size, char *out);

/* Opens dir/name, checks its header (expected kind and thread index) and
 * maps header_size + committed bytes; sets l->file to f. */
int ppw_run_open_file(struct loader *l, struct rfile *f, const char *name, uint32_t kind,
                      uint32_t thread);

void ppw_run_close_file(struct rfile *f);

/* ppw_run_find_thread, for the reader that fills the thread in. */
struct ppw_run_thread *ppw_run_thread_slot(struct ppw_run *run, uint32_t index);

/* The record at *pos of f, whose framing is checked; advances *pos. */
int ppw_run_next_record(struct loader *l, const struct rfile *f, size_t *pos, struct rec *r);

/* First pass: checks the framing of every record and counts them by kind
 * into f->counts. */
int ppw_run_count_records(struct loader *l, struct rfile *f);

/* Second pass: calls visit for every record, stopping at the first error. */
int ppw_run_each_record(struct loader *l, struct rfile *f,
                        int (*visit)(struct loader *l, const struct rec *r, void *ctx), void *ctx);

/* ---- read_run_records.c ---- */

/* run.ppw: fills the process-level parts of l->run and creates its threads
 * (one per THREAD record or t<N> file in l->entries). */
int ppw_run_read_run_file(struct loader *l);

/* A thread's files, opened and mapped; spawns go to l->spawns. */
int ppw_run_read_samples(struct loader *l, struct rfile *f, struct ppw_run_thread *t);
int ppw_run_read_events(struct loader *l, struct rfile *f, struct ppw_run_thread *t);
int ppw_run_read_profile(struct loader *l, struct rfile *f, struct ppw_run_thread *t);

#endif

/* Test-only encoder of .ppw.blame chunks (docs/FORMATS.md section 1), so
 * tests can build valid graphs and then break them on purpose. */
#ifndef PPW_TEST_CHUNK_WRITER_H
#define PPW_TEST_CHUNK_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct bytes {
    unsigned char *data;
    size_t len, cap;
};

void bytes_put(struct bytes *b, const void *data, size_t len);
void bytes_zeros(struct bytes *b, size_t len);
void bytes_free(struct bytes *b);

struct chunk_writer {
    struct bytes strtab;  /* starts with the NUL of offset 0 */
    struct bytes records; /* every record after STRTAB */
    struct bytes current; /* payload of the record being written */
    uint32_t current_kind;
    uint32_t record_count;
    uint16_t major, minor; /* default 1.0 */
    const char *source;    /* feeds unit_id */
};

void cw_init(struct chunk_writer *cw, const char *source);
void cw_free(struct chunk_writer *cw);

void cw_begin(struct chunk_writer *cw, uint32_t kind);
void cw_u(struct chunk_writer *cw, uint64_t value);
void cw_s(struct chunk_writer *cw, int64_t value);
void cw_str(struct chunk_writer *cw, const char *s);
void cw_raw(struct chunk_writer *cw, const void *data, size_t len);
void cw_end(struct chunk_writer *cw);

/* Offset, from the chunk start, of the next byte the current record will
 * get; valid only once no more strings are added (cw_str may grow STRTAB). */
size_t cw_mark(const struct chunk_writer *cw);
size_t cw_chunk_offset(const struct chunk_writer *cw, size_t mark);

/* Appends the finished chunk (header, STRTAB, records) to out. */
void cw_finish(const struct chunk_writer *cw, struct bytes *out);

/* Recomputes payload_hash of the chunk starting at chunk after a test edited
 * its bytes; first sets chunk_size to size when size is not 0. */
void chunk_rehash(unsigned char *chunk, uint32_t size);

/* Convenience record writers. */
struct tloc {
    const char *file;
    uint32_t line, col;
};

struct tvar {
    const char *name;
    uint32_t kind;
    const char *type, *decl_file;
    uint32_t decl_line;
    uint64_t parent;      /* 0 or 1 + id */
    uint64_t param_index; /* 0 or 1 + IR parameter number */
    uint32_t flags;
    const char *key;
    const struct tloc *inclusive;
    size_t inclusive_count;
    const struct tloc *exclusive;
    size_t exclusive_count;
};

struct tbinding {
    uint64_t var; /* 0 or 1 + id */
    int64_t formal;
    uint32_t mode;
    const char *path;
};

/* One (location, variable) of an ACCESS record; consecutive entries at the
 * same location are written as one location. */
struct taccess {
    const char *file;
    uint32_t line, col;
    uint64_t var; /* index into the FUNC's vars */
    uint32_t reads, writes;
};

void cw_unit(struct chunk_writer *cw, const char *source, const char *comp_dir,
             const char *producer, uint32_t analysed, uint32_t skipped);
void cw_func(struct chunk_writer *cw, const char *name, const char *linkage, const char *file,
             uint32_t line, uint32_t flags, const char *parent, uint64_t nvars, uint64_t ncalls);
void cw_var(struct chunk_writer *cw, uint32_t id, const struct tvar *var);
void cw_call(struct chunk_writer *cw, uint32_t id, uint32_t line, uint32_t col, const char *callee,
             uint32_t kind, const struct tbinding *bindings, size_t count);
void cw_global(struct chunk_writer *cw, const char *name, const char *key, const char *type,
               const char *file, uint32_t line);
/* The current FUNC's ACCESS record (format 1.1). */
void cw_access(struct chunk_writer *cw, const struct taccess *entries, size_t count);

#endif
